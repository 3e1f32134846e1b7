-- Read-write locks and semaphores from Lua (docs/LUA-API.md, "Read-write
-- locks and semaphores"): client:rwlock and client:semaphore, the mode and
-- permits options of acquire with the core's words, with the C driver and
-- through the sans-I/O seam (the luasocket driver, as the cosocket driver
-- runs it), on one and five masters.
local fixture = require "helpers.fixture"
local socket = require "socket"
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

        it("keep one kind per name (" .. driver .. ")", function()
          local c = client()
          local rw, sem = c:rwlock("lkind:a"), c:semaphore("lkind:a", 3)
          -- An acquire of another kind: nil and the core's words, at once
          -- (well within the 5 s some of them may wait).
          local function refused(acquire, held, asked)
            local t0 = socket.gettime()
            local lock, err = acquire()
            assert.is_true(socket.gettime() - t0 < 4)
            assert.is_nil(lock)
            assert.equals(("invalid argument: 'lkind:a' is a %s on 127.0.0.1:%d,"
              .. " not a %s (a name is one kind of lock)"):format(held,
              fx.ports[1], asked), err)
          end
          local function mutex(timeout)
            return function() return c:acquire("lkind:a", { timeout = timeout }) end
          end
          local function hold(obj, method, timeout)
            return function() return obj[method](obj, { timeout = timeout }) end
          end
          local r = assert(rw:read({ timeout = 0 }))
          local m, err = c:acquire("lkind:a", { timeout = 0 })
          assert.is_nil(m)
          assert.equals("timeout", err) -- SET NX alone: as for any holder
          refused(mutex(5), "read-write lock or semaphore", "lock")
          refused(hold(sem, "acquire", 0), "read-write lock", "semaphore")
          assert.is_true(r:release())
          m = assert(c:acquire("lkind:a", { timeout = 0 }))
          refused(hold(rw, "write", 5), "lock", "read-write lock")
          refused(hold(sem, "acquire", 0), "lock", "semaphore")
          assert.is_true(m:release())
          local p = assert(sem:acquire({ timeout = 0 }))
          refused(hold(rw, "read", 0), "semaphore", "read-write lock")
          refused(mutex(5), "read-write lock or semaphore", "lock")
          assert.is_true(p:release())
          assert.equals(0, fx:cmd(1, "EXISTS", "lkind:a"))
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
