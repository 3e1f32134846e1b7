-- A racer of case 6 (Lua), the twin of racer.py.
--   lua racer.lua ID URLS DATA_PORT LOCK
local dir = arg[0]:match("^(.*/)[^/]*$") or "./"
-- resp.lua is the Lua test suites' own (tests/lua/helpers).
package.path = dir .. "?.lua;" .. dir .. "../../lua/helpers/?.lua;" .. package.path

local hiredlock = require "hiredlock"
local core = require "hiredlock.core"
local resp = require "resp"
local system = require "system"

local wid, urls_arg, port, name = arg[1], arg[2], tonumber(arg[3]), arg[4]
local urls = {}
for url in urls_arg:gmatch("[^,]+") do
  urls[#urls + 1] = url
end
local data = assert(resp.connect(port, 600))
local client = hiredlock.new(urls, { timeout = 0.5, connect_timeout = 1.0,
  retry_delay = 0.05, retry_jitter = 0.04 })

local function now_ns()
  return string.format("%.0f", core.now() * 1e9)
end

data:call("RPUSH", "ready", wid)
while true do
  local msg = data:call("BLPOP", "go:" .. wid, 0)[2]
  local phase, rnd, at = msg:match("^(%a+) ?(%S*) ?(%d*)$")
  if phase == "quit" then
    break
  end
  at = tonumber(at) / 1e9 -- everyone starts at this monotonic instant
  local left = at - core.now() - 0.002
  if left > 0 then
    system.sleep(left)
  end
  while core.now() < at do
  end
  local t0 = now_ns()
  local lock, err = client:acquire(name, { ttl = 5, timeout = phase == "A" and 0 or 10 })
  local t1 = now_ns()
  local what
  if lock then
    what = ("won %s %s %s"):format(t0, t1, lock.token)
  else
    what = ("lost %s %s %s"):format(t0, t1, (err:gsub(":.*", "")))
  end
  if lock and phase == "B" then
    system.sleep(0.02)
    assert(lock:release())
  end
  data:call("RPUSH", "res:" .. rnd, wid .. " " .. what)
  if lock and phase == "A" then
    data:call("BLPOP", "rel:" .. wid, 0)
    assert(lock:release())
    data:call("RPUSH", "relres:" .. rnd, "ok")
  end
end
