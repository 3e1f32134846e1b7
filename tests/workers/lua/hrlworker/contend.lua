-- contend: one of W processes taking turns on one name (the bench's
-- contention phase), as in hrlworker/contend.py:
--   contend name=NAME [hold_ms=2] [think_ms=2] [think_spread_ms=0]
--           [seed=N] [retry_delay=S] [retry_jitter=S]
-- answers {"ready":true}, reads "go END" on stdin, then until END
-- (CLOCK_BOOTTIME seconds, core.now()) acquires (blocking), holds hold_ms,
-- releases, thinks think_ms, again; answers every hold as
-- [acquire called, acquired, release called, released]. With
-- think_spread_ms each think is drawn uniformly from think_ms +- spread
-- (math.random seeded with seed), as in contend.py.
local hiredlock = require "hiredlock"
local core = require "hiredlock.core"
local system = require "system"
local wire = require "hrlworker.wire"

local now, sleep = core.now, system.sleep

return function(urls, opts)
  local name = opts.name
  local hold = (tonumber(opts.hold_ms) or 2) / 1000
  local think = (tonumber(opts.think_ms) or 2) / 1000
  local spread = (tonumber(opts.think_spread_ms) or 0) / 1000
  math.randomseed(tonumber(opts.seed) or 0)
  -- retry_delay, retry_jitter and the per-master deadlines the bench
  -- gives (contention.py DEADLINES: the main phase's, not the 50 ms default
  -- a loaded machine's stall can miss).
  local client = hiredlock.new(urls, wire.client_options(opts))
  -- Connect first, so every process starts on an equal footing.
  local warm = client:acquire(name, { ttl = 10, timeout = 5 })
  if warm then
    warm:release()
  end
  wire.out('{"ready":true}')
  local finish = tonumber(assert(io.stdin:read("*l")):match("^go (%S+)"))
  local holds, timeouts = {}, 0
  while true do
    local t0 = now()
    if t0 >= finish then
      break
    end
    local wait = finish - t0
    local lock, err = client:acquire(name, { ttl = 10,
      timeout = wait > 0.001 and wait or 0.001 })
    if not lock then
      if err ~= "timeout" then
        error(err)
      end
      timeouts = timeouts + 1
    else
      local t1 = now()
      sleep(hold)
      local t2 = now()
      assert(lock:release())
      holds[#holds + 1] = ("[%.6f,%.6f,%.6f,%.6f]"):format(t0, t1, t2, now())
      sleep(think + spread * (2 * math.random() - 1))
    end
  end
  return ('{"runtime":"%s","lib":"hiredlock","holds":[%s],"timeouts":%d}')
    :format(jit and "luajit" or _VERSION, table.concat(holds, ","), timeouts)
end
