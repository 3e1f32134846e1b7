--- The blocking driver: the C core's own hiredis fan-out (one connection per
-- master, commands written to all masters at once, one poll() loop). It
-- blocks the calling Lua state for at most the caller's timeout plus two
-- per-master timeouts, which is right for plain Lua and wrong inside an
-- nginx worker (OpenResty gets a cosocket driver over the core's sans-I/O
-- protocol instead; see lock:begin()/step() in docs/LUA-API.md).
--
-- A driver is the facade's only way to the network. Its contract:
--   acquire(client_handle, name, opts) -> lock_handle | nil, err
--   release(lock_handle)               -> true | nil, err
--   extend(lock_handle, ttl)           -> true | nil, err
--   inspect(client_handle, name)       -> inspection | nil, err
-- Handles are hiredlock.core userdata; wrong arguments raise from the
-- handles' methods with the user's function and argument named by the C
-- entry point itself, runtime failures return nil, err.
local M = {}

function M.acquire(client, name, opts)
  return client:acquire(name, opts)
end

function M.release(lock)
  return lock:release()
end

function M.extend(lock, ttl)
  return lock:extend(ttl)
end

function M.inspect(client, name)
  return client:inspect(name)
end

return M
