--- The cosocket driver's managed leases (auto_renew), for
-- hiredlock/driver/cosocket.lua: renewed by one ngx.timer per worker and
-- client, not one per lock. Cosockets cannot cross from a timer to a
-- request, so the timer runs each renewal's round with cosockets of its
-- own (the run of hiredlock/driver/cosocket_round.lua), driving the same
-- sans-I/O extend (on the lease's twin) as every driver. It sleeps on a
-- semaphore until the next due renewal (a new lease wakes it), and ends
-- when the client has no held lease left.
local core = require "hiredlock.core"
local events = require "hiredlock.events"
local round = require "hiredlock.driver.cosocket_round"

local ngx = assert(rawget(_G, "ngx"),
  "hiredlock.driver.cosocket_leases runs under ngx_lua (OpenResty) only")
local spawn, wait = ngx.thread.spawn, ngx.thread.wait
local sleep = ngx.sleep
local now = core.now
local pcall, setmetatable = pcall, setmetatable
local run, stats = round.run, round.stats

local M = {}

-- The renewer of a client keeps its leases weakly: a lease
-- collected unreleased is not renewed any more (its key expires with its
-- TTL), as everywhere.
local has_semaphore, semaphore = pcall(require, "ngx.semaphore")
local timer_at, worker_exiting = ngx.timer.at, ngx.worker.exiting
local log, ERR = ngx.log, ngx.ERR
local next, min, huge = next, math.min, math.huge

-- The longest sleep of a renewer: it looks whether the worker is exiting
-- this often (nginx waits for running timers when it shuts a worker down).
local MAX_SLEEP = 1
-- A renewal the protocol holds back (the holder's own call is out on the
-- lock) is looked at again after this many seconds.
local HELD_BACK = 0.01

local renewers = setmetatable({}, { __mode = "k" }) -- client handle -> state

local function renew(client, lock)
  local what, twin = lock:renew_begin()
  if what == "round" then
    stats.renewals = stats.renewals + 1
    run(client, twin)
    lock:renew_end() -- the holder learns a loss from lock:lost() and co.
    events.deliver(client) -- the renewal's, to on_event or the log
  elseif what == "wait" then
    sleep(HELD_BACK)
  end
end

-- The leases due at t (a list, or nil) and the next due time after t.
-- No lease is left in a variable of the sleeping timer: a slot of its
-- frame would keep a dropped lease from being collected.
local function scan(r, t)
  local due, first = nil, huge
  local lock = next(r.leases)
  while lock ~= nil do
    local at = lock:renew_due()
    if not at then
      r.leases[lock] = nil -- released, lost or collected: done with it
    elseif at <= t then
      due = due or {}
      due[#due + 1] = lock
    elseif at < first then
      first = at
    end
    lock = next(r.leases, lock)
  end
  return due, first
end

-- One look at the client's leases, in a light thread of its own: renews
-- those due and returns how long to sleep (0: look again now), or nil when
-- no lease is left. Its stack, and every lease a slot of it still holds,
-- is garbage once it returns, so a lease dropped unreleased is collected
-- (and so no longer renewed) while the timer sleeps.
local function tick(client, r)
  local t = now()
  local due, first = scan(r, t)
  if due then
    for i = 1, #due do
      renew(client, due[i])
    end
    return 0
  end
  if next(r.leases) == nil then
    return nil
  end
  return first - t
end

-- The timer: renews what is due, sleeps until the next due renewal.
local function renewer(premature, client, r)
  while not premature and not worker_exiting() do
    local ok, delay = wait(spawn(tick, client, r))
    if not ok then -- never expected: log it, keep renewing the others
      log(ERR, "hiredlock: lease renewal failed: ", delay)
      delay = HELD_BACK
    end
    if delay == nil then
      break
    elseif delay > 0 and has_semaphore then
      r.sema:wait(min(delay, MAX_SLEEP))
    elseif delay > 0 then
      sleep(min(delay, 0.1))
    end
  end
  r.running = false
  stats.renewers = stats.renewers - 1
end

-- Puts a just acquired lease on its client's renewer, starting the timer
-- when none runs.
local function watch(client, lock)
  if not lock:renew_due() then
    return -- not a lease
  end
  local r = renewers[client]
  if not r then
    r = { leases = setmetatable({}, { __mode = "k" }), running = false,
      sema = has_semaphore and semaphore.new() or nil }
    renewers[client] = r
  end
  r.leases[lock] = true
  if r.running then
    if r.sema then
      r.sema:post(1) -- it may sleep past the newcomer's first renewal
    end
    return
  end
  local ok, err = timer_at(0, renewer, client, r)
  if not ok then
    log(ERR, "hiredlock: cannot start the lease renewer: ", err)
    return
  end
  r.running = true
  stats.renewers = stats.renewers + 1
end

M.watch = watch

-- A lease's release begins: its renewer may have nothing left to do.
function M.released(client, lock)
  local r = renewers[client]
  if r and r.leases[lock] and r.sema then
    r.sema:post(1)
  end
end

return M
