-- Case 7, the Lua side: client:with() whose function raises half of the
-- time, until the harness sends SIGINT: the interpreter's "interrupted!"
-- error, which ends a waiting acquire with "cancelled" (lua.c handles one
-- SIGINT, the next one kills the process). Prints one word per outcome,
-- one a line, as it goes.
--   lua canceller.lua SECONDS LOCK URLS
local hiredlock = require "hiredlock"
local core = require "hiredlock.core"

local seconds, name, urls_arg = tonumber(arg[1]), arg[2], arg[3]
local urls = {}
for url in urls_arg:gmatch("[^,]+") do
  urls[#urls + 1] = url
end
local client = hiredlock.new(urls, { timeout = 0.2, connect_timeout = 0.5,
  retry_delay = 0.02, retry_jitter = 0.01 })
math.randomseed(math.floor(core.now() * 1e6) % 2147483647)
io.stdout:setvbuf("line")
local stop = core.now() + seconds
print("ready") -- the harness interrupts only from now on

local function body()
  print("ran")
  if math.random() < 0.5 then
    error("boom", 0)
  end
end

while core.now() < stop do
  local ok, a, b = pcall(client.with, client, name, { ttl = 2, timeout = 5 }, body)
  if not ok then
    if a == "boom" then
      print("raised_in_with")
    elseif tostring(a):find("interrupted") then
      print("interrupted")
    else
      print("other " .. tostring(a))
    end
  elseif a == nil then
    print(b == "cancelled" and "cancelled" or b == "timeout" and "timeout"
      or "other " .. tostring(b))
  end
end
print("end")
