-- The lock object's fields (docs/LUA-API.md, "The lock object") over a
-- hold's whole life: the facade reads a fenced lock's fence while the hold
-- lasts (the core handle forgets it after) and a plain lock's not at all,
-- from acquire's option or the client's default; either way every field
-- reads the same before and after release, or a lost lease, with either
-- driver.
local fixture = require "helpers.fixture"
local socket_driver = require "helpers.socket_driver"
local system = require "system"

local TOLERANT = { timeout = 0.5, connect_timeout = 1 }

local function with(base, extra)
  local out = {}
  for k, v in pairs(base) do
    out[k] = v
  end
  for k, v in pairs(extra) do
    out[k] = v
  end
  return out
end

describe("the lock object", function()
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

  for _, driver in ipairs({ "hiredis", "socket" }) do
    describe("with the " .. driver .. " driver", function()
      local function client(opts)
        local c = fx:client(with(TOLERANT, opts or {}))
        if driver == "socket" then
          c._driver = socket_driver
        end
        return c
      end

      it("keeps its name and token after release", function()
        local lock = assert(client():acquire("fa:plain", { timeout = 0 }))
        local stored = fx:cmd(1, "GET", "fa:plain")
        assert.is_true(lock:release())
        -- Read for the first time after the hold ended.
        assert.equals(stored, lock.token)
        assert.equals("fa:plain", lock.name)
        assert.is_nil(lock.fence)
        assert.is_nil(lock.fence_string)
        assert.equals(lock.token, lock.token)
      end)

      it("a fenced lock keeps its fence after release", function()
        for want = 1, 2 do
          local lock = assert(client():acquire("fa:fenced", { fenced = true,
            timeout = 0 }))
          assert.is_true(lock:release())
          assert.equals(want, lock.fence)
          assert.equals(tostring(want), lock.fence_string)
        end
      end)

      it("takes the fenced default of the client, and its override", function()
        local c = client({ fenced = true })
        local lock = assert(c:acquire("fa:default", { timeout = 0 }))
        assert.is_true(lock:release())
        assert.equals(1, lock.fence)
        lock = assert(c:acquire("fa:default"))
        assert.is_true(lock:release())
        assert.equals("2", lock.fence_string)
        lock = assert(c:acquire("fa:default", { fenced = false, timeout = 0 }))
        assert.is_true(lock:release())
        assert.is_nil(lock.fence)
        assert.is_nil(lock.fence_string)
      end)
    end)
  end

  it("a lost lease keeps its token and fence", function()
    local lock = assert(fx:client(TOLERANT):acquire("fa:lost", { ttl = 0.3,
      auto_renew = true, fenced = true, timeout = 0 }))
    local stored = fx:cmd(1, "GET", "fa:lost")
    fx:cmd(1, "SET", "fa:lost", "someone else")
    for _ = 1, 300 do -- the renewer finds out within a renewal period
      if lock:lost() then
        break
      end
      system.sleep(0.01)
    end
    assert.same({ true, "not owned" }, { lock:lost() })
    assert.equals(stored, lock.token)
    assert.equals(1, lock.fence)
    assert.equals("1", lock.fence_string)
  end)

  -- With the blocking driver the facade takes a released lock's core
  -- handle again for the next acquire of its name (bindings/lua/acquire.c)
  -- and leaves the released object a handle that never held anything.
  describe("a released lock's handle, taken again", function()
    local function pttl(name)
      return fx:cmd(1, "PTTL", name)
    end

    it("serves the next acquire of the name", function()
      local c = fx:client(TOLERANT)
      local first = assert(c:acquire("fa:again", { timeout = 0 }))
      local handle = first._handle
      assert.is_true(first:release())
      local second = assert(c:acquire("fa:again", { timeout = 0 }))
      assert.equals(handle, second._handle)
      assert.are_not.equal(first.token, second.token)
      assert.equals(second.token, fx:cmd(1, "GET", "fa:again"))
      -- Another name gets a handle of its own.
      local other = assert(c:acquire("fa:other", { timeout = 0 }))
      assert.are_not.equal(handle, other._handle)
      assert.is_true(other:release())
      assert.is_true(second:release())
    end)

    it("a released object cannot reach the next hold", function()
      local c = fx:client(TOLERANT)
      local first = assert(c:acquire("fa:stale", { timeout = 0 }))
      local token = first.token
      assert.is_true(first:release())
      local second = assert(c:acquire("fa:stale", { timeout = 0 }))
      -- What the released object says is what it said before the reuse.
      assert.same({ nil, "not held" }, { first:release() })
      assert.same({ nil, "not held" }, { first:extend(10) })
      assert.is_false(first:held())
      assert.equals(0, first:validity())
      assert.is_false(first:lost())
      assert.is_true(first:check())
      assert.equals('hiredlock.lock "fa:stale" (not held)', tostring(first))
      assert.equals(token, first.token)
      local ok, err = pcall(first.extend, first, -1)
      assert.is_false(ok)
      assert.matches("^bad argument #1 to 'extend' %(ttl must be between ",
        err)
      -- The next hold is untouched.
      assert.equals(second.token, fx:cmd(1, "GET", "fa:stale"))
      assert.is_true(second:held())
      assert.is_true(pttl("fa:stale") > 29000)
      assert.is_true(second:release())
      assert.same({ nil, "not held" }, { second:release() })
    end)

    it("carries nothing of its earlier holds", function()
      local c = fx:client(TOLERANT)
      local seen, count = {}, 0
      local last_fence = 0
      local stale, held_on = {}, nil
      for i = 1, 40 do
        -- Plain holds on one handle, then fenced ones on another.
        local lock = assert(c:acquire("fa:fresh", { fenced = i > 20,
          timeout = 0 }))
        -- A fresh token each hold (128 bits of CSPRNG, 32 hex digits),
        -- the one on the master, and a fence only when asked for, above
        -- every earlier one.
        assert.matches("^%x+$", lock.token)
        assert.equals(32, #lock.token)
        assert.is_nil(seen[lock.token])
        seen[lock.token] = true
        count = count + 1
        assert.equals(lock.token, fx:cmd(1, "GET", "fa:fresh"))
        if i > 20 then
          assert.is_true(lock.fence > last_fence)
          last_fence = lock.fence
        else
          assert.is_nil(lock.fence)
        end
        -- The validity of this hold, not what an earlier one left.
        assert.is_true(lock:validity() > 29)
        if i == 2 then
          assert.is_true(lock:extend(5)) -- a shorter TTL on this hold only
        end
        held_on = lock._handle
        assert.is_true(lock:release())
        stale[#stale + 1] = lock
      end
      assert.equals(40, count)
      -- Every released object still says what it said after its release,
      -- whatever holds its old handle served since, and cannot touch the
      -- hold on it now.
      local lock = assert(c:acquire("fa:fresh", { fenced = true,
        timeout = 0 }))
      -- The handle the fenced holds had: this test's point.
      assert.equals(held_on, lock._handle)
      -- (the released object's handle first: the husk is made on first use)
      assert.equals(stale[40]._handle, c._husk)
      assert.is_true(lock.fence > last_fence)
      for i, old in ipairs(stale) do
        assert.same({ nil, "not held" }, { old:release() })
        assert.same({ nil, "not held" }, { old:extend(1) })
        assert.is_false(old:held())
        assert.equals(0, old:validity())
        assert.is_true(seen[old.token])
        if i <= 20 then
          assert.is_nil(old.fence)
        else
          assert.equals(last_fence - 40 + i, old.fence)
        end
      end
      assert.is_true(lock:held())
      assert.equals(lock.token, fx:cmd(1, "GET", "fa:fresh"))
      assert.is_true(pttl("fa:fresh") > 29000)
      assert.is_true(lock:release())
    end)

    it("a stale object's release after the key expired and was taken again",
      function()
        local c = fx:client(TOLERANT)
        local first = assert(c:acquire("fa:expired", { ttl = 0.2,
          timeout = 0 }))
        system.sleep(0.3) -- expired: the object still has the handle
        assert.same({ nil, "not owned" }, { first:release() })
        -- "not owned" ended the hold without a release: the handle stays
        -- with the object, and the next acquire makes its own.
        local second = assert(c:acquire("fa:expired", { ttl = 0.2,
          timeout = 0 }))
        assert.are_not.equal(first._handle, second._handle)
        assert.same({ nil, "not held" }, { first:release() })
        assert.equals(second.token, fx:cmd(1, "GET", "fa:expired"))
        assert.is_true(second:release())
      end)

    it("a handle that is not one of its own is refused, never used",
      function()
        local c = fx:client(TOLERANT)
        -- Whatever sits in the spares, the next acquire makes a handle.
        c._spares["fa:odd"] = {}
        local lock = assert(c:acquire("fa:odd", { timeout = 0 }))
        assert.is_true(lock:release())
        c._spares["fa:odd"] = newproxy and newproxy(true) or io.stdout
        lock = assert(c:acquire("fa:odd", { timeout = 0 }))
        -- A lock object whose handle was replaced raises; the hold stays.
        local handle = lock._handle
        lock._handle = {}
        local ok, err = pcall(lock.release, lock)
        assert.is_false(ok)
        assert.matches("hiredlock.core.lock expected", err)
        assert.equals(lock.token, fx:cmd(1, "GET", "fa:odd"))
        lock._handle = handle
        assert.is_true(lock:release())
      end)

    it("only with the settings of the acquire at hand", function()
      local c = fx:client(TOLERANT)
      local opts = { ttl = 10, timeout = 0 }
      assert.is_true(assert(c:acquire("fa:ttl", opts)):release())
      opts.ttl = 20 -- the same table, changed: read again
      local lock = assert(c:acquire("fa:ttl", opts))
      assert.is_true(pttl("fa:ttl") > 10000)
      -- An extend with a TTL changes the handle's: not the next acquire's.
      assert.is_true(lock:extend(40))
      assert.is_true(lock:release())
      lock = assert(c:acquire("fa:ttl", { ttl = 20, timeout = 0 }))
      assert.is_true(pttl("fa:ttl") <= 20000)
      assert.is_true(lock:release())
      -- Fenced or not, an owner or not.
      lock = assert(c:acquire("fa:ttl", { fenced = true, timeout = 0 }))
      assert.equals(1, lock.fence)
      assert.is_true(lock:release())
      lock = assert(c:acquire("fa:ttl", { timeout = 0 }))
      assert.is_nil(lock.fence)
      assert.equals("1", fx:cmd(1, "GET", "fa:ttl{fa:ttl}:fence")) -- no INCR
      assert.is_true(lock:release())
      lock = assert(c:acquire("fa:ttl", { owner = "me", timeout = 0 }))
      assert.equals("me", assert(c:inspect("fa:ttl")).owner)
      assert.is_true(lock:release())
      lock = assert(c:acquire("fa:ttl", { timeout = 0 }))
      assert.is_nil(assert(c:inspect("fa:ttl")).owner)
      assert.is_true(lock:release())
    end)

    it("reads options through a metatable, as it always did", function()
      local c = fx:client(TOLERANT)
      local opts = setmetatable({ timeout = 0 }, { __index = { ttl = 7 } })
      for _ = 1, 2 do
        local lock = assert(c:acquire("fa:meta", opts))
        assert.is_true(pttl("fa:meta") <= 7000)
        assert.is_true(lock:release())
      end
    end)

    it("never a lease's", function()
      local c = fx:client(TOLERANT)
      local first = assert(c:acquire("fa:lease", { auto_renew = true,
        timeout = 0 }))
      local handle = first._handle
      assert.is_true(first:release())
      assert.equals(handle, first._handle)
      local second = assert(c:acquire("fa:lease", { auto_renew = true,
        timeout = 0 }))
      assert.are_not.equal(handle, second._handle)
      assert.is_true(second:release())
    end)

    it("a failed acquire's handle serves the next try", function()
      local c = fx:client(TOLERANT)
      local holder = assert(fx:client(TOLERANT):acquire("fa:busy",
        { timeout = 0 }))
      assert.same({ nil, "timeout" }, { c:acquire("fa:busy", { timeout = 0 }) })
      local spare = c._spares["fa:busy"]
      assert.is_not_nil(spare)
      assert.same({ nil, "timeout" }, { c:acquire("fa:busy", { timeout = 0 }) })
      assert.equals(spare, c._spares["fa:busy"])
      assert.is_true(holder:release())
      local lock = assert(c:acquire("fa:busy", { timeout = 0 }))
      assert.equals(spare, lock._handle)
      -- Held, the handle serves no other acquire of the name (whether the
      -- spares still list it is the facade's business: the C facade keeps
      -- it there, LuaJIT's takes it out): the failed try makes its own.
      assert.same({ nil, "timeout" }, { c:acquire("fa:busy", { timeout = 0 }) })
      assert.are_not.equal(spare, c._spares["fa:busy"])
      assert.is_true(lock:release())
    end)

    it("never the handle of a hold that ran out unreleased", function()
      local c = fx:client(TOLERANT)
      local opts = { ttl = 1, timeout = 0 }
      -- Warm: the name's handle has served a hold and is free again.
      assert.is_true(assert(c:acquire("fa:ranout", opts)):release())
      local first = assert(c:acquire("fa:ranout", opts))
      local handle = first._handle
      system.sleep(1.1) -- expired, never released: the object still owns it
      assert.is_false(first:held())
      -- The same settings: only its owner keeps the handle from it.
      local second = assert(c:acquire("fa:ranout", opts))
      assert.are_not.equal(handle, second._handle)
      assert.equals(handle, first._handle)
      -- The stale object's release is its own: the key is no longer its
      -- token, and the hold that came after is left alone.
      assert.same({ nil, "not owned" }, { first:release() })
      assert.equals(second.token, fx:cmd(1, "GET", "fa:ranout"))
      assert.is_true(second:release())
    end)
  end)

  -- The binding converts an acquire's ttl and timeout once per client while
  -- they repeat (bindings/lua/acquire.c): a changed value takes effect at
  -- once, and a refused one is refused after an accepted one as before.
  it("takes each acquire's own ttl and timeout, however they vary", function()
    local c = fx:client(TOLERANT)
    local other = fx:client(TOLERANT)
    local pttls = {}
    for i, ttl in ipairs({ 30, 30, 10, 30, 2.5 }) do
      local lock = assert(c:acquire("fa:ttls", { ttl = ttl, timeout = 0 }))
      pttls[i] = fx:cmd(1, "PTTL", "fa:ttls")
      assert.is_true(pttls[i] > ttl * 1000 - 1000 and pttls[i] <= ttl * 1000,
        ("ttl %s: pttl %d"):format(ttl, pttls[i]))
      assert.is_true(lock:release())
    end
    local held = assert(other:acquire("fa:ttls", { ttl = 30, timeout = 0 }))
    for _, timeout in ipairs({ 0, 0.05, 0 }) do
      local lock, err = c:acquire("fa:ttls", { ttl = 30, timeout = timeout })
      assert.is_nil(lock)
      assert.equals("timeout", err)
    end
    assert.is_true(held:release())
    for _, bad in ipairs({ { ttl = -1 }, { ttl = 0 / 0 }, { timeout = -1 },
      { ttl = 30, timeout = 0 / 0 } }) do
      local ok, err = pcall(c.acquire, c, "fa:ttls", bad)
      assert.is_false(ok)
      assert.matches("bad argument #2 to 'acquire'", err, 1, true)
    end
    local lock = assert(c:acquire("fa:ttls", { ttl = 30, timeout = 0 }))
    assert.is_true(lock:release())
  end)

  it("fields a caller sets stay the caller's", function()
    local lock = assert(fx:client(TOLERANT):acquire("fa:own", { timeout = 0 }))
    lock.note = "mine"
    assert.equals("mine", lock.note)
    assert.is_nil(lock.nothing)
    assert.is_true(lock:release())
  end)

  -- With the blocking driver the object is no table (bindings/lua/object.c):
  -- what a caller does with a table's fields still works on it.
  it("a member a caller sets reads as set; the hold is untouched", function()
    local c = fx:client(TOLERANT)
    local lock = assert(c:acquire("fa:set", { fenced = true, timeout = 0 }))
    local token, fence = lock.token, lock.fence
    lock.token, lock.fence, lock[1], lock[lock] = "mine", 0, "one", "self"
    assert.equals("mine", lock.token)
    assert.equals(0, lock.fence)
    assert.equals("one", lock[1])
    assert.equals("self", lock[lock])
    assert.equals("fa:set", lock.name)
    assert.equals(token, fx:cmd(1, "GET", "fa:set"))
    assert.is_true(lock:held())
    assert.is_true(lock:release()) -- the hold's own token, not the field
    assert.equals(0, fx:cmd(1, "EXISTS", "fa:set"))
    assert.is_true(fence >= 1)
    local ok, err = pcall(function() lock[nil] = 1 end)
    assert.is_false(ok)
    assert.matches("index is nil", err)
  end)

  it("reads a member only when asked, and the same every time", function()
    local c = fx:client(TOLERANT)
    local lock = assert(c:acquire("fa:lazy", { fenced = true, timeout = 0 }))
    local stored = fx:cmd(1, "GET", "fa:lazy")
    assert.is_true(lock:release())
    -- The handle serves the next holds; the first object still has its own.
    for _ = 1, 3 do
      assert.is_true(assert(c:acquire("fa:lazy", { fenced = true,
        timeout = 0 })):release())
    end
    assert.equals(stored, lock.token)
    assert.equals(lock.token, lock.token)
    assert.equals(1, lock.fence)
    assert.equals("1", lock.fence_string)
    assert.is_nil(lock.permit)
    assert.equals(c, lock._client)
    assert.equals("fa:lazy", lock.name)
    assert.equals(getmetatable(lock).__index, getmetatable(lock))
    assert.is_function(lock.release)
    assert.is_function(lock.extend)
  end)
end)
