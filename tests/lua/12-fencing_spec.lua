-- Fenced locks from Lua (docs/LUA-API.md, "Fencing"): the option on acquire
-- and as a client default, the fence fields (a number, and the exact
-- decimal string), the fence round through the sans-I/O seam (the
-- luasocket test driver), fences strictly increasing over hundreds of
-- grants (thousands in make reliability) by several processes while masters
-- are stopped, resumed and restarted, and hiredlock.fenced_write on the
-- store.
local fixture = require "helpers.fixture"
local hiredlock = require "hiredlock"
local socket_driver = require "helpers.socket_driver"
local resp = require "helpers.resp"

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

-- Fences 1, 2, 3 on a name, the counter on every master, no TTL on it.
local function three_grants(fx, client, name, opts)
  for want = 1, 3 do
    local lock = assert(client:acquire(name, opts))
    assert.equals(want, lock.fence)
    assert.equals(tostring(want), lock.fence_string)
    local key = lock._handle:fence_key()
    for i = 1, fx.n do
      assert.equals(tostring(want), fx:cmd(i, "GET", key))
      assert.equals(-1, fx:cmd(i, "PTTL", key))
    end
    assert.is_true(lock:release())
  end
end

describe("fenced locks", function()
  for _, n in ipairs({ 1, 5 }) do
    describe("on " .. n .. " master" .. (n > 1 and "s" or ""), function()
      local fx

      setup(function()
        fx = fixture.start(n)
      end)

      teardown(function()
        fx:stop()
      end)

      before_each(function()
        fx:flush()
      end)

      it("take strictly increasing fences, with either driver", function()
        local client = fx:client(TOLERANT)
        three_grants(fx, client, "lf:a", { fenced = true, timeout = 0 })
        -- Through the seam (the luasocket driver): the SET and INCR of one
        -- round, two replies each, while the counters are in step ...
        client._driver = socket_driver
        local rounds = socket_driver.rounds
        local lock = assert(client:acquire("lf:a", { fenced = true,
          timeout = 0 }))
        assert.equals(4, lock.fence)
        assert.equals(rounds + 1, socket_driver.rounds)
        assert.is_true(lock:release())
        -- ... and the fence round once master 1's counter ran ahead.
        fx:cmd(1, "SET", lock._handle:fence_key(), "40")
        rounds = socket_driver.rounds
        lock = assert(client:acquire("lf:a", { fenced = true, timeout = 0 }))
        assert.equals(41, lock.fence)
        assert.equals(rounds + (n > 1 and 2 or 1), socket_driver.rounds)
        for i = 1, n do
          assert.equals("41", fx:cmd(i, "GET", lock._handle:fence_key()))
        end
        assert.is_true(lock:release())
      end)

      it("take the client's default, which acquire can turn off", function()
        local client = fx:client(with(TOLERANT, { fenced = true }))
        three_grants(fx, client, "lf:b", { timeout = 0 })
        local plain = assert(client:acquire("lf:b", { fenced = false,
          timeout = 0 }))
        assert.is_nil(plain.fence)
        assert.is_nil(plain.fence_string)
        assert.is_nil(plain._handle:fence_key())
        assert.is_true(plain:release())
        assert.equals("3", fx:cmd(1, "GET", "lf:b{lf:b}:fence"))
      end)
    end)
  end

  describe("on one master", function()
    local fx

    setup(function()
      fx = fixture.start(1)
    end)

    teardown(function()
      fx:stop()
    end)

    before_each(function()
      fx:flush()
    end)

    it("are exact to 2^63 - 1 in the string, in 5.4 in the number", function()
      local client = fx:client(TOLERANT)
      fx:cmd(1, "SET", "lf:top{lf:top}:fence", "9223372036854775805")
      local lock = assert(client:acquire("lf:top", { fenced = true,
        timeout = 0 }))
      assert.equals("9223372036854775806", lock.fence_string)
      assert.is_true(lock:release())
      -- Through the seam too: the INCR's reply reaches the core exact,
      -- as its digits where a Lua number would round it.
      client._driver = socket_driver
      lock = assert(client:acquire("lf:top", { fenced = true, timeout = 0 }))
      assert.equals("9223372036854775807", lock.fence_string)
      if math.type then
        assert.equals(math.maxinteger, lock.fence)
      else
        assert.equals(2 ^ 63, lock.fence) -- the nearest double
      end
      assert.is_true(lock:release())
      local again, err = client:acquire("lf:top", { fenced = true,
        timeout = 0 })
      assert.is_nil(again)
      assert.matches("^server error: .*overflow", err)
      assert.equals(0, fx:cmd(1, "EXISTS", "lf:top"))
    end)

    it("leave plain locks alone", function()
      local client = fx:client(TOLERANT)
      local lock = assert(client:acquire("lf:plain", { timeout = 0 }))
      assert.is_nil(lock.fence)
      assert.is_true(lock:release())
      assert.same({}, fx:cmd(1, "KEYS", "*"))
    end)

    it("refuse a fenced option that is not a boolean", function()
      local client = fx:client()
      assert.has_error(function()
        client:acquire("lf:bad", { fenced = 1 })
      end, "bad argument #2 to 'acquire' (fenced must be a boolean, got number)")
      assert.has_error(function()
        hiredlock.new(fx.urls, { fenced = "yes" })
      end, "bad argument #2 to 'new' (fenced must be a boolean, got string)")
    end)

    it("let fenced_write refuse an older fence on the store", function()
      -- The test's RESP client has lua-resty-redis's eval() shape.
      local red = assert(resp.connect(fx.ports[1]))
      assert.equals("OK", hiredlock.fenced_write(red, "doc:fence", "5", "SET",
        "doc", "five"))
      assert.equals("OK", hiredlock.fenced_write(red, "doc:fence", 5, "SET",
        "doc", "five again"))
      local res, err = hiredlock.fenced_write(red, "doc:fence", 4, "SET", "doc",
        "four")
      assert.is_nil(res)
      assert.equals("STALEFENCE fence 4 is older than 5", err)
      assert.equals("five again", red:call("GET", "doc"))
      assert.equals("five again", hiredlock.fenced_write(red,
        { "doc:fence", "doc" }, "9223372036854775807", "GET", "doc"))
      assert.equals("9223372036854775807", red:call("GET", "doc:fence"))
      assert.has_error(function()
        hiredlock.fenced_write(red, "doc:fence", "9223372036854775808", "GET",
          "doc")
      end, "bad argument #3 to 'fenced_write' (fence must be from 1 to "
        .. "9223372036854775807, got 9223372036854775808)")
      assert.has_error(function()
        hiredlock.fenced_write(red, "doc:fence", 0.5, "GET", "doc")
      end)
      assert.has_error(function()
        hiredlock.fenced_write(red, "doc:fence", "7")
      end, "bad argument #4 to 'fenced_write' (a command to run is needed)")
      assert.equals(hiredlock.FENCED_WRITE_SCRIPT,
        require("hiredlock.core").FENCED_WRITE_SCRIPT)
    end)

    it("accepts equal fences: one hold's, unless a failover lost increments", function()
      -- docs/SAFETY.md, "Equal fences": with counters that keep every
      -- increment only one hold has a fence; a failover that loses a
      -- holder's SET loses its INCR too, and the next holder gets the
      -- same fence: the store then accepts both (played by setting the
      -- master back as the promoted replica would have it).
      local red = assert(resp.connect(fx.ports[1]))
      local c = hiredlock.new(fx.urls[1], { timeout = 0.5 })
      local a = assert(c:acquire("lf:equal", { fenced = true, timeout = 0 }))
      local fence = a.fence_string
      assert.equals("OK", hiredlock.fenced_write(red, "eq:fence", fence, "SET", "eq", "A"))
      assert.equals(2, hiredlock.fenced_write(red, "eq:fence", fence, "APPEND", "eq", "a"))
      fx:cmd(1, "DEL", "lf:equal")
      fx:cmd(1, "SET", a._handle:fence_key(), tostring(tonumber(fence) - 1))
      local b = assert(c:acquire("lf:equal", { fenced = true, timeout = 0 }))
      assert.equals(fence, b.fence_string)
      assert.are_not.equal(a.token, b.token)
      assert.equals(3, hiredlock.fenced_write(red, "eq:fence", b.fence_string, "APPEND", "eq", "B"))
      assert.equals(4, hiredlock.fenced_write(red, "eq:fence", fence, "APPEND", "eq", "a"))
      assert.equals("AaBa", red:call("GET", "eq"))
      assert.is_true(b:release())
      local d = assert(c:acquire("lf:equal", { fenced = true, timeout = 0 }))
      assert.equals(tostring(tonumber(fence) + 1), d.fence_string)
      assert.equals("OK", hiredlock.fenced_write(red, "eq:fence", d.fence_string, "SET", "eq", "D"))
      local res, err = hiredlock.fenced_write(red, "eq:fence", fence, "SET", "eq", "A")
      assert.is_nil(res)
      assert.equals(("STALEFENCE fence %s is older than %s"):format(fence, d.fence_string), err)
      assert.is_true(d:release())
    end)
  end)

  -- Several processes, hundreds of grants, masters stopped, resumed and
  -- restarted from their AOF in a loop beside them: every fence is greater
  -- than that of every grant that returned before its acquire began.
  -- Grants a process: 250 in make test (the C core's test_fence_faults, 4 x
  -- 600 grants under the same faults, runs in the c, c-asan and c-hiredis1
  -- suites), 700 in make reliability (scripts/reliability.sh): at N = 1 most
  -- of the run waits out keys a stopped master kept. Whatever the grants,
  -- the processes go on until every master has been through FAULT_ROUNDS
  -- rounds of pause, resume and restart.
  local grants_each = tonumber(os.getenv("HRL_FENCE_GRANTS_EACH") or "250")
  local FAULT_ROUNDS = 2
  for _, n in ipairs({ 1, 5 }) do
    it("stay increasing under faults, " .. n .. " master(s)", function()
      local fx = fixture.start(n, "--aof")
      local here = debug.getinfo(1, "S").source:match("^@(.*)12%-fencing_spec%.lua$")
      -- The fault loop: each step unless told to stop, then it says so.
      local stop = os.tmpname()
      os.remove(stop)
      local steps = {}
      for i = 1, n do
        for _, verb in ipairs({ "pause", "resume", "restart" }) do
          steps[#steps + 1] = ("sleep 0.05; [ -e '%s' ] || '%s' %s '%s' %d")
            :format(stop, fixture.launcher, verb, fx.dir, i)
        end
      end
      local rounds = stop .. ".rounds" -- a line a round
      os.execute(("(while [ ! -e '%s' ]; do %s; [ -e '%s' ] || echo >>'%s'; "
        .. "done; touch '%s.done') >/dev/null 2>&1 &")
        :format(stop, table.concat(steps, "; "), stop, rounds, stop))
      local cmd = {}
      for _ = 1, 3 do
        cmd[#cmd + 1] = ("'%s' '%shelpers/fence_worker.lua' '%s' lf:faults %d '%s' %d &")
          :format(fixture.interpreter(), here, table.concat(fx.urls, ","),
            grants_each, rounds, FAULT_ROUNDS)
      end
      cmd[#cmd + 1] = "wait"
      local p = assert(io.popen(table.concat(cmd, " ")))
      local grants, done = {}, 0
      for line in p:lines() do
        local t0, t1, fence = line:match("^(%S+) (%S+) (%d+)$")
        if t0 then
          grants[#grants + 1] = { tonumber(t0), tonumber(t1), fence }
        elseif line:match("^done %d+$") then
          done = done + 1
        end
      end
      p:close()
      local f = io.open(stop, "w")
      f:close()
      for _ = 1, 200 do -- the loop ends within a step (a restart)
        if io.open(stop .. ".done") then
          break
        end
        os.execute("sleep 0.05")
      end
      local rounds_seen = 0
      local rf = io.open(rounds)
      if rf then
        for _ in rf:lines() do
          rounds_seen = rounds_seen + 1
        end
        rf:close()
      end
      os.remove(stop)
      os.remove(stop .. ".done")
      os.remove(rounds)
      fx:stop()
      assert.equals(3, done)
      assert.is_true(#grants >= 3 * grants_each, #grants .. " grants")
      assert.is_true(rounds_seen >= FAULT_ROUNDS, rounds_seen .. " rounds")
      -- Fences as strings compared exactly: by length, then as text.
      local function less(a, b)
        return #a < #b or (#a == #b and a < b)
      end
      local seen, ends = {}, {}
      for _, g in ipairs(grants) do
        assert.is_nil(seen[g[3]], "fence " .. g[3] .. " given twice")
        seen[g[3]] = true
        ends[#ends + 1] = g
      end
      table.sort(grants, function(a, b) return a[1] < b[1] end)
      table.sort(ends, function(a, b) return a[2] < b[2] end)
      local e, top, bad = 1, "0", 0
      for _, g in ipairs(grants) do
        while e <= #ends and ends[e][2] < g[1] do
          if less(top, ends[e][3]) then
            top = ends[e][3]
          end
          e = e + 1
        end
        if not less(top, g[3]) then
          bad = bad + 1
        end
      end
      assert.equals(0, bad)
    end)
  end
end)
