-- The benchmark cases of the Lua worker (bench/README.md), each set up on
-- first use, and the memory commands (hold, unhold, cycles):
--   lua-nK      hiredlock on K masters as users call it:
--               client:acquire(name, {ttl = 30, timeout = 0}), lock:release()
--   lua-fenced-nK  the same with {fenced = true}
--   core-reuse  one hiredlock.core lock handle acquired and released again
--               and again: the C loop's shape, the binding's call cost alone
--   core-n1     hiredlock.core's client:acquire (a new handle per cycle,
--               no facade): the facade's own cost is lua-n1 minus this
--   lean-n1     core-n1 plus a sketch of a leaner facade (see below)
--   lua-redis   Debian's lua-redis: SET key token NX PX 30000, then EVAL of
--               the release script (fixed token): the plain Lua way
local hiredlock = require "hiredlock"
local core = require "hiredlock.core"

local now = core.now
local TTL = 30
local RELEASE = 'if redis.call("get",KEYS[1]) == ARGV[1] then return '
  .. 'redis.call("del",KEYS[1]) else return 0 end'
-- Per-master timeouts with room for a stall of the one CPU every process
-- is pinned to (as the Python and C workers): they bound only late replies.
local CLIENT_OPTS = { connect_timeout = 1, timeout = 0.5 }
local OPTS = { ttl = TTL, timeout = 0 }
local FENCED = { ttl = TTL, timeout = 0, fenced = true }

local function sub(list, n)
  local t = {}
  for i = 1, n do
    t[i] = list[i]
  end
  return t
end

-- A sketch of a leaner facade, to measure what one could save (the real
-- one is lua/hiredlock/init.lua): the lock is a one-field table, its token
-- and name are read from the handle when asked for, and release calls the
-- handle without a driver indirection.
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

--- Case name -> a function that sets the case up and returns its acquire.
local function factories(urls)
  local f = {}
  for _, n in ipairs({ 1, 3, 5, 7 }) do
    if n <= #urls then
      for _, kind in ipairs({ "", "fenced-" }) do
        f["lua-" .. kind .. "n" .. n] = function()
          local client = hiredlock.new(sub(urls, n), CLIENT_OPTS)
          local name = "bench:lua-" .. kind .. "n" .. n
          local opts = kind == "" and OPTS or FENCED
          return function()
            local lock, err = client:acquire(name, opts)
            if not lock then
              error("acquire: " .. err)
            end
            return lock
          end
        end
      end
    end
  end
  f["core-reuse"] = function()
    local reuse = core.new(urls[1], CLIENT_OPTS):lock("bench:core-reuse", { ttl = TTL })
    return function()
      assert(reuse:acquire(0))
      return reuse
    end
  end
  f["core-n1"] = function()
    local core1 = core.new(urls[1], CLIENT_OPTS)
    return function()
      return assert(core1:acquire("bench:core-n1", OPTS))
    end
  end
  f["lean-n1"] = function()
    local lean_client = core.new(urls[1], CLIENT_OPTS)
    return function()
      local h, err = lean_client:acquire("bench:lean-n1", OPTS)
      if not h then
        error("acquire: " .. err)
      end
      return setmetatable({ h }, Lean)
    end
  end
  f["lua-redis"] = function()
    -- Debian installs lua-redis for 5.1 to 5.3 only; it runs on 5.4 unchanged.
    package.path = package.path .. ";/usr/share/lua/5.3/?.lua"
    local ok, redis = pcall(require, "redis")
    if not ok then
      return nil -- no lua-redis here: the case is unknown
    end
    local r = redis.connect("127.0.0.1", tonumber(urls[1]:match(":(%d+)$")))
    local token = "0123456789abcdef0123456789abcdef"
    local releaser = {
      release = function()
        if r:eval(RELEASE, 1, "bench:lua-redis", token) ~= 1 then
          error("lua-redis EVAL failed")
        end
      end,
    }
    return function()
      if r:set("bench:lua-redis", token, "NX", "PX", TTL * 1000) ~= true then
        error("lua-redis SET failed")
      end
      return releaser
    end
  end
  return f
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

local Bench = {}
Bench.__index = Bench

function Bench.new(urls)
  return setmetatable({ urls = urls, factories = factories(urls), cases = {},
    held = {} }, Bench)
end

function Bench:client1()
  self._client1 = self._client1 or hiredlock.new(self.urls[1], CLIENT_OPTS)
  return self._client1
end

function Bench:case(name)
  local case = self.cases[name]
  if not case and self.factories[name] then
    case = self.factories[name]()
    self.cases[name] = case
  end
  return case
end

function Bench:run(name, seconds)
  local case = self:case(name)
  if not case then
    return ('{"error":"unknown case %s"}'):format(name)
  end
  return run_case(case, tonumber(seconds))
end

function Bench:count(name, k)
  local case = self:case(name)
  if not case then
    return ('{"error":"unknown case %s"}'):format(name)
  end
  for _ = 1, tonumber(k) do
    case():release()
  end
  return ('{"cycles":%d}'):format(tonumber(k))
end

function Bench:hold(k)
  for i = 1, tonumber(k) do
    self.held[i] = assert(self:client1():acquire("bench:hold:lua:" .. i, OPTS))
  end
  collectgarbage()
  return ('{"held":%d}'):format(#self.held)
end

function Bench:unhold()
  local n = #self.held
  for i = 1, n do
    assert(self.held[i]:release())
    self.held[i] = nil
  end
  collectgarbage()
  return ('{"released":%d}'):format(n)
end

function Bench:cycles(k)
  for _ = 1, tonumber(k) do
    assert(assert(self:client1():acquire("bench:drift:lua", OPTS)):release())
  end
  return ('{"cycles":%d}'):format(tonumber(k))
end

return Bench
