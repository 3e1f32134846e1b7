--- Plain Lua (lua5.1 or LuaJIT, the C driver) beside nginx, for the
-- interop and bad-input tests of tests/nginx:
--   plain.lua acquire URLS NAME TTL TIMEOUT -> "ok TOKEN" (the lock is left
--                                               to its TTL) | "err MESSAGE"
--   plain.lua bad ID URLS                    -> "raised MESSAGE" | "no error"
--                                               (ID: a row of tests/lua/helpers/bad_inputs.lua)
-- URLS is a comma-separated list.
local hiredlock = require "hiredlock"
local bad = require "helpers.bad_inputs"

local function split(list)
  local out = {}
  for url in list:gmatch("[^,]+") do
    out[#out + 1] = url
  end
  return out
end

assert(hiredlock._driver == require "hiredlock.driver.hiredis",
  "plain Lua must use the C driver")
local mode = arg[1]
if mode == "acquire" then
  local client = hiredlock.new(split(arg[2]), { connect_timeout = 1,
    timeout = 0.5, retry_delay = 0.01, retry_jitter = 0.005 })
  local lock, err = client:acquire(arg[3], { ttl = tonumber(arg[4]),
    timeout = tonumber(arg[5]) })
  if lock then
    print("ok " .. lock.token)
  else
    print("err " .. err)
  end
elseif mode == "bad" then
  local client = hiredlock.new(split(arg[3]), { connect_timeout = 1,
    timeout = 0.5 })
  local ok, err = pcall(assert(bad.by_id(arg[2]), "no such case")[3], { client = client })
  print(ok and "no error" or "raised " .. tostring(err))
else
  error("usage: plain.lua acquire|bad ...")
end
