-- What operators get from Lua (docs/OPERATING.md): inspections of a state
-- built by hand on three masters (a holder with a label and a fence, three
-- waiters, one master down) through the built-in driver and through the
-- sans-I/O seam (the luasocket test driver), owner labels, counters,
-- events to on_event, and the Prometheus text.
local fixture = require "helpers.fixture"
local hiredlock = require "hiredlock"
local socket_driver = require "helpers.socket_driver"
local system = require "system"

local TOLERANT = { timeout = 0.5, connect_timeout = 1, retry_delay = 0.01,
  retry_jitter = 0.005 }

local function with(base, extra)
  local out = {}
  for k, v in pairs(base) do
    out[k] = v
  end
  for k, v in pairs(extra or {}) do
    out[k] = v
  end
  return out
end

local NAME = "jobs:reindex"
local HOLDER = "aaaaaaaa11112222333344445555aaaa"
local WAITERS = { "b1b1b1b111112222333344445555bbbb",
  "c2c2c2c211112222333344445555cccc", "d3d3d3d311112222333344445555dddd" }

local function sibling(suffix)
  return NAME .. "{" .. NAME .. "}" .. suffix
end

-- When build() wrote the state (system.gettime()): the ages and leases
-- read later are judged by the time gone since.
local built_at

-- On master i: the holder with its label, the fence at 7, three waiters
-- queued 3, 2, 1 s ago whose entries live 5, 4, 3 s more, two labelled.
local function build(fx, i)
  fx:cmd(i, "SET", NAME, HOLDER, "PX", "20000")
  fx:cmd(i, "SET", sibling(":owner:") .. HOLDER, "web-1:4242", "PX", "20000")
  fx:cmd(i, "SET", sibling(":fence"), "7")
  local t = fx:cmd(i, "TIME")
  local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
  built_at = system.gettime()
  local arrival = math.floor(built_at * 1e6)
  for k, token in ipairs(WAITERS) do
    fx:cmd(i, "ZADD", sibling(":queue"),
      ("%.0f"):format(arrival - (4 - k) * 1e6), token)
    fx:cmd(i, "HSET", sibling(":waiters"), token,
      ("%.0f 410 hiredlock:wake:x"):format(now + (6 - k) * 1000))
  end
  fx:cmd(i, "SET", sibling(":owner:") .. WAITERS[1], "worker-1", "PX", "20000")
  fx:cmd(i, "SET", sibling(":owner:") .. WAITERS[2], "worker-2", "PX", "20000")
end

local function check(ins, fx)
  -- Since the state was built (the last master's; the others' a moment
  -- earlier): the TTLs and leases have run down by that much, the ages
  -- grown. (They were judged as if no time had passed, within 0.5 s or
  -- 1 s, which the tests before, the kill of master 3 and a loaded
  -- machine could use up.)
  local since = system.gettime() - built_at
  assert.equals(NAME, ins.name)
  assert.equals("held", ins.state)
  assert.is_true(ins.held)
  assert.same({ 2, 2, 2 }, { ins.quorum, ins.answered, ins.holding })
  assert.same({ "aaaaaaaa", "web-1:4242", 7 }, { ins.token, ins.owner,
    ins.fence })
  assert.is_true(ins.validity > 19 - since and ins.validity <= 20,
    ("validity %s, %s s after the build"):format(ins.validity, since))
  for i = 1, 2 do
    local m = ins.masters[i]
    assert.equals(fx.urls[i]:gsub("^redis://", ""), m.master)
    assert.is_true(m.ok)
    assert.is_nil(m.error)
    assert.is_true(m.present)
    assert.same({ "aaaaaaaa", 7, "web-1:4242", 3 }, { m.token, m.fence,
      m.owner, m.queued })
    assert.is_true(m.ttl > 19 - since and m.ttl <= 20)
    assert.equals(3, #m.waiters)
    for k, w in ipairs(m.waiters) do
      assert.equals(WAITERS[k]:sub(1, 8), w.token)
      -- Seconds, each waiter's own: within half a second of what the
      -- build wrote, once the time since is counted.
      assert.is_true(math.abs(w.age - (4 - k) - since) < 0.5, "age " .. w.age)
      assert.is_true(math.abs(w.lease - (6 - k) + since) < 0.5,
        "lease " .. w.lease)
    end
    assert.same({ "worker-1", "worker-2" }, { m.waiters[1].owner,
      m.waiters[2].owner })
    assert.is_nil(m.waiters[3].owner)
  end
  local down = ins.masters[3]
  assert.is_false(down.ok)
  assert.is_false(down.present)
  assert.is_nil(down.ttl)
  assert.matches("^connection failed: ", down.error)
end

describe("inspections", function()
  local fx
  setup(function()
    fx = fixture.start(3)
    for i = 1, 3 do
      build(fx, i)
    end
    fx:ctl("kill", 3)
  end)
  teardown(function()
    fx:stop()
  end)

  it("read a holder, three waiters and a master down", function()
    local client = fx:client(TOLERANT)
    check(assert(client:inspect(NAME)), fx)
    assert.equals("free", client:inspect("nobody").state)
    assert.equals(2, client:stats().inspections)
  end)

  it("read the same through the sans-I/O seam", function()
    local client = fx:client(TOLERANT)
    client._driver = socket_driver
    check(assert(client:inspect(NAME)), fx)
    assert.equals(1, client:stats().inspections)
  end)

  it("refuse a bad name as acquire does", function()
    local client = fx:client(TOLERANT)
    assert.has_error(function()
      client:inspect("")
    end, "bad argument #1 to 'inspect' (name must be 1 to "
      .. "512 bytes, got 0)")
  end)
end)

describe("owner labels, counters and events", function()
  local fx
  setup(function()
    fx = fixture.start(3)
  end)
  teardown(function()
    fx:stop()
  end)

  it("write the label beside the token, gone with the release", function()
    local client = fx:client(with(TOLERANT, { owner = "lua-%p" }))
    local lock = assert(client:acquire("labelled", { ttl = 10 }))
    local label = sibling(":owner:"):gsub(NAME, "labelled") .. lock.token
    local want = "lua-" .. fixture.pid()
    for i = 1, 3 do
      assert.equals(lock.token, fx:cmd(i, "GET", "labelled"))
      assert.equals(want, fx:cmd(i, "GET", label))
    end
    assert.equals(want, client:inspect("labelled").owner)
    assert.is_true(lock:release())
    assert.equals(0, fx:count_key(label))
    local other = assert(client:acquire("labelled", { owner = false }))
    assert.equals(0, fx:count_key(sibling(":owner:"):gsub(NAME, "labelled")
      .. other.token))
    assert.is_true(other:release())
    assert.has_error(function()
      client:acquire("labelled", { owner = 1 })
    end, "bad argument #2 to 'acquire' (owner must be a string or a boolean, "
      .. "got number)")
  end)

  it("count, call on_event, and render Prometheus text", function()
    local seen = {}
    local client = fx:client(with(TOLERANT, {
      slow_wait = 0.05,
      on_event = function(ev)
        seen[#seen + 1] = ev
      end,
    }))
    for _ = 1, 5 do
      assert(client:with("counted", {}, function() end))
    end
    assert.same({}, seen) -- the fast path reports nothing
    fx:ctl("kill", 2)
    assert(client:with("counted", {}, function() end))
    fx:ctl("restart", 2)
    assert(client:with("counted", {}, function() end))
    assert.same({ "master_down", "master_up" }, { seen[1].kind, seen[2].kind })
    assert.equals("info", seen[1].level)
    assert.matches("^master 127%.0%.0%.1:%d+ unreachable: ", seen[1].message)
    assert.equals(fx.urls[2]:gsub("^redis://", ""), seen[2].master)
    local s = client:stats()
    assert.same({ 7, 7, 0 }, { s.acquired, s.released, s.busy })
    assert.equals(2, s.masters[2].unreachable)
    local total = 0
    for _, n in ipairs(s.wait_buckets) do
      total = total + n
    end
    assert.equals(7, total)
    local text = hiredlock.prometheus({ main = client })
    assert.matches('hiredlock_acquires_total{client="main",result="acquired",'
      .. 'reason=""} 7', text, 1, true)
    assert.matches('hiredlock_acquire_seconds_count{client="main"} 7', text, 1,
      true)
    assert.matches('hiredlock_master_failures_total{client="main",master="'
      .. s.masters[2].master .. '",kind="unreachable"} 2', text, 1, true)
    assert.matches("# TYPE hiredlock_acquire_seconds histogram", text, 1, true)
    local all = hiredlock.prometheus()
    assert.matches("hiredlock_releases_total{client=", all, 1, true)
  end)

  -- A client dropped while it still holds a lock is finalized with the
  -- lock's object, which reaches it: the weak registry behind
  -- prometheus() keeps it one more collection cycle, its handle already
  -- closed. Rendering every client then raised "calling 'stats' on bad
  -- self (the client was closed (finalized))" in 5.1 and 5.4.
  it("render every client after one dropped with a lock held", function()
    local kept = fx:client(TOLERANT)
    assert(kept:with("kept", {}, function() end))
    for i = 1, 8 do
      do
        local dropped = fx:client(TOLERANT)
        assert(dropped:acquire("dropped:" .. i, { ttl = 1 }))
      end
      collectgarbage("step", 1)
      local text = hiredlock.prometheus()
      assert.matches("hiredlock_releases_total{client=", text, 1, true)
    end
    assert.equals(1, kept:stats().acquired)
  end)

  -- The events a release leaves the client (here a master lost between the
  -- acquire and the release) reach on_event before release returns, in
  -- every runtime (LuaJIT's facade releases through the FFI and learns of
  -- them from the code it returns).
  it("call on_event with a release's events when it returns", function()
    local seen = {}
    local client = fx:client(with(TOLERANT, {
      on_event = function(ev)
        seen[#seen + 1] = ev
      end,
    }))
    local lock = assert(client:acquire("released", { timeout = 0 }))
    assert.same({}, seen)
    fx:ctl("kill", 2)
    local ok, err = lock:release()
    fx:ctl("restart", 2)
    assert.same({ true, nil }, { ok, err })
    assert.equals(1, #seen)
    assert.equals("master_down", seen[1].kind)
    assert.is_false(lock:held())
    assert.same({ nil, "not held" }, { lock:release() })
  end)
end)

-- A read-write lock's and a semaphore's hash (docs/DESIGN.md, the holds):
-- the kind, and every hold on a quorum with its class, TTL and masters, in
-- the fields and words of the other runtimes.
describe("inspections of holds", function()
  local fx
  setup(function()
    fx = fixture.start(3)
  end)
  teardown(function()
    fx:stop()
  end)

  local function by_token(holds)
    local out = {}
    for _, h in ipairs(holds) do
      out[h.token] = h
    end
    return out
  end

  for _, driver in ipairs({ "C", "seam" }) do
    it("list reads, a write and permits (" .. driver .. ")", function()
      local client = fx:client(with(TOLERANT, { owner = "tester" }))
      if driver == "seam" then
        client._driver = socket_driver
      end
      local name = "lhold:" .. driver
      local rw = client:rwlock(name)
      local r1 = assert(rw:read({ timeout = 0, ttl = 30 }))
      local r2 = assert(rw:read({ timeout = 0, ttl = 30 }))
      -- One read gone from master 3: on two of three, a quorum's still.
      assert.equals(1, fx:cmd(3, "HDEL", name, r2.token))
      local ins = assert(client:inspect(name))
      assert.equals("read-write lock", ins.kind)
      assert.equals("held", ins.state)
      assert.equals(2, #ins.holds)
      local holds = by_token(ins.holds)
      local h1, h2 = holds[r1.token:sub(1, 8)], holds[r2.token:sub(1, 8)]
      assert.equals("read", h1.hold)
      assert.equals("read", h2.hold)
      assert.equals(3, h1.holding)
      assert.equals(2, h2.holding)
      assert.equals("tester", h1.owner)
      assert.is_true(h1.ttl > 29 and h1.ttl <= 30)
      for i, m in ipairs(ins.masters) do
        assert.equals("read-write lock", m.kind)
        assert.equals(i == 3 and 1 or 2, m.hold_count)
        assert.equals(m.hold_count, #m.holds)
      end
      assert.is_true(r1:release())
      assert.is_true(r2:release())
      local w = assert(rw:write({ timeout = 0, ttl = 30 }))
      ins = assert(client:inspect(name))
      assert.equals(1, #ins.holds)
      assert.equals("write", ins.holds[1].hold)
      assert.equals(w.token:sub(1, 8), ins.holds[1].token)
      assert.is_true(w:release())
      ins = assert(client:inspect(name))
      assert.equals("none", ins.kind)
      assert.equals("free", ins.state)

      local sem = client:semaphore(name .. ":sem", 3)
      local p = assert(sem:acquire({ timeout = 0, ttl = 30 }))
      ins = assert(client:inspect(name .. ":sem"))
      assert.equals("semaphore", ins.kind)
      assert.equals(1, #ins.holds)
      assert.equals(tostring(p.permit), ins.holds[1].hold)
      assert.equals(3, ins.holds[1].holding)
      assert.is_true(p:release())
      local lock = assert(client:acquire(name .. ":mutex", { ttl = 10 }))
      assert.equals("mutex", assert(client:inspect(name .. ":mutex")).kind)
      assert.is_true(lock:release())
    end)
  end
end)
