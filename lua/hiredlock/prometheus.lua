--- hiredlock.prometheus(clients) -> the clients' counters in Prometheus's
-- text format (0.0.4), for a /metrics location:
--
--   location = /metrics {
--     content_by_lua_block { ngx.print(require("hiredlock").prometheus()) }
--   }
--
-- clients: nil for every client made in this Lua state (this nginx worker)
-- and still alive, labelled client="1", "2", ... in the order they were
-- made; or a table {name = client, ...}. The metrics are those of Python's
-- hiredlock.prometheus.HiredlockCollector, by the same names
-- (docs/OPERATING.md). Under nginx each worker counts its own clients and
-- its samples carry worker="<ngx.worker.id()>": a scrape reaches one
-- worker, so make the client once per worker (init_worker_by_lua, or a
-- module's upvalue) and scrape with one worker, or sum by worker in the
-- query and expect a worker's series to pause while others answer.
local pairs, ipairs, tostring, type, concat, sort =
  pairs, ipairs, tostring, type, table.concat, table.sort
local huge = math.huge

local ngx = rawget(_G, "ngx")

local M = {}

local function quoted(v)
  return '"' .. tostring(v):gsub("\\", "\\\\"):gsub("\n", "\\n")
    :gsub('"', '\\"') .. '"'
end

local function number(v)
  if v == huge then
    return "+Inf"
  end
  if v == math.floor(v) and v < 2 ^ 53 then
    return ("%d"):format(v)
  end
  return ("%.17g"):format(v)
end

-- One metric: HELP, TYPE and its samples ({labels, value} or with a
-- name suffix for a histogram's parts).
local function metric(out, name, kind, help, samples)
  out[#out + 1] = ("# HELP %s %s"):format(name, help)
  out[#out + 1] = ("# TYPE %s %s"):format(name, kind)
  for _, s in ipairs(samples) do
    local labels = {}
    for _, kv in ipairs(s[1]) do
      labels[#labels + 1] = kv[1] .. "=" .. quoted(kv[2])
    end
    out[#out + 1] = ("%s%s{%s} %s"):format(name, s[3] or "",
      concat(labels, ","), number(s[2]))
  end
end

-- stats key, metric (counters), help: as Python's collector.
local SIMPLE = {
  { "waited", "hiredlock_waits_total", "Acquires that queued for the lock" },
  { "released", "hiredlock_releases_total", "Releases confirmed by a quorum" },
  { "handoffs", "hiredlock_handoffs_total",
    "Releases that handed the lock to the next waiter" },
  { "dead_waiters", "hiredlock_dead_waiters_total",
    "Queued waiters a hand-off skipped: gone" },
  { "extended", "hiredlock_extends_total", "Extends confirmed by a quorum" },
  { "losses", "hiredlock_losses_total",
    "Holds lost: leases, and releases/extends that found the key not ours" },
  { "inspections", "hiredlock_inspections_total",
    "Inspections (status, inspect)" },
}

--- The text for named stats: list of {name, stats}.
function M.render(named)
  local worker = ngx and type(ngx.worker) == "table" and ngx.worker.id
    and ngx.worker.id() or nil
  local function base(name)
    local l = { { "client", name } }
    if worker then
      l[2] = { "worker", worker }
    end
    return l
  end
  local function with(name, ...)
    local l = base(name)
    local extra = { ... }
    for i = 1, #extra, 2 do
      l[#l + 1] = { extra[i], extra[i + 1] }
    end
    return l
  end
  local acquires, waits, renewals, masters = {}, {}, {}, {}
  local simple = {}
  for k = 1, #SIMPLE do
    simple[k] = {}
  end
  for _, entry in ipairs(named) do
    local name, s = entry[1], entry[2]
    for _, result in ipairs({ "acquired", "busy", "cancelled" }) do
      acquires[#acquires + 1] = { with(name, "result", result, "reason", ""),
        s[result] }
    end
    local reasons = {}
    for reason in pairs(s.failed) do
      reasons[#reasons + 1] = reason
    end
    sort(reasons)
    for _, reason in ipairs(reasons) do
      acquires[#acquires + 1] = { with(name, "result", "failed", "reason",
        reason), s.failed[reason] }
    end
    local cumulative = 0
    for k = 1, #s.wait_buckets do
      cumulative = cumulative + s.wait_buckets[k]
      local le = s.wait_bounds[k] and number(s.wait_bounds[k]) or "+Inf"
      waits[#waits + 1] = { with(name, "le", le), cumulative, "_bucket" }
    end
    waits[#waits + 1] = { base(name), s.wait_sum, "_sum" }
    waits[#waits + 1] = { base(name), cumulative, "_count" }
    for k, def in ipairs(SIMPLE) do
      simple[k][#simple[k] + 1] = { base(name), s[def[1]] }
    end
    renewals[#renewals + 1] = { with(name, "result", "ok"), s.renewals }
    renewals[#renewals + 1] = { with(name, "result", "failed"),
      s.renewals_failed }
    for _, m in ipairs(s.masters) do
      masters[#masters + 1] = { with(name, "master", m.master, "kind",
        "unreachable"), m.unreachable }
      masters[#masters + 1] = { with(name, "master", m.master, "kind",
        "error"), m.errors }
    end
  end
  local out = {}
  metric(out, "hiredlock_acquires_total", "counter",
    "Acquires by outcome: acquired, busy (timed out), cancelled, failed "
    .. "(reason: the error)", acquires)
  metric(out, "hiredlock_acquire_seconds", "histogram",
    "How long acquires took, waits included", waits)
  for k, def in ipairs(SIMPLE) do
    metric(out, def[2], "counter", def[3], simple[k])
  end
  metric(out, "hiredlock_renewals_total", "counter",
    "Lease renewals: ok, or failed while the lease was still valid", renewals)
  metric(out, "hiredlock_master_failures_total", "counter",
    "Rounds a master failed: unreachable (refused, reset, timed out) or "
    .. "error (an error reply)", masters)
  out[#out + 1] = ""
  return concat(out, "\n")
end

--- hiredlock.prometheus, over live_stats() -> {{number, stats}}, the
-- clients still alive.
function M.renderer(live_stats)
  return function(clients)
    local named = {}
    if clients == nil then
      for _, s in ipairs(live_stats()) do
        named[#named + 1] = { tostring(s[1]), s[2], s[1] }
      end
      sort(named, function(a, b)
        return a[3] < b[3]
      end)
    else
      for name, client in pairs(clients) do
        named[#named + 1] = { tostring(name), client:stats() }
      end
      sort(named, function(a, b)
        return a[1] < b[1]
      end)
    end
    return M.render(named)
  end
end

return M
