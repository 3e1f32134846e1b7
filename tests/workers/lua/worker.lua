-- The Lua worker, shared by the benchmark (bench/harness.py) and the
-- reliability cases (tests/reliability), under lua5.1, luajit and lua5.4:
-- hiredlock in one long-lived process, driven over the line protocol of
-- tests/workers/README.md (the commands of worker.py, without the Python
-- peers' hold-redis-py).
--   lua tests/workers/lua/worker.lua URL1,URL2,...
local dir = arg[0]:match("^(.*/)[^/]*$") or "./"
-- hrlworker/*.lua beside this file; resp.lua is the Lua suites' own.
package.path = dir .. "?.lua;" .. dir .. "../../lua/helpers/?.lua;" .. package.path

local hiredlock = require "hiredlock"
local wire = require "hrlworker.wire"
local Bench = require "hrlworker.cycles"
local Racer = require "hrlworker.race"

assert(arg[1], "usage: worker.lua URL1,URL2,...")
local urls = wire.split(arg[1])
local bench = Bench.new(urls)
local racer = Racer.new()
local client -- the one set by "client", for race and cancel

local commands = {
  run = function(a) return bench:run(a[1], a[2]) end,
  count = function(a) return bench:count(a[1], a[2]) end,
  hold = function(a) return bench:hold(a[1]) end,
  unhold = function() return bench:unhold() end,
  cycles = function(a) return bench:cycles(a[1]) end,
  client = function(_, o)
    client = hiredlock.new(urls, wire.client_options(o))
    return '{"client":true}'
  end,
  contend = function(_, o) return require("hrlworker.contend")(urls, o) end,
  workload = function(_, o) return require("hrlworker.workload")(urls, o) end,
  race = function(_, o) return racer:race(client, o) end,
  release = function() return racer:release() end,
  cancel = function(_, o) return require("hrlworker.cancel")(client, o) end,
}

wire.out('{"ready":true,"runtime":"lua"}')
for line in io.stdin:lines() do
  local cmd, args, opts = wire.parse(line)
  if cmd == "quit" then
    break
  elseif cmd then
    local handler = commands[cmd]
    if handler then
      wire.out(handler(args, opts))
    else
      wire.out(('{"error":"bad command %s"}'):format(cmd))
    end
  end
end
