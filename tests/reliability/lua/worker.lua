-- A Lua workload worker, the twin of worker.py: loops "acquire; read the
-- shared counter and set (data server); sleep 0-20 ms (+ hold); write them
-- back plus one element; [extend;] release", logging each step as a JSON
-- line with CLOCK_MONOTONIC nanoseconds (core.now(), the clock Python's
-- time.monotonic_ns reads too).
--   lua worker.lua CONFIG.lua     (CONFIG returns a table, see worker.py)
local dir = arg[0]:match("^(.*/)[^/]*$") or "./"
-- resp.lua is the Lua test suites' own (tests/lua/helpers).
package.path = dir .. "?.lua;" .. dir .. "../../lua/helpers/?.lua;" .. package.path

local hiredlock = require "hiredlock"
local core = require "hiredlock.core"
local resp = require "resp"
local system = require "system"

local cfg = dofile(arg[1])
math.randomseed(cfg.seed)
local log = assert(io.open(cfg.log, "a"))
log:setvbuf("line")

local function now_ns()
  return string.format("%.0f", core.now() * 1e9)
end

local function q(s)
  if s == nil then
    return "null"
  end
  s = tostring(s):gsub('[%c"\\]', function(c)
    return string.format("\\u%04x", c:byte())
  end)
  return '"' .. s .. '"'
end

local function emit(fields)
  fields[#fields + 1] = '"w":' .. q(cfg.id)
  log:write("{" .. table.concat(fields, ",") .. "}\n")
end

local data = assert(resp.connect(cfg.data_port, 30))
local client = hiredlock.new(cfg.urls, {
  connect_timeout = cfg.connect_timeout,
  timeout = cfg.timeout,
  retry_delay = cfg.retry_delay,
  retry_jitter = cfg.retry_jitter,
})
local pid = io.open("/proc/self/stat"):read("*l"):match("^(%d+)")
emit({ '"ev":"start"', '"rt":' .. q(cfg.runtime), '"pid":' .. pid,
  '"t":' .. now_ns(), '"wall":' .. string.format("%.6f", system.gettime()) })
while core.now() * 1e9 < cfg.start_at do
  system.sleep(0.001)
end
local stop = core.now() + cfg.duration
local seq = 0
local opts = { ttl = cfg.ttl, timeout = cfg.wait }

local function validity_until(lock)
  -- validity is whole ms, rounded down: this is an upper bound.
  local v = lock:validity()
  return string.format("%.0f", (core.now() + v + 0.001) * 1e9)
end

while core.now() < stop do
  local t0, wall = now_ns(), system.gettime()
  local lock, err = client:acquire(cfg.lock, opts)
  local t1 = now_ns()
  local ev = { '"ev":"acq"', '"t0":' .. t0, '"t1":' .. t1,
    '"ok":' .. tostring(lock ~= nil), '"err":' .. q(err),
    '"wall":' .. string.format("%.6f", wall) }
  if lock then
    ev[#ev + 1] = '"tok":' .. q(lock.token)
    ev[#ev + 1] = '"vu":' .. validity_until(lock)
  end
  emit(ev)
  if not lock then
    if err ~= "timeout" then
      system.sleep(0.01) -- no quorum: do not spin
    end
  else
    seq = seq + 1
    local elem = cfg.id .. ":" .. seq
    local counter = tonumber(data:call("GET", "counter") or "0")
    local blob = data:call("GET", "set") or ""
    emit({ '"ev":"read"', '"t":' .. now_ns(), '"c":' .. counter })
    system.sleep(math.random() * 0.02 + cfg.hold_ms / 1000)
    t0 = now_ns()
    local replies = data:pipeline({ "MULTI" }, { "SET", "counter", counter + 1 },
      { "SET", "set", blob .. elem .. "," }, { "EXEC" })
    assert(type(replies[4]) == "table", "the write-back transaction failed")
    emit({ '"ev":"write"', '"t0":' .. t0, '"t1":' .. now_ns(),
      '"c":' .. (counter + 1), '"e":' .. q(elem) })
    if math.random() < cfg.extend_p then
      t0 = now_ns()
      local ok, xerr = lock:extend()
      local x = { '"ev":"ext"', '"ok":' .. tostring(ok == true),
        '"err":' .. q(xerr) }
      if ok then
        x[#x + 1] = '"vu":' .. validity_until(lock)
      end
      x[#x + 1] = '"t0":' .. t0
      x[#x + 1] = '"t1":' .. now_ns()
      emit(x)
    end
    t0 = now_ns()
    local ok, rerr = lock:release()
    emit({ '"ev":"rel"', '"t0":' .. t0, '"t1":' .. now_ns(),
      '"ok":' .. tostring(ok == true), '"err":' .. q(rerr) })
  end
end
emit({ '"ev":"end"', '"t":' .. now_ns() })
log:close()
