-- contend: one of several processes taking turns on one name (the bench's
-- contention phase), as in hrlworker/contend.py:
--   contend name=NAME retry_delay=S retry_jitter=S
-- answers {"ready":true}, reads "go END" on stdin, then until END
-- (CLOCK_MONOTONIC seconds, core.now()) acquires (blocking), releases at
-- once, again; answers every hold as
-- [acquire called, acquired, release called, released].
local hiredlock = require "hiredlock"
local core = require "hiredlock.core"
local wire = require "hrlworker.wire"

local now = core.now

return function(urls, opts)
  local name = opts.name
  local client = hiredlock.new(urls, wire.client_options(opts,
    { "retry_delay", "retry_jitter" }))
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
      local t2 = now()
      assert(lock:release())
      if t1 >= finish then
        break
      end
      holds[#holds + 1] = ("[%.6f,%.6f,%.6f,%.6f]"):format(t0, t1, t2, now())
    end
  end
  return ('{"runtime":"%s","holds":[%s],"timeouts":%d}'):format(
    jit and "luajit" or _VERSION, table.concat(holds, ","), timeouts)
end
