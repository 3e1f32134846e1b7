-- workload: the reliability workload loop, the twin of hrlworker/workload.py:
-- loops "acquire; read the shared counter and set (data server); sleep
-- 0-20 ms (+ hold); write them back plus one element; [extend;] release",
-- logging each step as a JSON line with CLOCK_MONOTONIC nanoseconds
-- (core.now(), the clock Python's time.monotonic_ns reads too); answers
-- {"done":true} at the end. Options as in workload.py, with data_port (the
-- data server's TCP port) for data; fenced=1 checks the fence at the data
-- server as workload.py does (hiredlock.fenced_write on the read and the
-- write-back; a refusal is logged as a "refused" event).
local hiredlock = require "hiredlock"
local core = require "hiredlock.core"
local resp = require "resp" -- the Lua test suites' own (tests/lua/helpers)
local system = require "system"
local wire = require "hrlworker.wire"

local q = wire.quote

local function now_ns()
  return string.format("%.0f", core.now() * 1e9)
end

local function validity_until(lock)
  -- validity is whole ms, rounded down: this is an upper bound.
  local v = lock:validity()
  return string.format("%.0f", (core.now() + v + 0.001) * 1e9)
end

return function(urls, cfg)
  local wid = cfg.id
  math.randomseed(tonumber(cfg.seed))
  local log = assert(io.open(cfg.log, "a"))
  log:setvbuf("line")
  local function emit(fields)
    fields[#fields + 1] = '"w":' .. q(wid)
    log:write("{" .. table.concat(fields, ",") .. "}\n")
  end
  local data = assert(resp.connect(tonumber(cfg.data_port), 30))
  local fenced = cfg.fenced == "1"
  local client = hiredlock.new(urls, wire.client_options(cfg))
  -- A command on the data server, fenced when the lock is: the reply, or
  -- nil and the refusal.
  local function run(lock, ...)
    if not fenced then
      return data:call(...)
    end
    -- resp.lua's eval() has lua-resty-redis's shape, as fenced_write wants
    local res, err = hiredlock.fenced_write(data, "fence", lock.fence_string, ...)
    if err and not err:find("^STALEFENCE") then
      error(err, 0)
    end
    return res, err
  end
  local pid = io.open("/proc/self/stat"):read("*l"):match("^(%d+)")
  emit({ '"ev":"start"', '"rt":' .. q(cfg.runtime), '"pid":' .. pid,
    '"t":' .. now_ns(), '"wall":' .. string.format("%.6f", system.gettime()) })
  while core.now() * 1e9 < tonumber(cfg.start_at) do
    system.sleep(0.001)
  end
  local stop = core.now() + tonumber(cfg.duration)
  local hold_ms, extend_p = tonumber(cfg.hold_ms), tonumber(cfg.extend_p)
  local seq = 0
  local opts = { ttl = tonumber(cfg.ttl), timeout = tonumber(cfg.wait),
    fenced = fenced }
  while core.now() < stop do
    local t0, wall = now_ns(), system.gettime()
    local lock, err = client:acquire(cfg.lock, opts)
    local t1 = now_ns()
    local ev = { '"ev":"acq"', '"t0":' .. t0, '"t1":' .. t1,
      '"ok":' .. tostring(lock ~= nil), '"err":' .. (err and q(err) or "null"),
      '"wall":' .. string.format("%.6f", wall) }
    if lock then
      ev[#ev + 1] = '"tok":' .. q(lock.token)
      ev[#ev + 1] = '"vu":' .. validity_until(lock)
      if fenced then
        ev[#ev + 1] = '"f":' .. lock.fence_string
      end
    end
    emit(ev)
    if not lock then
      if err ~= "timeout" then
        system.sleep(0.01) -- no quorum: do not spin
      end
    else
      seq = seq + 1
      local elem = wid .. ":" .. seq
      -- One loop turn's reads and write-back; false when the data server
      -- refused our fence (a newer holder was seen there).
      local function read_modify_write()
        local values, err = run(lock, "MGET", "counter", "set")
        if not values then
          return false, err
        end
        local counter = tonumber(values[1] or "0")
        local blob = values[2] or ""
        emit({ '"ev":"read"', '"t":' .. now_ns(), '"c":' .. counter })
        system.sleep(math.random() * 0.02 + hold_ms / 1000)
        t0 = now_ns()
        local done, werr = run(lock, "MSET", "counter", counter + 1, "set",
          blob .. elem .. ",")
        if not done then
          return false, werr
        end
        emit({ '"ev":"write"', '"t0":' .. t0, '"t1":' .. now_ns(),
          '"c":' .. (counter + 1), '"e":' .. q(elem) })
        return true
      end
      local wrote, refusal = read_modify_write()
      if not wrote then
        emit({ '"ev":"refused"', '"t":' .. now_ns(), '"err":' .. q(refusal) })
      end
      if math.random() < extend_p then
        t0 = now_ns()
        local ok, xerr = lock:extend()
        local x = { '"ev":"ext"', '"ok":' .. tostring(ok == true),
          '"err":' .. (xerr and q(xerr) or "null") }
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
        '"ok":' .. tostring(ok == true), '"err":' .. (rerr and q(rerr) or "null") })
    end
  end
  emit({ '"ev":"end"', '"t":' .. now_ns() })
  log:close()
  return ('{"done":true,"acquired":%d}'):format(seq)
end
