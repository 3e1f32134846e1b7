--- The OpenResty driver: every byte goes through ngx.socket.tcp cosockets,
-- every wait through ngx.semaphore or ngx.sleep, so a lock never blocks an
-- nginx worker. What to send, what a reply means, quorum, validity, drift,
-- cleanup, the waiting queue and when to try again are the C core's (the
-- sans-I/O protocol of hiredlock.core, see docs/LUA-API.md); this file only
-- opens connections, moves bytes and waits. The waiting side (one
-- subscriber per worker and master, whatever the number of clients,
-- requests parked on semaphores) is hiredlock/driver/listener.lua; a
-- waiting acquire sends its first try after the one its worker has out for
-- the name, if any (hiredlock/driver/first_try.lua: a stampede's winner
-- hears its reply before the worker runs everyone else's try).
--
-- The contract is the one of hiredlock/driver/hiredis.lua:
--   acquire(client_handle, name, opts) -> lock_handle | nil, err
--   release(lock_handle)               -> true | nil, err
--   extend(lock_handle, ttl)           -> true | nil, err
--   inspect(client_handle, name)       -> inspection | nil, err
--
-- A round goes to all N masters at once; the rounds and the loop that
-- steps an operation through them are hiredlock/driver/cosocket_round.lua's
-- (connections, handshakes, keepalive pools, late replies, redirects);
-- targets, pools, TLS and the reads and writes against a deadline are
-- hiredlock/driver/cosocket_conn.lua's. Managed leases (auto_renew) are
-- renewed by one ngx.timer per worker and client:
-- hiredlock/driver/cosocket_leases.lua.
--
-- Cosockets exist in the rewrite, access and content phases and in timers
-- (and the SSL certificate/session phases); elsewhere (init, init_worker,
-- set, header and body filters, log, balancer) the operations return
-- nil, "cosockets unavailable in the <phase> phase ..." at once instead of
-- blocking the worker. Where cosockets exist, argument errors raise as with
-- the hiredis driver, with the documented messages.
local listener = require "hiredlock.driver.listener"
local conn = require "hiredlock.driver.cosocket_conn"
local first_try = require "hiredlock.driver.first_try"
local round = require "hiredlock.driver.cosocket_round"
local leases = require "hiredlock.driver.cosocket_leases"

local ngx = assert(rawget(_G, "ngx"),
  "hiredlock.driver.cosocket runs under ngx_lua (OpenResty) only")
local get_phase = ngx.get_phase

local tostring = tostring
local targets_of = conn.targets_of
local run, watch = round.run, leases.watch

local M = {
  --- Per worker, since it started: connections opened (new), taken from
  -- a keepalive pool (reused) and taken up again by the lock whose late
  -- reply they owed (kept), and rounds run; renewals run and renewer
  -- timers running now (one per client with held leases). For tests and
  -- monitoring. One table, counted where these happen
  -- (hiredlock/driver/cosocket_round.lua and cosocket_leases.lua).
  stats = round.stats,
}

-- Where ngx.socket.tcp, ngx.sleep and ngx.thread work (ngx_lua's contexts).
local COSOCKET_PHASES = {
  rewrite = true,
  server_rewrite = true,
  access = true,
  content = true,
  timer = true,
  ssl_cert = true,
  ssl_session_fetch = true,
  ssl_client_hello = true,
  preread = true, -- ngx_stream_lua
}

local function phase_error()
  local phase = get_phase()
  if COSOCKET_PHASES[phase] then
    return nil
  end
  return ("cosockets unavailable in the %s phase (lock from rewrite, access, "
    .. "content or an ngx.timer)"):format(tostring(phase))
end

-- The phase comes first: where no cosocket can run, that is the one thing
-- to fix, and no operation is left begun on the handle.
function M.acquire(client, name, opts)
  local perr = phase_error()
  if perr then
    return nil, perr
  end
  -- Its waits hear on the worker's subscribers, whatever client it is.
  listener.adopt(client)
  -- Argument errors raise from here with acquire's words (see proto.c).
  local lock, timeout = client:lock(name, opts)
  local begun, err = lock:begin("acquire", timeout)
  if not begun then
    return nil, err
  end
  -- A waiting acquire of a plain lock sends its first try after the one
  -- this worker has out for the name, if any (hiredlock/driver/first_try).
  local flight
  local mode = opts and opts.mode
  if timeout > 0 and (mode == nil or mode == "lock") then
    flight = first_try.enter(name, targets_of(client), timeout)
  end
  local acquired, aerr = run(client, lock, flight)
  if not acquired then
    return nil, aerr
  end
  watch(client, lock)
  return lock
end

function M.release(lock)
  local perr = phase_error()
  if perr then
    return nil, perr
  end
  local ok, err = lock:begin("release")
  if not ok then
    return nil, err
  end
  local client = lock:client()
  leases.released(client, lock) -- its renewer may have nothing left to do
  return run(client, lock)
end

function M.extend(lock, ttl)
  local perr = phase_error()
  if perr then
    return nil, perr
  end
  local ok, err = lock:begin("extend", ttl) -- errors name 'extend' #1
  if not ok then
    return nil, err
  end
  return run(lock:client(), lock)
end

function M.inspect(client, name)
  local perr = phase_error()
  if perr then
    return nil, perr
  end
  local lock = client:lock(name) -- errors name 'acquire': see LUA-API.md
  local ok, err = lock:begin("inspect")
  if not ok then
    return nil, err
  end
  run(client, lock)
  return lock:inspection()
end

return M
