-- A child of 16-waiting_faults_spec.lua's queue-jumping spec (plain Lua
-- blocks, so each party but the one under test is a process of its own).
--   lua queue_child.lua hold URLS NAME LAUNCHER DIR   holds NAME, says
--       "held", lets go once two waiters queued on node 1
--   lua queue_child.lua wait URLS NAME FILE           waits for NAME, and
--       once it has it appends "B" to FILE
local hiredlock = require "hiredlock"
local system = require "system"
local role, name = arg[1], arg[3]
local urls = {}
for url in arg[2]:gmatch("[^,]+") do
  urls[#urls + 1] = url
end
local client = hiredlock.new(urls)
if role == "hold" then
  local lock = assert(client:acquire(name, { ttl = 30, timeout = 0 }))
  io.stdout:write("held\n")
  io.stdout:flush()
  local zcard = ("'%s' cli '%s' 1 ZCARD '%s{%s}:queue'"):format(arg[4], arg[5],
    name, name)
  for _ = 1, 3000 do
    local p = assert(io.popen(zcard))
    local queued = tonumber(p:read("*a"):match("%d+"))
    p:close()
    if queued and queued >= 2 then
      break
    end
    system.sleep(0.01)
  end
  assert(lock:release())
  print("released")
else
  local lock = client:acquire(name, { ttl = 30, timeout = 20 })
  if lock then
    local f = assert(io.open(arg[4], "a"))
    f:write("B")
    f:close()
    system.sleep(0.1)
    lock:release()
  end
  print(lock and "got" or "not")
end
