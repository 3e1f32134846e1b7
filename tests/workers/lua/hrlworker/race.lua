-- race and release: one racer of reliability case 6, the twin of
-- hrlworker/race.py (the protocol is described there).
local core = require "hiredlock.core"
local system = require "system"

local function now_ns()
  return math.floor(core.now() * 1e9)
end

local Racer = {}
Racer.__index = Racer

function Racer.new()
  return setmetatable({}, Racer)
end

function Racer:race(client, opts)
  local at = tonumber(opts.at) / 1e9 -- everyone starts at this monotonic instant
  local left = at - core.now() - 0.002
  if left > 0 then
    system.sleep(left)
  end
  while core.now() < at do
  end
  local phase = opts.phase
  local t0 = now_ns()
  local lock, err = client:acquire(opts.name, { ttl = 5,
    timeout = phase == "A" and 0 or 10 })
  local t1 = now_ns()
  if not lock then
    return { won = false, t0 = t0, t1 = t1, err = (err:gsub(":.*", "")) }
  end
  if phase == "B" then
    system.sleep(0.02)
    assert(lock:release())
  else
    self.held = lock
  end
  return { won = true, t0 = t0, t1 = t1, token = lock.token }
end

function Racer:release()
  local lock = self.held
  self.held = nil
  assert(lock:release())
  return { released = true }
end

return Racer
