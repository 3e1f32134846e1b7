-- The wire format every runtime shares (docs/DESIGN.md, section 3), checked in
-- Redis: key = key_prefix .. name, value = a fresh 32-lowercase-hex token,
-- SET NX PX for the TTL, the scripts by their digests, and the waiting
-- queue beside the key.
local fixture = require "helpers.fixture"
local hiredlock = require "hiredlock"

local QUEUE_SHA = "355d797da61ba015dee7563c90be63c1a738b4c3"
local EXTEND_SHA = "36e94d1c6e02fcefaa7ee5d79eee614dbac55f10"

describe("wire format", function()
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

  it("stores the token under key_prefix .. name with the TTL", function()
    local client = fx:client({ key_prefix = "app:" })
    local lock = assert(client:acquire("reports:nightly", { ttl = 7, timeout = 0 }))
    assert.equals("reports:nightly", lock.name)
    assert.equals("app:reports:nightly", lock._handle:key())
    assert.same({ "app:reports:nightly" }, fx:cmd(1, "KEYS", "*"))
    assert.equals(lock.token, fx:cmd(1, "GET", "app:reports:nightly"))
    local pttl = fx:cmd(1, "PTTL", "app:reports:nightly")
    assert.is_true(pttl > 6900 and pttl <= 7000, "pttl " .. pttl)
    assert.is_true(lock:release())
  end)

  it("takes a fresh 128-bit token from the CSPRNG for every hold", function()
    local client = fx:client()
    local seen, count = {}, 0
    for _ = 1, 200 do
      local lock = assert(client:acquire("wire:token", { timeout = 0 }))
      assert.equals(32, #lock.token)
      assert.matches("^[0-9a-f]+$", lock.token)
      assert.is_nil(seen[lock.token])
      seen[lock.token] = true
      count = count + 1
      assert.is_true(lock:release())
    end
    assert.equals(200, count)
  end)

  it("is binary safe in names and prefixes", function()
    local name = "n\0\r\n\255 x"
    local client = fx:client({ key_prefix = "p\0:" })
    local lock = assert(client:acquire(name, { timeout = 0 }))
    assert.equals(name, lock.name)
    assert.equals(1, fx:cmd(1, "EXISTS", "p\0:" .. name))
    assert.equals(lock.token, fx:cmd(1, "GET", "p\0:" .. name))
    local shown = "hiredlock.lock " .. ("%q"):format(name) .. " (held, "
    assert.equals(shown, tostring(lock):sub(1, #shown))
    assert.is_true(lock:release())
    assert.equals(0, fx:cmd(1, "EXISTS", "p\0:" .. name))
  end)

  it("releases and extends with the shared compare scripts", function()
    -- Deadlines for a loaded machine: an extend after a flush takes two
    -- round trips (NOSCRIPT, then EVAL), which the 50 ms default missed
    -- under load; the scripts, not the time, are what is looked at.
    local client = fx:client({ connect_timeout = 1, timeout = 0.5 })
    fx:cmd(1, "SCRIPT", "FLUSH")
    local lock = assert(client:acquire("wire:scripts", { timeout = 0 }))
    assert.is_true(lock:extend(10)) -- NOSCRIPT, then EVAL
    assert.is_true(lock:release())
    assert.same({ 1, 1 }, fx:cmd(1, "SCRIPT", "EXISTS", QUEUE_SHA, EXTEND_SHA))
    -- And again by digest, after a flush in between.
    lock = assert(client:acquire("wire:scripts", { timeout = 0 }))
    fx:cmd(1, "SCRIPT", "FLUSH")
    assert.is_true(lock:release())
    assert.equals(0, fx:cmd(1, "EXISTS", "wire:scripts"))
  end)

  it("queues waiters beside the key and hands the lock to them", function()
    local client = fx:client({ key_prefix = "app:" })
    local holder = assert(client:acquire("wire:q", { timeout = 0 }))
    -- A waiter in another process: it queues, then waits for the hand-off.
    local script = os.tmpname()
    local f = assert(io.open(script, "w"))
    f:write(([[
      local c = require("hiredlock").new(%q, { key_prefix = "app:" })
      local l = assert(c:acquire("wire:q", { timeout = 10 }))
      io.write(l.token)
      l:release()
    ]]):format(fx.urls[1]))
    f:close()
    local waiter = io.popen(fixture.interpreter() .. " " .. script)
    local queue, waiters = "app:wire:q{app:wire:q}:queue",
      "app:wire:q{app:wire:q}:waiters"
    local entries
    for _ = 1, 500 do
      entries = fx:cmd(1, "ZRANGE", queue, 0, -1, "WITHSCORES")
      if #entries > 0 then
        break
      end
      os.execute("sleep 0.01")
    end
    -- token -> arrival (wall clock, microseconds); token -> "expiry window
    -- channel\tttl" (the master's milliseconds; min(ttl, window); the
    -- channel; the waiter's ttl: it takes a hand-off without a claim).
    assert.equals(2, #entries)
    local token = entries[1]
    assert.matches("^[0-9a-f]+$", token)
    assert.is_true(math.abs(tonumber(entries[2]) / 1e6 - os.time()) < 60)
    local info = fx:cmd(1, "HGET", waiters, token)
    assert.matches("^%d+ 400 app:hiredlock:wake:[0-9a-f]+\t%d+$", info)
    assert.is_true(holder:release())
    assert.equals(token, waiter:read("*a"))
    waiter:close()
    os.remove(script)
    assert.same({}, fx:cmd(1, "KEYS", "*"))
  end)

  it("is excluded by a foreign lock on the same key, never deletes it", function()
    -- What redis-py's Lock or another runtime writes: SET key token NX PX.
    fx:cmd(1, "SET", "wire:foreign", "0123456789abcdef0123456789abcdef", "NX",
      "PX", 60000)
    local lock, err = fx:client():acquire("wire:foreign", { timeout = 0.3 })
    assert.is_nil(lock)
    assert.equals("timeout", err)
    assert.equals("0123456789abcdef0123456789abcdef",
      fx:cmd(1, "GET", "wire:foreign"))
  end)

  it("talks over a unix socket and to another database", function()
    local client = hiredlock.new(fx.unix_urls[1] .. "?db=3")
    local lock = assert(client:acquire("wire:db", { timeout = 0 }))
    assert.equals(0, fx:cmd(1, "EXISTS", "wire:db"))
    fx:cmd(1, "SELECT", 3)
    assert.equals(lock.token, fx:cmd(1, "GET", "wire:db"))
    assert.is_true(lock:release())
    assert.equals(0, fx:cmd(1, "EXISTS", "wire:db"))
    fx:cmd(1, "SELECT", 0)
  end)

  it("reports a database the server does not have", function()
    local lock, err = hiredlock.new(fx.urls[1] .. "/99"):acquire("wire:db99",
      { timeout = 1 })
    assert.is_nil(lock)
    assert.matches("^server error: 0 of 1 masters answered %(1 needed%); "
      .. "127%.0%.0%.1:%d+: ERR DB index is out of range$", err)
  end)
end)
