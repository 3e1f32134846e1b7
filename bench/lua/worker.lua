-- The Lua side of bench/harness.py, under lua5.1, luajit and lua5.4: one
-- benchmark slice per command on stdin, one JSON line out (the commands of
-- bench/c/worker.c: run CASE SECONDS, count CASE K, hold K, unhold,
-- cycles K, quit).
--   lua worker.lua URL1,URL2,...          (the harness starts it)
--   lua worker.lua contend ...            (case 5, see contend below)
-- Cases (one client, a key of its own, acquire with timeout = 0, release):
--   lua-nK      hiredlock on K masters as users call it:
--               client:acquire(name, {ttl = 30, timeout = 0}), lock:release()
--   core-reuse  one hiredlock.core lock handle acquired and released again
--               and again: the C loop's shape, the binding's call cost alone
--   core-n1     hiredlock.core's client:acquire (a new handle per cycle,
--               no facade): the facade's own cost is lua-n1 minus this
--   lean-n1     core-n1 plus a sketch of a leaner facade (see below)
--   lua-redis   Debian's lua-redis: SET key token NX PX 30000, then EVAL of
--               the release script (fixed token): the plain Lua way
local hiredlock = require "hiredlock"
local core = require "hiredlock.core"

-- Debian installs lua-redis for 5.1 to 5.3 only; it runs on 5.4 unchanged.
package.path = package.path .. ";/usr/share/lua/5.3/?.lua"

local now = core.now
local TTL = 30
local RELEASE = 'if redis.call("get",KEYS[1]) == ARGV[1] then return '
  .. 'redis.call("del",KEYS[1]) else return 0 end'

local function split(s)
  local t = {}
  for item in s:gmatch("[^,]+") do
    t[#t + 1] = item
  end
  return t
end

local function out(s)
  io.stdout:write(s, "\n")
  io.stdout:flush()
end

local function sub(list, n)
  local t = {}
  for i = 1, n do
    t[i] = list[i]
  end
  return t
end

local function make_cases(urls)
  local cases = {}
  local opts = { ttl = TTL, timeout = 0 }
  for _, n in ipairs({ 1, 3, 5, 7 }) do
    if n <= #urls then
      local client = hiredlock.new(sub(urls, n))
      local name = "bench:lua-n" .. n
      cases["lua-n" .. n] = function()
        local lock, err = client:acquire(name, opts)
        if not lock then
          error("acquire: " .. err)
        end
        return lock
      end
    end
  end
  local reuse = core.new(urls[1]):lock("bench:core-reuse", { ttl = TTL })
  cases["core-reuse"] = function()
    assert(reuse:acquire(0))
    return reuse
  end
  local core1 = core.new(urls[1])
  cases["core-n1"] = function()
    return assert(core1:acquire("bench:core-n1", opts))
  end
  -- A sketch of a leaner facade, to measure what one could save (the
  -- real one is lua/hiredlock/init.lua): the lock is a one-field table,
  -- its token and name are read from the handle when asked for, and
  -- release calls the handle without a driver indirection.
  local Lean = {}
  function Lean:release()
    return self[1]:release()
  end
  local lean_fields = {
    token = function(h) return h:token() end,
    name = function(h) return h:name() end,
  }
  Lean.__index = function(self, k)
    local method = Lean[k]
    if method then
      return method
    end
    local field = lean_fields[k]
    return field and field(self[1])
  end
  local lean_client = core.new(urls[1])
  cases["lean-n1"] = function()
    local h, err = lean_client:acquire("bench:lean-n1", opts)
    if not h then
      error("acquire: " .. err)
    end
    return setmetatable({ h }, Lean)
  end
  local ok, redis = pcall(require, "redis")
  if ok then
    local r = redis.connect("127.0.0.1", tonumber(urls[1]:match(":(%d+)$")))
    local token = "0123456789abcdef0123456789abcdef"
    local releaser = {
      release = function()
        if r:eval(RELEASE, 1, "bench:lua-redis", token) ~= 1 then
          error("lua-redis EVAL failed")
        end
      end,
    }
    cases["lua-redis"] = function()
      if r:set("bench:lua-redis", token, "NX", "PX", TTL * 1000) ~= true then
        error("lua-redis SET failed")
      end
      return releaser
    end
  end
  return cases
end

-- os.clock() is this process's CPU time on every interpreter.
local function run_case(acquire, seconds)
  local lat, n = {}, 0
  local cpu0 = os.clock()
  local start = now()
  local t, finish = start, start + seconds
  while t < finish or n == 0 do
    local t0 = now()
    local lock = acquire()
    local t1 = now()
    lock:release()
    n = n + 1
    lat[n] = (t1 - t0) * 1e6
    t = now()
  end
  local cpu = (os.clock() - cpu0) * 1e6
  local parts = {}
  for i = 1, n do
    parts[i] = ("%.1f"):format(lat[i])
  end
  return ('{"cycles":%d,"elapsed":%.6f,"cpu_us":%.1f,"lat":[%s]}'):format(n,
    t - start, cpu, table.concat(parts, ","))
end

local function serve(urls)
  local cases = make_cases(urls)
  local client1 = hiredlock.new(urls[1])
  local opts = { ttl = TTL, timeout = 0 }
  local held = {}
  out('{"ready":true}')
  for line in io.stdin:lines() do
    local cmd, a, b = line:match("^(%S+)%s*(%S*)%s*(%S*)")
    if cmd == "run" then
      local case = cases[a]
      if case then
        out(run_case(case, tonumber(b)))
      else
        out(('{"error":"unknown case %s"}'):format(a))
      end
    elseif cmd == "count" then
      local case = cases[a]
      if case then
        for _ = 1, tonumber(b) do
          case():release()
        end
        out(('{"cycles":%d}'):format(tonumber(b)))
      else
        out(('{"error":"unknown case %s"}'):format(a))
      end
    elseif cmd == "hold" then
      for i = 1, tonumber(a) do
        held[i] = assert(client1:acquire("bench:hold:lua:" .. i, opts))
      end
      collectgarbage()
      out(('{"held":%d}'):format(#held))
    elseif cmd == "unhold" then
      local n = #held
      for i = 1, n do
        assert(held[i]:release())
        held[i] = nil
      end
      collectgarbage()
      out(('{"released":%d}'):format(n))
    elseif cmd == "cycles" then
      for _ = 1, tonumber(a) do
        assert(assert(client1:acquire("bench:drift:lua", opts)):release())
      end
      out(('{"cycles":%d}'):format(tonumber(a)))
    elseif cmd == "quit" then
      break
    else
      out(('{"error":"bad command %s"}'):format(tostring(cmd)))
    end
  end
end

-- Case 5: contend URLS NAME RETRY_DELAY RETRY_JITTER, as in
-- bench/python/worker.py: prints {"ready":true}, reads "go END" on stdin,
-- then until END (CLOCK_MONOTONIC seconds, core.now()) acquires (blocking),
-- releases at once, again; prints every hold as
-- [acquire called, acquired, release called, released].
local function contend(a)
  local urls, name = split(a[1]), a[2]
  local delay, jitter = tonumber(a[3]), tonumber(a[4])
  local client = hiredlock.new(urls, { retry_delay = delay,
    retry_jitter = jitter })
  -- Connect first, so every process starts on an equal footing.
  local warm = client:acquire(name, { ttl = 10, timeout = 5 })
  if warm then
    warm:release()
  end
  out('{"ready":true}')
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
  out(('{"runtime":"%s","holds":[%s],"timeouts":%d}'):format(
    jit and "luajit" or _VERSION, table.concat(holds, ","), timeouts))
end

if arg[1] == "contend" then
  contend({ select(2, ...) })
else
  assert(arg[1], "usage: worker.lua URL1,URL2,... | worker.lua contend ...")
  serve(split(arg[1]))
end
