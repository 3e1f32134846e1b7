-- One of several processes taking a fenced lock over and over while the
-- spec stops, resumes and restarts masters (12-fencing_spec.lua):
--   lua fence_worker.lua URLS NAME COUNT [ROUNDS_FILE MIN_ROUNDS]
-- Prints one line per grant, "<start> <end> <fence>" (core.now() seconds
-- before the acquire and after it returned, the fence as its exact
-- decimal string), then "done <attempts>". With ROUNDS_FILE (a line added
-- by the fault loop each time it has been through every master), it goes
-- on past COUNT until the file has MIN_ROUNDS lines.
local dir = arg[0]:match("^(.*)helpers/[^/]*$") or "./"
package.path = dir .. "?.lua;" .. package.path

local hiredlock = require "hiredlock"
local core = require "hiredlock.core"
local system = require "system"

local urls_arg, name, count = arg[1], arg[2], tonumber(arg[3])
local rounds_file, min_rounds = arg[4], tonumber(arg[5] or 0)

-- Whether the fault loop has been through every master min_rounds times.
local function rounds_done()
  if not rounds_file then
    return true
  end
  local f = io.open(rounds_file)
  if not f then
    return min_rounds == 0
  end
  local lines = 0
  for _ in f:lines() do
    lines = lines + 1
  end
  f:close()
  return lines >= min_rounds
end
-- One write per line: the workers share the spec's pipe.
io.stdout:setvbuf("line")
local urls = {}
for url in urls_arg:gmatch("[^,]+") do
  urls[#urls + 1] = url
end

local client = hiredlock.new(urls, { timeout = 0.1, connect_timeout = 0.5,
  retry_delay = 0.005, retry_jitter = 0.005, fenced = true })
local opts = { ttl = 1, timeout = 1 }
local grants, attempts = 0, 0
while grants < count or not rounds_done() do
  local t0 = core.now()
  local lock, err = client:acquire(name, opts)
  local t1 = core.now()
  attempts = attempts + 1
  if lock then
    grants = grants + 1
    io.write(("%.6f %.6f %s\n"):format(t0, t1, lock.fence_string))
    local ok, rerr = lock:release()
    if not ok and rerr:find("^connection failed") then
      system.sleep(0.02) -- cut short by a restart: finish it
      lock:release()
    end
  elseif err ~= "timeout" then
    system.sleep(0.005) -- no quorum while a master restarts
  end
end
io.write(("done %d\n"):format(attempts))
