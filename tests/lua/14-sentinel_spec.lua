-- A Sentinel-managed primary as one master (redis+sentinel://sentinels/
-- service) from plain Lua, with the C core's driver and with the luasocket
-- test driver (the protocol's question to a sentinel and its answer are
-- enough for a driver): the primary resolved, a failover (SENTINEL
-- FAILOVER; the deposed primary answers READONLY once a replica, and the
-- sentinels are asked again), a sentinel that is down, a service nobody
-- knows, and a waiter hearing its hand-off (the C core's driver).
local fixture = require "helpers.fixture"
local hiredlock = require "hiredlock"
local socket_driver = require "helpers.socket_driver"
local handoff = require "helpers.handoff"

local TOLERANT = { connect_timeout = 1, timeout = 0.5, retry_delay = 0.01, retry_jitter = 0.005 }

for _, driver in ipairs({ "hiredis", "luasocket" }) do
  describe("a Sentinel-managed primary as one master (" .. driver .. " driver)", function()
    local fx

    before_each(function()
      fx = fixture.start(2, "--sentinels 2")
    end)

    after_each(function()
      fx:stop()
    end)

    local function client(url)
      local c = hiredlock.new(url or fx.sentinel_url, TOLERANT)
      if driver == "luasocket" then
        c._driver = socket_driver
      end
      return c
    end

    it("takes the lock on the primary the sentinels name, and follows a failover", function()
      local c = client()
      assert.is_true(c._handle:master_info(1).sentinel)
      local name = driver .. ":failover"
      local old = fx:primary()
      for _ = 1, 3 do
        local lock = assert(c:acquire(name, { timeout = 0 }))
        assert.equals(lock.token, fx:cmd(old, "GET", name))
        assert.is_true(lock:release())
      end
      local new = fx:failover(true) -- the old primary a replica of the new
      assert.not_equals(old, new)
      local lock, err = c:acquire(name, { timeout = 0 })
      if not lock and driver == "luasocket" then
        -- This test driver does not replace a connection the server closed
        -- (Sentinel closes the deposed primary's clients): one failed try.
        assert.matches("^connection failed", err)
        lock, err = c:acquire(name, { timeout = 0 })
      end
      assert.is_nil(err)
      assert.equals(lock.token, fx:cmd(new, "GET", name))
      assert.is_true(lock:release())
      assert.is_nil(fx:cmd(new, "GET", name))
    end)

    if driver == "hiredis" then
      it("hears a release's hand-off, also after a failover", function()
        -- The subscriber asks a sentinel where the primary is, and again
        -- once the deposed primary closed it (before: no subscriber).
        for round = 1, 2 do
          if round == 2 then
            fx:failover(true)
          end
          local took = assert(handoff.after_release(fx.sentinel_url,
            "st:handoff:" .. round, handoff.PATIENT))
          assert.is_true(took < 3, "took " .. took) -- not the 20 s cap
        end
      end)
    end

    it("asks the next sentinel, and names a service nobody knows", function()
      fx:ctl("kill", "s1")
      local lock = assert(client():acquire(driver .. ":dead", { timeout = 0 }))
      assert.is_true(lock:release())
      local url = fx.sentinel_url:gsub("/hrl$", "/nope")
      local none, err = client(url):acquire(driver .. ":nope", { timeout = 0 })
      assert.is_nil(none)
      assert.truthy(err:find("no primary known for service nope", 1, true), err)
    end)
  end)
end
