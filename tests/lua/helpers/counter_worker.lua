-- One of several processes incrementing a counter in Redis the unsafe way
-- (GET, a pause, SET), under the lock or, as the negative control, without.
--   lua counter_worker.lua URLS PORT COUNT lock|none GOKEY
-- Prints "ok <count>" or "fail <message>".
local dir = arg[0]:match("^(.*)helpers/[^/]*$") or "./"
package.path = dir .. "?.lua;" .. package.path

local hiredlock = require "hiredlock"
local resp = require "helpers.resp"
local system = require "system"

local urls_arg, port, count, mode, go = arg[1], tonumber(arg[2]),
  tonumber(arg[3]), arg[4], arg[5]
local urls = {}
for url in urls_arg:gmatch("[^,]+") do
  urls[#urls + 1] = url
end

local redis = assert(resp.connect(port))
local client = hiredlock.new(urls, { retry_delay = 0.005, retry_jitter = 0.004 })

local function increment()
  local value = tonumber(redis:call("GET", "counter") or "0")
  system.sleep(0.002) -- widens the window a lost update needs
  redis:call("SET", "counter", value + 1)
end

-- Everyone starts together, so the processes really overlap.
local deadline = system.monotime() + 10
while redis:call("EXISTS", go) == 0 do
  if system.monotime() > deadline then
    print("fail no go signal")
    os.exit(1)
  end
  system.sleep(0.001)
end

for _ = 1, count do
  if mode == "lock" then
    local ok, err = client:with("counter:lock", { ttl = 5, timeout = 30 },
      increment)
    if not ok then
      print("fail " .. tostring(err))
      os.exit(1)
    end
  else
    increment()
  end
end
print("ok " .. count)
