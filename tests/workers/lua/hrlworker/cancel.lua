-- cancel: reliability case 7, the Lua side:
--   cancel seconds=S name=NAME
-- client:with() whose function raises half of the time, until the harness
-- sends SIGINT: the interpreter's "interrupted!" error, which ends a
-- waiting acquire with "cancelled" (lua.c handles one SIGINT, the next one
-- kills the process). Answers {"ready":true}, then one {"outcome":WORD}
-- line per outcome as it goes (a killed process keeps what it said), and
-- {"outcome":"end"} when the time is up. The client comes from "client".
local core = require "hiredlock.core"
local wire = require "hrlworker.wire"

local function say(word)
  wire.out(('{"outcome":%s}'):format(wire.quote(word)))
end

local function body()
  say("ran")
  if math.random() < 0.5 then
    error("boom", 0)
  end
end

return function(client, opts)
  local name = opts.name
  math.randomseed(math.floor(core.now() * 1e6) % 2147483647)
  local stop = core.now() + tonumber(opts.seconds)
  wire.out('{"ready":true}') -- the harness interrupts only from now on
  while core.now() < stop do
    local ok, a, b = pcall(client.with, client, name, { ttl = 2, timeout = 5 }, body)
    if not ok then
      if a == "boom" then
        say("raised_in_with")
      elseif tostring(a):find("interrupted") then
        say("interrupted")
      else
        say("other " .. tostring(a))
      end
    elseif a == nil then
      say(b == "cancelled" and "cancelled" or b == "timeout" and "timeout"
        or "other " .. tostring(b))
    end
  end
  return '{"outcome":"end"}'
end
