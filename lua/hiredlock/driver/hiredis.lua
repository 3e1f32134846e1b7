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
-- Handles are hiredlock.core userdata; wrong arguments raise from the
-- handles' methods (luaL_argerror), runtime failures return nil, err.
-- The handles' methods are called as methods and not as tail calls, so
-- the argument numbers in those errors stay those of the user's own call on
-- every VM (LuaJIT names neither the method nor `self` after a tail call).
local M = {}

function M.acquire(client, name, opts)
  local lock, err = client:acquire(name, opts)
  return lock, err
end

function M.release(lock)
  local ok, err = lock:release()
  return ok, err
end

function M.extend(lock, ttl)
  local ok, err = lock:extend(ttl)
  return ok, err
end

return M
