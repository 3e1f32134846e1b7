-- A Redis Cluster as one master (redis+cluster://) from plain Lua, with the
-- C core's driver and with the luasocket test driver (which proves the
-- protocol's redirects are enough for a driver): the key on its slot's
-- node, MOVED after a migration, ASK while one is half done (the launcher's
-- migrate, stage by stage), a held lock that moves, and the cluster as one
-- member of a quorum.
local fixture = require "helpers.fixture"
local hiredlock = require "hiredlock"
local socket_driver = require "helpers.socket_driver"

local TOLERANT = { connect_timeout = 1, timeout = 0.5, retry_delay = 0.01, retry_jitter = 0.005 }

--- A counter of a node's INFO section, 0 when absent.
local function stat(fx, i, section, field)
  local text = fx:cmd(i, "INFO", section)
  return tonumber(text:match(field .. "(%d+)")) or 0
end

--- Whether node i has key, as a client an ASK sent there sees it.
local function has_key(fx, i, key)
  fx:cmd(i, "ASKING")
  local ok, n = pcall(fx.cmd, fx, i, "EXISTS", key)
  return ok and n == 1
end

for _, driver in ipairs({ "hiredis", "luasocket" }) do
  describe("a Redis Cluster as one master (" .. driver .. " driver)", function()
    local fx

    setup(function()
      fx = fixture.start(3, "--cluster")
    end)

    teardown(function()
      fx:stop()
    end)

    local function client(urls)
      local c = hiredlock.new(urls or fx.cluster_url, TOLERANT)
      if driver == "luasocket" then
        c._driver = socket_driver
      end
      return c
    end

    it("puts the key on its slot's node and learns the slot from MOVED", function()
      local c = client()
      local before = 0
      for i = 1, 3 do
        before = before + stat(fx, i, "errorstats", "errorstat_MOVED:count=")
      end
      for k = 1, 12 do
        local name = driver .. ":learn:" .. k
        local _, owner = fx:slot(name)
        for _ = 1, 3 do
          local lock = assert(c:acquire(name, { timeout = 0 }))
          assert.equals(lock.token, fx:cmd(owner, "GET", name))
          assert.is_true(lock:release())
        end
      end
      local after = 0
      for i = 1, 3 do
        after = after + stat(fx, i, "errorstats", "errorstat_MOVED:count=")
      end
      -- at most one MOVED per name, on its first acquire
      assert.is_true(after - before >= 1 and after - before <= 12)
      for k = 1, 12 do -- (EXISTS on the other nodes answers MOVED too)
        assert.equals(0, fx:count_key(driver .. ":learn:" .. k))
      end
    end)

    it("follows MOVED once a slot moved", function()
      local c = client()
      local name = driver .. ":moved"
      local slot, owner = fx:slot(name)
      local to = owner % 3 + 1
      assert.is_true(assert(c:acquire(name, { timeout = 0 })):release())
      fx:migrate(slot, to)
      local moved = stat(fx, owner, "errorstats", "errorstat_MOVED:count=")
      local lock = assert(c:acquire(name, { timeout = 0 }))
      assert.equals(moved + 1, stat(fx, owner, "errorstats", "errorstat_MOVED:count="))
      assert.equals(lock.token, fx:cmd(to, "GET", name))
      assert.is_true(lock:release())
      assert.equals(0, fx:count_key(name))
      fx:migrate(slot, owner)
    end)

    it("follows ASK with ASKING while a slot is half moved, and keeps a held lock", function()
      local c, rival = client(), client()
      local name = driver .. ":ask"
      local slot, from = fx:slot(name)
      local to = from % 3 + 1
      local lock = assert(c:acquire(name, { timeout = 0 }))
      fx:migrate(slot, to, "begin")
      assert.same({ nil, "timeout" }, { rival:acquire(name, { timeout = 0 }) })
      assert.is_true(lock:release())
      local ask = stat(fx, from, "errorstats", "errorstat_ASK:count=")
      local asking = stat(fx, to, "commandstats", "cmdstat_asking:calls=")
      lock = assert(c:acquire(name, { timeout = 0 }))
      assert.is_true(stat(fx, from, "errorstats", "errorstat_ASK:count=") > ask)
      assert.is_true(stat(fx, to, "commandstats", "cmdstat_asking:calls=") > asking)
      assert.is_true(has_key(fx, to, name))
      assert.is_false(has_key(fx, from, name))
      assert.same({ nil, "timeout" }, { rival:acquire(name, { timeout = 0 }) })
      assert.is_true(lock:extend())
      assert.is_true(lock:release())
      assert.is_false(has_key(fx, to, name) or has_key(fx, from, name))
      -- held while its key moves: extend and release follow it
      fx:migrate(slot, from, "end")
      lock = assert(c:acquire(name, { timeout = 0 }))
      fx:migrate(slot, to, "begin")
      fx:migrate(slot, to, "keys")
      assert.is_true(has_key(fx, to, name))
      assert.same({ nil, "timeout" }, { rival:acquire(name, { timeout = 0 }) })
      assert.is_true(lock:extend())
      fx:migrate(slot, to, "end")
      assert.is_true(lock:release())
      assert.equals(0, fx:count_key(name))
      assert.is_true(assert(rival:acquire(name, { timeout = 0 })):release())
      fx:migrate(slot, from)
    end)

    it("is one member of a quorum", function()
      local solo = fixture.start(2)
      local c = client({ fx.cluster_url, solo.urls[1], solo.urls[2] })
      assert.equals(3, c:masters())
      assert.equals(2, c:quorum())
      assert.is_true(c._handle:master_info(1).cluster)
      local name = driver .. ":member"
      local lock = assert(c:acquire(name, { timeout = 0 }))
      assert.equals(3, lock._handle:counts().ok)
      assert.equals(1, fx:count_key(name))
      assert.equals(2, solo:count_key(name))
      assert.is_true(lock:release())
      solo:stop()
    end)
  end)
end
