-- Correctness under attack (issue 13), from Lua: a refused handshake leaves
-- no key, a release that reached too few masters ends the hold and a retry
-- finishes it, no TTL without room for a round, and a late master's
-- NOSCRIPT cannot keep a release from running.
local fixture = require "helpers.fixture"
local hiredlock = require "hiredlock"

local function gone_within(fx, i, key, seconds)
  local socket = require "socket"
  local deadline = socket.gettime() + seconds
  repeat
    if fx:cmd(i, "EXISTS", key) == 0 then
      return true
    end
    socket.sleep(0.01)
  until socket.gettime() > deadline
  return false
end

describe("a refused handshake", function()
  local fx

  setup(function()
    fx = fixture.start(1)
    fx:cmd(1, "ACL", "SETUSER", "noset", "on", ">pw", "~*", "+ping")
  end)

  teardown(function()
    fx:stop()
  end)

  for _, case in ipairs({
    { "a password for a server with none", "redis://:nopass@127.0.0.1:%d",
      "^authentication failed: " },
    { "an unknown user", "redis://nobody:pw@127.0.0.1:%d",
      "^authentication failed: .*WRONGPASS" },
    { "a database out of range", "redis://127.0.0.1:%d/99",
      "^server error: .*DB index is out of range" },
    { "a user who may not SET", "redis://noset:pw@127.0.0.1:%d",
      "^permission denied: .*NOPERM" },
  }) do
    it("leaves no key: " .. case[1], function()
      local client = hiredlock.new(case[2]:format(fx.ports[1]),
        { timeout = 0.5 })
      local lock, err = client:acquire("hs:" .. case[1], { timeout = 0 })
      assert.is_nil(lock)
      assert.matches(case[3], err)
      assert.equals(0, fx:cmd(1, "EXISTS", "hs:" .. case[1]))
    end)
  end
end)

describe("an unfinished release", function()
  it("ends the hold, and a retry finishes it", function()
    local fx = fixture.start(3, "--aof")
    fx:cmd(3, "SET", "rel:part", "someone-else", "PX", "60000")
    local client = fx:client({ timeout = 0.5, connect_timeout = 1 })
    local lock = assert(client:acquire("rel:part", { ttl = 30, timeout = 0 }))
    local token = lock.token
    fx:ctl("kill", 2)
    local ok, err = lock:release()
    assert.is_nil(ok)
    assert.matches("^connection failed: 1 of 3 masters confirmed %(2 needed%)",
      err)
    assert.is_false(lock:held())
    assert.equals(0, lock:validity())
    assert.same({ nil, "not held" }, { lock:extend() })
    fx:ctl("restart", 2) -- with our key, from its AOF
    assert.equals(token, fx:cmd(2, "GET", "rel:part"))
    assert.same({ true }, { lock:release() })
    assert.equals(0, fx:cmd(2, "EXISTS", "rel:part"))
    assert.equals("someone-else", fx:cmd(3, "GET", "rel:part"))
    fx:stop()
  end)
end)

describe("a ttl", function()
  it("without room for a round is refused, naming the smallest", function()
    local fx = fixture.start(1)
    local client = fx:client()
    for _, ttl in ipairs({ 0.001, 0.002, 0.004 }) do
      local ok, err = pcall(client.acquire, client, "ttl:short", { ttl = ttl })
      assert.is_false(ok)
      assert.equals(("bad argument #2 to 'acquire' (ttl must be between 0.005 "
        .. "and 2147483.647 seconds, got %g)"):format(ttl), err)
    end
    local lock = assert(client:acquire("ttl:short", { ttl = 5, timeout = 0 }))
    local ok, err = pcall(lock.extend, lock, 0.002)
    assert.is_false(ok)
    assert.matches("^bad argument #1 to 'extend' %(ttl must be between 0%.005",
      err)
    assert.is_true(lock:release())
    local drifty = fx:client({ drift_factor = 0.49 })
    ok, err = pcall(drifty.acquire, drifty, "ttl:short", { ttl = 0.007 })
    assert.is_false(ok)
    assert.matches("ttl must be between 0%.008", err)
    fx:stop()
  end)
end)

describe("a late master without its scripts", function()
  it("still runs the release when it wakes up", function()
    local fx = fixture.start(3)
    local client = fx:client({ timeout = 0.05, connect_timeout = 1 })
    local lock = assert(client:acquire("ns:late", { ttl = 60, timeout = 0 }))
    assert.is_true(lock:release()) -- the scripts are loaded now
    lock = assert(client:acquire("ns:late", { ttl = 60, timeout = 0 }))
    fx:cmd(3, "SCRIPT", "FLUSH")
    fx:ctl("pause", 3)
    assert.is_true(lock:release()) -- 2 of 3; the 3rd answers too late
    fx:ctl("resume", 3)
    assert.is_true(gone_within(fx, 3, "ns:late", 2))
    fx:stop()
  end)
end)
