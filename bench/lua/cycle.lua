-- One Lua process's acquire+release cycles per second, printed as
-- "case rate" lines, against the servers of HRL_FIXTURE_URLS:
--   lua-n1     hiredlock on master 1 (N = 1), the facade as users call it
--   lua-n5     hiredlock on all 5 masters (N = 5)
--   core-n1    hiredlock.core handles directly (the facade's own cost)
--   core-reuse one hiredlock.core lock handle acquired and released again
--              and again: the C loop's own shape, no object per cycle
--   lua-redis  Debian's lua-redis: SET key token NX PX 30000, then EVAL of
--              the release script: the plain Lua way to do one lock cycle
--   lua5.x cycle.lua SECONDS [ROTATE [case...]]
-- ROTATE shifts the order of the cases, so that no case always comes first.
local seconds = tonumber(arg[1]) or 1
local rotate = tonumber(arg[2]) or 0
local cases = { select(3, ...) }
if #cases == 0 then
  local all = { "lua-n1", "lua-n5", "core-n1", "core-reuse", "lua-redis" }
  for i = 1, #all do
    cases[i] = all[(i - 1 + rotate) % #all + 1]
  end
end

-- Debian installs lua-redis for 5.1 to 5.3 only; it runs on 5.4 unchanged.
package.path = package.path .. ";/usr/share/lua/5.3/?.lua"

local hiredlock = require "hiredlock"
local core = require "hiredlock.core"

local urls = {}
for url in assert(os.getenv("HRL_FIXTURE_URLS"), "run under redis-fixture")
  :gmatch("[^,]+") do
  urls[#urls + 1] = url
end
assert(#urls >= 5, "needs 5 masters")

local RELEASE = 'if redis.call("get",KEYS[1]) == ARGV[1] then return '
  .. 'redis.call("del",KEYS[1]) else return 0 end'

local function cycle_fn(case)
  if case == "lua-n1" or case == "lua-n5" then
    local client = hiredlock.new(case == "lua-n1" and urls[1] or urls)
    return function()
      local lock, err = client:acquire("bench:lua", { ttl = 30, timeout = 0 })
      if not lock then
        error("acquire: " .. err)
      end
      local ok, rerr = lock:release()
      if not ok then
        error("release: " .. rerr)
      end
    end
  elseif case == "core-n1" then
    local client = core.new(urls[1])
    local opts = { ttl = 30, timeout = 0 }
    return function()
      local lock = assert(client:acquire("bench:core", opts))
      assert(lock:release())
    end
  elseif case == "core-reuse" then
    local lock = core.new(urls[1]):lock("bench:reuse", { ttl = 30 })
    return function()
      assert(lock:acquire(0))
      assert(lock:release())
    end
  elseif case == "lua-redis" then
    local redis = require "redis"
    local r = redis.connect("127.0.0.1", tonumber(urls[1]:match(":(%d+)$")))
    local token = "0123456789abcdef0123456789abcdef"
    return function()
      if r:set("bench:luaredis", token, "NX", "PX", 30000) ~= true then
        error("lua-redis SET failed")
      end
      if r:eval(RELEASE, 1, "bench:luaredis", token) ~= 1 then
        error("lua-redis EVAL failed")
      end
    end
  end
  error("unknown case " .. case)
end

local now = core.now
local function rate(fn, secs)
  local n, t0 = 0, now()
  local t = t0
  while t - t0 < secs do
    for _ = 1, 64 do
      fn()
    end
    n = n + 64
    t = now()
  end
  return n / (t - t0)
end

local fns = {}
for i, case in ipairs(cases) do
  fns[i] = cycle_fn(case)
  rate(fns[i], 0.15) -- warm-up: connections, script cache, the JIT
end
for i, case in ipairs(cases) do
  print(("%s %.1f"):format(case, rate(fns[i], seconds)))
end
