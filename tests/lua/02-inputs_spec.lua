-- Wrong types and values raise an argument error naming the argument, with
-- the core's own words; nothing crashes and nothing reaches Redis.
local fixture = require "helpers.fixture"
local hiredlock = require "hiredlock"

-- Asserts that fn raises an error containing text (plain).
local function raises(text, fn, ...)
  local ok, err = pcall(fn, ...)
  assert.is_false(ok)
  assert.is_string(err)
  assert(err:find(text, 1, true), ("expected error containing %q, got %q")
    :format(text, err))
end

describe("bad input", function()
  local fx, client

  setup(function()
    fx = fixture.start(1)
    client = fx:client()
  end)

  teardown(function()
    fx:stop()
  end)

  after_each(function()
    -- No failed call may leave a key behind.
    assert.same({}, fx:cmd(1, "KEYS", "*"))
  end)

  describe("names", function()
    for _, case in ipairs({
      { "nil", nil }, { "number", 42 }, { "number", 1.5 }, { "table", {} },
      { "boolean", true }, { "boolean", false }, { "function", print },
    }) do
      it("rejects a " .. case[1] .. " as a name", function()
        raises("bad argument #1 to 'acquire' (name must be a string, got "
          .. case[1] .. ")", client.acquire, client, case[2])
        raises("bad argument #1 to 'acquire' (name must be a string, got "
          .. case[1] .. ")", client.with, client, case[2], nil, print)
      end)
    end

    it("says it without a position that would point into the module", function()
      local ok, err = pcall(client.acquire, client, "")
      assert.is_false(ok)
      assert.equal("bad argument #1 to 'acquire' (name must be 1 to 512 bytes, got 0)",
        err)
    end)

    it("rejects an empty name", function()
      raises("bad argument #1 to 'acquire' (name must be 1 to 512 bytes, got 0)",
        client.acquire, client, "")
    end)

    it("rejects a name over 512 bytes and takes one of 512", function()
      raises("bad argument #1 to 'acquire' (name must be 1 to 512 bytes, got 513)",
        client.acquire, client, ("n"):rep(513))
      local lock, err = client:acquire(("n"):rep(512), { timeout = 0 })
      assert.is_nil(err)
      assert.equals(("n"):rep(512), lock.name)
      assert.is_true(lock:release())
    end)
  end)

  describe("ttl and timeout", function()
    local bad = {
      { -1, "got -1" }, { 0 / 0, "got nan" }, { math.huge, "got inf" },
      { -math.huge, "got -inf" }, { 2147484, "got 2.14748e+06" },
    }
    for _, case in ipairs(bad) do
      it("rejects ttl = " .. tostring(case[1]), function()
        raises("bad argument #2 to 'acquire' (ttl must ", client.acquire,
          client, "x", { ttl = case[1] })
        raises(case[2], client.acquire, client, "x", { ttl = case[1] })
      end)
      it("rejects timeout = " .. tostring(case[1]), function()
        raises("bad argument #2 to 'acquire' (timeout must ", client.acquire,
          client, "x", { timeout = case[1] })
        raises(case[2], client.acquire, client, "x", { timeout = case[1] })
      end)
    end

    it("names the range in seconds", function()
      raises("bad argument #2 to 'acquire' (ttl must be between 0.005 and "
        .. "2147483.647 seconds, got -1)", client.acquire, client, "x",
        { ttl = -1 })
      raises("bad argument #2 to 'acquire' (timeout must be between 0.000 and "
        .. "2147483.647 seconds, got -1)", client.acquire, client, "x",
        { timeout = -1 })
      raises("bad argument #2 to 'acquire' (ttl must be a number of seconds, "
        .. "got nan)", client.acquire, client, "x", { ttl = 0 / 0 })
    end)

    it("rejects a ttl of zero or one that rounds below a millisecond", function()
      raises("(ttl must be between 0.005 and 2147483.647 seconds, got 0)",
        client.acquire, client, "x", { ttl = 0 })
      raises("got 0.0004)", client.acquire, client, "x", { ttl = 0.0004 })
    end)

    it("takes no strings for numbers", function()
      raises("bad argument #2 to 'acquire' (ttl must be a number of seconds, "
        .. "got string)", client.acquire, client, "x", { ttl = "10" })
      raises("(timeout must be a number of seconds, got boolean)",
        client.acquire, client, "x", { timeout = true })
    end)

    it("takes timeout = 0 as one attempt", function()
      local lock, err = client:acquire("x", { timeout = 0 })
      assert.is_nil(err)
      assert.is_true(lock:release())
    end)
  end)

  describe("options", function()
    it("rejects unknown option keys", function()
      raises("bad argument #2 to 'acquire' (unknown option 'tll' (known: ttl, "
        .. "timeout))", client.acquire, client, "x", { tll = 5 })
      raises("(unknown option: a number key (known: ttl, timeout))",
        client.acquire, client, "x", { 5 })
      raises("bad argument #2 to 'new' (unknown option 'prefix' (known: "
        .. "connect_timeout, timeout, retry_delay, retry_jitter, drift_factor, "
        .. "key_prefix))", hiredlock.new, fx.urls, { prefix = "a:" })
    end)

    it("rejects options that are not a table", function()
      raises("bad argument #2 to 'acquire' (options must be a table, got "
        .. "number)", client.acquire, client, "x", 5)
      raises("bad argument #2 to 'new' (options must be a table, got string)",
        hiredlock.new, fx.urls, "fast")
    end)

    it("checks every client option", function()
      local cases = {
        { { connect_timeout = 0 }, "connect_timeout must be between 0.001" },
        { { timeout = -0.05 }, "timeout must be between 0.001" },
        { { timeout = 0 / 0 }, "timeout must be a number of seconds, got nan" },
        { { retry_delay = -1 }, "retry_delay must be between 0.000" },
        { { retry_jitter = math.huge }, "retry_jitter must be between" },
        { { drift_factor = 0.5 }, "drift_factor must be in [0, 0.5), got 0.5" },
        { { drift_factor = -0.1 }, "drift_factor must be in [0, 0.5), got -0.1" },
        { { drift_factor = 0 / 0 }, "drift_factor must be in [0, 0.5), got" },
        { { drift_factor = "0.1" }, "drift_factor must be a number, got string" },
        { { key_prefix = 42 }, "key_prefix must be a string, got number" },
        { { key_prefix = ("p"):rep(513) },
          "key_prefix must be at most 512 bytes, got 513" },
      }
      for _, case in ipairs(cases) do
        raises("bad argument #2 to 'new' (" .. case[2], hiredlock.new, fx.urls,
          case[1])
      end
    end)
  end)

  describe("urls", function()
    it("rejects what is not a URL or a list of them", function()
      for _, v in ipairs({ 42, true }) do
        raises("bad argument #1 to 'new' (urls must be a URL string or a list "
          .. "of them, got " .. type(v) .. ")", hiredlock.new, v)
      end
      raises("got nil)", hiredlock.new)
      raises("bad argument #1 to 'new' (urls[2] must be a URL string, got "
        .. "number)", hiredlock.new, { fx.urls[1], 6379 })
    end)

    it("rejects a URL with an embedded NUL instead of cutting it short", function()
      raises("bad argument #1 to 'new' (urls[1] contains a NUL character)",
        hiredlock.new, "redis://a\0b")
      raises("bad argument #1 to 'new' (urls[2] contains a NUL character)",
        hiredlock.new, { fx.urls[1], "redis://127.0.0.1:1\0/2" })
    end)

    it("rejects bad URLs with the core's message", function()
      raises("bad argument #1 to 'new' (url \"http://x\": scheme must be "
        .. "redis:// or unix://)", hiredlock.new, "http://x")
      raises("bad argument #1 to 'new' (urls must list 1 to 63 masters, got 0)",
        hiredlock.new, {})
      raises("is listed twice; Redlock needs independent masters",
        hiredlock.new, { fx.urls[1], fx.urls[1] })
      local many = {}
      for i = 1, 64 do
        many[i] = "redis://127.0.0.1:" .. (1000 + i)
      end
      raises("urls must list 1 to 63 masters, got 64", hiredlock.new, many)
    end)

    it("hides passwords in messages", function()
      local ok, err = pcall(hiredlock.new, "redis://:secret@127.0.0.1:99999")
      assert.is_false(ok)
      assert.is_nil(err:find("secret", 1, true))
    end)
  end)

  describe("with", function()
    it("rejects what cannot be called, before acquiring", function()
      for _, v in ipairs({ 42, "f", {}, true }) do
        raises("bad argument #3 to 'with' (function expected, got " .. type(v)
          .. ")", client.with, client, "with:bad", nil, v)
      end
      raises("bad argument #3 to 'with' (function expected, got nil)",
        client.with, client, "with:bad", nil)
    end)
  end)

  describe("extend", function()
    it("checks its ttl", function()
      local lock = assert(client:acquire("ext:bad", { timeout = 0 }))
      raises("bad argument #1 to 'extend' (ttl must be between 0.005 and "
        .. "2147483.647 seconds, got -1)", lock.extend, lock, -1)
      raises("bad argument #1 to 'extend' (ttl must be a number of seconds, "
        .. "got nan)", lock.extend, lock, 0 / 0)
      raises("(ttl must be between 0.005 and 2147483.647 seconds, got inf)",
        lock.extend, lock, math.huge)
      raises("(ttl must be between 0.005 and 2147483.647 seconds, got 0)",
        lock.extend, lock, 0)
      raises("(ttl must be a number of seconds, got string)", lock.extend, lock,
        "5")
      assert.is_true(lock:held())
      assert.is_true(lock:release())
    end)
  end)

  describe("a released lock", function()
    it("answers every call without I/O and without crashing", function()
      local lock = assert(client:acquire("released", { timeout = 0 }))
      local token = lock.token
      assert.is_true(lock:release())
      for _ = 1, 2 do
        local ok, err = lock:release()
        assert.is_nil(ok)
        assert.equals("not held", err)
        ok, err = lock:extend(5)
        assert.is_nil(ok)
        assert.equals("not held", err)
        ok, err = lock:extend()
        assert.is_nil(ok)
        assert.equals("not held", err)
        assert.equals(0, lock:validity())
        assert.is_false(lock:held())
        assert.equals(token, lock.token)
        assert.equals("released", lock.name)
        assert.equals('hiredlock.lock "released" (not held)', tostring(lock))
      end
    end)
  end)
end)
