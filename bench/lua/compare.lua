-- Runs the C cycle benchmark and the Lua one under every interpreter in
-- turn, repetition after repetition, on the same 5 servers. Each repetition
-- runs the C loop before and after the Lua processes (the interpreters in a
-- rotating order), and the Lua rates are compared with the mean of those two
-- C runs, so a burst of load on a shared machine hits both sides alike.
-- Rates are medians of the repetitions; each ratio is the median of the
-- per-repetition ratios (what stays stable on a noisy machine).
--
-- Every server and every benchmark process runs on one CPU (CPU, default
-- 0): on a small VM a wake-up across CPUs can cost more than the whole
-- cycle (on the 2-vCPU machine this was written on, 175 us instead of 42 us
-- per N = 1 cycle), and where the scheduler happens to put a process made
-- the rates bimodal. One CPU is the same for the C and the Lua loops.
--   (under redis-fixture run -n 5) lua5.4 bench/lua/compare.lua SECS REPS
local seconds = tonumber(arg[1]) or 1
local reps = tonumber(arg[2]) or 9
local cpu = tonumber(os.getenv("CPU") or "0")

local function pin_servers()
  local launcher, dir = assert(os.getenv("HRL_FIXTURE")),
    assert(os.getenv("HRL_FIXTURE_DIR"))
  for i = 1, tonumber(os.getenv("HRL_FIXTURE_N")) do
    local p = assert(io.popen(("'%s' pid '%s' %d"):format(launcher, dir, i)))
    local pid = assert(tonumber(p:read("*l")), "no pid for node " .. i)
    p:close()
    assert(os.execute(("taskset -pc %d %d >/dev/null"):format(cpu, pid)))
  end
end
pin_servers()

local interps = {
  { name = "lua5.1", exe = "lua5.1", abi = "5.1" },
  { name = "luajit", exe = "luajit", abi = "5.1" },
  { name = "lua5.4", exe = "lua5.4", abi = "5.4" },
}

local function run(cmd)
  local p = assert(io.popen(("taskset -c %d %s 2>/dev/null"):format(cpu, cmd)))
  local out = p:read("*a")
  p:close()
  return out
end

local function lua_env(abi)
  local tree = "build-lua/" .. abi
  local lpath = ("%s/share/lua/%s/?.lua;%s/share/lua/%s/?/init.lua;;"):format(
    tree, abi, tree, abi)
  local cpath = ("%s/lib/lua/%s/?.so;;"):format(tree, abi)
  return ("LUA_PATH='%s' LUA_CPATH='%s' LUA_PATH_5_4='%s' LUA_CPATH_5_4='%s'")
    :format(lpath, cpath, lpath, cpath)
end

local samples = {} -- case -> list of rates
local function add(case, value)
  samples[case] = samples[case] or {}
  table.insert(samples[case], value)
end

local C_CASES = { raw = "raw", c_n1 = "c-n1", c_n5 = "c-n5" }

local function run_c()
  local out = run(("build/bench/c/bench_cycle %s 1"):format(seconds))
  local rates = {}
  for key, case in pairs(C_CASES) do
    rates[case] = assert(tonumber(out:match('"' .. key .. '": ([%d.]+)')),
      "bench_cycle gave no " .. key .. ": " .. out)
  end
  return rates
end

for rep = 1, reps do
  local before = run_c()
  for k = 0, #interps - 1 do
    local it = interps[(rep + k - 1) % #interps + 1]
    local out = run(("env %s %s bench/lua/cycle.lua %s %d"):format(
      lua_env(it.abi), it.exe, seconds, rep))
    for case, value in out:gmatch("(%S+) ([%d.]+)\n") do
      add(it.name .. " " .. case, tonumber(value))
    end
    assert(samples[it.name .. " lua-n1"] and #samples[it.name .. " lua-n1"] == rep,
      it.name .. " gave no result: " .. out)
  end
  local after = run_c()
  for _, case in pairs(C_CASES) do
    add(case, (before[case] + after[case]) / 2)
  end
  io.stderr:write(("rep %d/%d: c-n1 %.0f..%.0f  lua5.1 %.0f  luajit %.0f  "
    .. "lua5.4 %.0f cycles/s (N = 1)\n"):format(rep, reps, before["c-n1"],
      after["c-n1"], samples["lua5.1 lua-n1"][rep],
      samples["luajit lua-n1"][rep], samples["lua5.4 lua-n1"][rep]))
end

local function median(list)
  local v = {}
  for i, x in ipairs(list) do
    v[i] = x
  end
  table.sort(v)
  local n = #v
  return n % 2 == 1 and v[(n + 1) / 2] or (v[n / 2] + v[n / 2 + 1]) / 2
end

-- Median over repetitions of time(case) / time(base) = rate(base)/rate(case).
local function ratio(case, base)
  local q = {}
  for i = 1, reps do
    q[i] = samples[base][i] / samples[case][i]
  end
  return median(q)
end

local rows = {
  { "raw", "C hiredis: SET NX PX + EVALSHA (floor)" },
  { "c-n1", "C hiredlock, N = 1", "raw" },
  { "c-n5", "C hiredlock, N = 5", "c-n1" },
}
for _, it in ipairs(interps) do
  rows[#rows + 1] = { it.name .. " lua-n1", "hiredlock, N = 1", "c-n1" }
  rows[#rows + 1] = { it.name .. " lua-n5", "hiredlock, N = 5", "c-n5" }
  rows[#rows + 1] = { it.name .. " core-n1", "hiredlock.core, N = 1", "c-n1" }
  rows[#rows + 1] = { it.name .. " core-reuse", "one core lock handle reused", "c-n1" }
  rows[#rows + 1] = { it.name .. " lua-redis", "lua-redis SET NX PX + EVAL",
    it.name .. " lua-n1" }
end

print(("%d repetitions of %s s per case, medians; servers and clients on CPU %d")
  :format(reps, seconds, cpu))
print(("%-18s %10s %10s   %s"):format("case", "cycles/s", "us/cycle",
  "time ratio (median of per-repetition ratios)"))
local json = {}
for _, row in ipairs(rows) do
  local case, what, base = row[1], row[2], row[3]
  local m = median(samples[case])
  local rel = base and ("%.3f x %s"):format(ratio(case, base), base) or "1.000"
  print(("%-18s %10.0f %10.1f   %s  (%s)"):format(case, m, 1e6 / m, rel, what))
  json[#json + 1] = ('"%s": %.1f'):format(case, m)
end
print("{" .. table.concat(json, ", ") .. "}")
