-- Read-write locks and semaphores from Lua (docs/LUA-API.md, "Read-write
-- locks and semaphores"): client:rwlock and client:semaphore, the mode and
-- permits options of acquire with the core's words, with the C driver and
-- through the sans-I/O seam (the luasocket driver, as the cosocket driver
-- runs it), on one and five masters.
local fixture = require "helpers.fixture"
local socket_driver = require "helpers.socket_driver"

local TOLERANT = { timeout = 0.5, connect_timeout = 1, retry_delay = 0.01,
  retry_jitter = 0.005 }

describe("read-write locks and semaphores", function()
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

      for _, driver in ipairs({ "C", "seam" }) do
        local function client()
          local c = fx:client(TOLERANT)
          if driver == "seam" then
            c._driver = socket_driver
          end
          return c
        end

        it("share reads and keep a write alone (" .. driver .. ")", function()
          local rw = client():rwlock("lrw:a")
          local r1 = assert(rw:read({ timeout = 0 }))
          local r2 = assert(rw:read({ timeout = 0 }))
          assert.are_not.equal(r1.token, r2.token)
          assert.is_nil(r1.permit)
          for i = 1, n do
            assert.equals(2, fx:cmd(i, "HLEN", "lrw:a"))
          end
          local w, err = rw:write({ timeout = 0 })
          assert.is_nil(w)
          assert.equals("timeout", err)
          assert.is_true(r1:release())
          assert.is_true(r2:release())
          w = assert(rw:write({ timeout = 0, ttl = 10 }))
          assert.is_nil((rw:read({ timeout = 0 })))
          assert.is_true(w:release())
          assert.equals(0, fx:cmd(1, "EXISTS", "lrw:a"))
        end)

        it("count and number permits (" .. driver .. ")", function()
          local sem = client():semaphore("lsem:a", 2)
          local p1 = assert(sem:acquire({ timeout = 0 }))
          local p2 = assert(sem:acquire({ timeout = 0 }))
          local seen = { [p1.permit] = true, [p2.permit] = true }
          assert.is_true(seen[1] and seen[2])
          local p3, err = sem:acquire({ timeout = 0 })
          assert.is_nil(p3)
          assert.equals("timeout", err)
          local freed = p1.permit
          assert.is_true(p1:release())
          p3 = assert(sem:acquire({ timeout = 0 }))
          assert.equals(freed, p3.permit)
          assert.is_true(p2:release())
          assert.is_true(p3:release())
        end)
      end

      it("wait for a permit and get the one released", function()
        local c = fx:client(TOLERANT)
        local sem = c:semaphore("lsem:b", 1)
        local held = assert(sem:acquire({ timeout = 0, ttl = 0.5 }))
        -- never released: the waiter gets it when its TTL runs out
        local p = assert(sem:acquire({ timeout = 10 }))
        assert.equals(1, p.permit)
        assert.is_false(held:held())
        assert.is_true(p:release())
      end)
    end)
  end

  describe("arguments", function()
    local fx

    setup(function()
      fx = fixture.start(1)
    end)

    teardown(function()
      fx:stop()
    end)

    it("are checked with the core's words", function()
      local c = fx:client(TOLERANT)
      assert.has_error(function()
        c:acquire("x", { mode = "shared" })
      end, "bad argument #2 to 'acquire' (mode must be one of lock, read, "
        .. "write, permit, got 'shared')")
      assert.has_error(function()
        c:semaphore("x", 0):acquire()
      end, "bad argument #2 to 'acquire' (permits must be a whole number "
        .. "from 1 to 100000, got 0)")
      assert.has_error(function()
        c:acquire("x", { mode = "read", permits = 2 })
      end, "bad argument #2 to 'acquire' (permits is for a semaphore's "
        .. "permit (mode permit), not mode read)")
      assert.has_error(function()
        c:acquire("x", { mode = 3 })
      end, "bad argument #2 to 'acquire' (mode must be a string, got number)")
    end)
  end)
end)
