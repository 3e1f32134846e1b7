-- The core's sans-I/O protocol and RESP reader as the C module exposes them
-- for drivers that move bytes themselves (OpenResty cosockets): first with
-- replies made up here (no Redis), then end to end through a luasocket
-- driver plugged into the facade's driver seam.
local core = require "hiredlock.core"
local fixture = require "helpers.fixture"
local socket_driver = require "helpers.socket_driver"

local QUEUE_SHA = "355d797da61ba015dee7563c90be63c1a738b4c3"
local URLS = { "redis://127.0.0.1:1", "redis://127.0.0.1:2", "redis://127.0.0.1:3" }

local function raises(text, fn, ...)
  local ok, err = pcall(fn, ...)
  assert.is_false(ok)
  assert(tostring(err):find(text, 1, true), ("expected %q in %q"):format(text,
    tostring(err)))
end

describe("core.parser", function()
  it("reads every kind of reply, across feeds", function()
    local p = core.parser()
    assert.is_true(p:feed("+OK\r\n:1\r\n$-1\r\n-ERR wrong\r\n$6\r\nhe"))
    assert.same({ "status", "OK" }, { p:next() })
    assert.same({ "integer", 1 }, { p:next() })
    assert.same({ "nil" }, { p:next() })
    assert.same({ "error", "ERR wrong" }, { p:next() })
    local kind, value = p:next()
    assert.is_nil(kind) -- more bytes needed, no error
    assert.is_nil(value)
    assert.is_true(p:feed("l\0\r\n\r\n:-7\r\n"))
    assert.same({ "string", "hel\0\r\n" }, { p:next() })
    assert.same({ "integer", -7 }, { p:next() })
    assert.is_nil((p:next()))
  end)

  it("reads a Sentinel's answer: a flat array", function()
    local p = core.parser()
    assert.is_true(p:feed("*2\r\n$9\r\n127.0.0.1\r\n$4\r\n"))
    assert.is_nil((p:next())) -- not whole yet
    assert.is_true(p:feed("6379\r\n*-1\r\n"))
    assert.same({ "array", { "127.0.0.1", "6379" } }, { p:next() })
    assert.same({ "nil" }, { p:next() })
  end)

  it("refuses what no lock command gets back", function()
    local p = core.parser()
    assert.is_true(p:feed("*1\r\n*1\r\n$1\r\na\r\n"))
    local kind, err = p:next()
    assert.is_nil(kind)
    assert.equals("protocol error", err)
    -- The stream stays unusable.
    local ok, ferr = p:feed("+OK\r\n")
    assert.is_nil(ok)
    assert.equals("protocol error", ferr)
    kind, err = p:next()
    assert.is_nil(kind)
    assert.equals("protocol error", err)
  end)

  it("checks its arguments", function()
    local p = core.parser()
    raises("bad argument #1 to 'feed' (string expected, got no value)",
      function() local _ = p:feed() end)
    raises("bad argument #1 to 'feed' (string expected, got table)",
      function() local _ = p:feed({}) end)
  end)
end)

describe("sans-I/O protocol", function()
  local client

  before_each(function()
    client = core.new(URLS) -- never connected: no I/O happens here
  end)

  local function acquired()
    local lock, timeout = client:lock("res", { ttl = 10, timeout = 0 })
    assert.equals(0, timeout)
    assert.is_true(lock:begin("acquire", timeout))
    local step, ms = lock:step()
    assert.equals("round", step)
    assert.equals(50, ms)
    for i = 1, 3 do
      assert.equals("ok", lock:reply(i, "status", "OK"))
    end
    local done, ok = lock:step()
    assert.equals("done", done)
    assert.is_true(ok)
    return lock
  end

  it("acquires: SET NX PX with one fresh token to every master", function()
    local lock, timeout = client:lock("res", { ttl = 10 })
    assert.equals(5, timeout) -- the default wait, in seconds
    assert.is_false(lock:held())
    assert.equals("", lock:token())
    assert.is_true(lock:begin("acquire", 0))
    local step, ms = lock:step()
    assert.equals("round", step)
    assert.equals(50, ms) -- the per-master timeout
    local cmd = lock:command(1)
    local token = cmd:match("^%*6\r\n%$3\r\nSET\r\n%$3\r\nres\r\n%$32\r\n(%x+)\r\n"
      .. "%$2\r\nNX\r\n%$2\r\nPX\r\n%$5\r\n10000\r\n$")
    assert.is_string(token)
    assert.equals(cmd, lock:command(2))
    assert.equals(cmd, lock:command(3))
    assert.equals("ok", lock:reply(1, "status", "OK"))
    assert.equals("refused", lock:reply(2, "nil"))
    assert.equals("ok", lock:reply(3, "status", "OK"))
    assert.equals("ok", lock:reply(3, "integer", 0)) -- later replies ignored
    local done, ok, err = lock:step()
    assert.equals("done", done)
    assert.is_true(ok)
    assert.is_nil(err)
    assert.is_true(lock:held())
    assert.equals(token, lock:token())
    assert.is_true(lock:validity() > 9.8)
    local counts = lock:counts()
    assert.same({ masters = 3, quorum = 2, ok = 2, refused = 1, unreachable = 0,
      failed = 0, attempts = 1 }, counts)
  end)

  it("releases by EVALSHA and sends the script again on NOSCRIPT", function()
    local lock = acquired()
    local token = lock:token()
    assert.is_true(lock:begin("release"))
    assert.equals("round", (lock:step()))
    assert.equals("*8\r\n$7\r\nEVALSHA\r\n$40\r\n" .. QUEUE_SHA
      .. "\r\n$1\r\n3\r\n$3\r\nres\r\n$14\r\nres{res}:queue\r\n"
      .. "$16\r\nres{res}:waiters\r\n$1\r\nr\r\n$32\r\n" .. token .. "\r\n",
      lock:command(1))
    assert.equals("resend", lock:reply(1, "error", "NOSCRIPT No matching script."))
    local eval = lock:command(1)
    assert.equals("*8\r\n$4\r\nEVAL\r\n", eval:sub(1, 14))
    assert.truthy(eval:find('redis.call("publish",c or ch,h)', 1, true))
    assert.equals("ok", lock:reply(1, "integer", 1))
    assert.equals("ok", lock:reply(2, "integer", 1))
    lock:fail(3, "unreachable", "timeout after 50 ms")
    local done, ok = lock:step()
    assert.equals("done", done)
    assert.is_true(ok)
    assert.is_false(lock:held())
  end)

  it("keeps a late connection's replies owed, in order (core.stream)", function()
    local stream = core.stream()
    local lock = client:lock("res", { ttl = 10 })
    assert.is_true(lock:begin("acquire", 0))
    assert.equals("round", (lock:step()))
    local set = stream:start(lock, 3)
    assert.truthy(set:find("^%*6\r\n%$3\r\nSET\r\n"))
    assert.equals("ok", lock:reply(1, "status", "OK"))
    assert.equals("ok", lock:reply(2, "status", "OK"))
    -- master 3 misses the deadline: kept, owing the SET's reply (a SET
    -- sends nothing more behind it)
    assert.same({ "done" }, { stream:expire(lock, 3, "timeout after 50 ms") })
    assert.equals(1, stream:owed())
    local done, ok = lock:step()
    assert.equals("done", done)
    assert.is_true(ok)
    -- the release goes on the same connection, behind the SET, and as the
    -- full script (a late master may have lost its script cache)
    assert.is_true(lock:begin("release"))
    assert.equals("round", (lock:step()))
    local release = stream:start(lock, 3)
    assert.equals("*8\r\n$4\r\nEVAL\r\n", release:sub(1, 14))
    assert.is_false(stream:replied())
    assert.equals("more", (stream:feed(lock, 3, "+OK\r\n:"))) -- the SET's
    assert.is_true(stream:replied())
    assert.equals(0, stream:owed())
    assert.equals("done", (stream:feed(lock, 3, "1\r\n")))
    assert.equals("ok", lock:reply(1, "integer", 1))
    assert.equals("ok", lock:reply(2, "integer", 1))
    done, ok = lock:step()
    assert.equals("done", done)
    assert.is_true(ok)
    assert.equals(0, lock:counts().unreachable)
    -- between rounds: a reply nobody owes puts the stream out of step
    assert.is_false(stream:drain(":1\r\n"))
    raises("no round is out", stream.start, stream, lock, 3)
    raises("no such master", stream.start, stream, lock, 4)
  end)

  it("extends with the new TTL in the script call", function()
    local lock = acquired()
    assert.is_true(lock:begin("extend", 20))
    assert.equals("round", (lock:step()))
    assert.equals("$5\r\n20000\r\n", lock:command(2):sub(-11))
    for i = 1, 3 do
      assert.equals("ok", lock:reply(i, "integer", 1))
    end
    assert.same({ "done", true }, { lock:step() })
    assert.equals(20, lock:ttl())
    assert.is_true(lock:validity() > 19.7)
    -- Without a ttl, the lock's own.
    assert.is_true(lock:begin("extend"))
    lock:step()
    assert.equals("$5\r\n20000\r\n", lock:command(1):sub(-11))
  end)

  it("times out when a quorum refuses and no wait is left", function()
    local lock = client:lock("res", { timeout = 0 })
    assert.is_true(lock:begin("acquire", 0))
    lock:step()
    for i = 1, 3 do
      assert.equals("refused", lock:reply(i, "nil"))
    end
    -- Every master refused: none can hold this token, no cleanup round.
    assert.same({ "done", nil, "timeout" }, { lock:step() })
    assert.is_false(lock:held())
  end)

  it("queues up when refused and waits for a hand-off", function()
    local lock = client:lock("res")
    assert.is_true(lock:begin("acquire", 1))
    lock:step()
    local first = lock:command(1)
    assert.is_nil(lock:waiter())
    for i = 1, 3 do
      lock:reply(i, "nil")
    end
    -- The try: the queue script (mode t), with the token of the SET.
    local tried = core.now()
    assert.equals("round", (lock:step()))
    local token = lock:waiter()
    assert.equals(32, #token)
    assert.truthy(first:find(token, 1, true))
    assert.truthy(lock:command(1):find("\r\nt\r\n", 1, true))
    assert.truthy(lock:command(1):find(client:channel(), 1, true))
    for i = 1, 3 do
      assert.equals("refused", lock:reply(i, "integer", 5000))
    end
    -- Held for 5 s more: wait for the cap, retry_delay +/- jitter.
    local step, ms = lock:step()
    assert.equals("wait", step)
    assert.is_true(ms >= 100 and ms <= 300, "waits " .. ms)
    -- Two of three masters handed it over: a quorum. Within a claim
    -- round's longest wait (50 ms) of the try's start, held at once,
    -- counted from the try's start (docs/SAFETY.md, "Hand-off without a
    -- claim"); later (a loaded machine), a try claims it.
    lock:notified(1)
    lock:notified(3)
    local step = lock:step()
    local took = core.now() - tried
    if took <= 0.050 then
      assert.equals("done", step)
      assert.is_true(lock:held())
      assert.equals(token, lock:token())
      local full = lock:ttl() * 0.99 - 0.002 -- ttl - drift
      local v = lock:validity() -- whole milliseconds, rounded down
      assert.is_true(v <= full and v >= full - (core.now() - tried) - 0.001,
        "validity " .. v)
    else
      assert.equals("round", step)
      assert.equals(token, lock:waiter())
      for i = 1, 3 do
        assert.equals("ok", lock:reply(i, "status", "OK"))
      end
      assert.same({ "done", true }, { lock:step() })
    end
    assert.is_nil(lock:waiter())
  end)

  it("reads a subscriber connection's stream", function()
    local sub = core.subscriber(client, 2)
    assert.error_matches(function() core.subscriber(client, 4) end,
      "no such master")
    local channel = client:channel()
    assert.truthy(channel:find("^hiredlock:wake:%x+$"))
    assert.equals(("*2\r\n$9\r\nSUBSCRIBE\r\n$%d\r\n%s\r\n"):format(
      #channel, channel), sub:start())
    local function bulk(s) return ("$%d\r\n%s\r\n"):format(#s, s) end
    local token = ("ab"):rep(16)
    local kind, value = sub:feed("*3\r\n" .. bulk("subscribe") .. bulk(channel)
      .. ":1\r\n*3\r\n" .. bulk("message") .. bulk(channel) .. bulk(token))
    assert.equals("ready", kind)
    assert.is_nil(value)
    assert.same({ "handoff", token }, { sub:feed("") })
    assert.same({ "more" }, { sub:feed() })
    assert.same({ "close", "unexpected reply to SUBSCRIBE" },
      { sub:feed(":1\r\n") })
  end)

  it("cleans up after a failed attempt and reports every master", function()
    -- Without a wait: with one, too few answers wait in line until the
    -- deadline (a master may come back).
    local lock = client:lock("res")
    assert.is_true(lock:begin("acquire", 0))
    lock:step()
    assert.equals("ok", lock:reply(1, "status", "OK"))
    lock:fail(2, "unreachable", "Connection refused")
    lock:fail(3, "unreachable", "timeout after 50 ms")
    -- Master 1 holds our token: the release round goes to all three.
    local step = lock:step()
    assert.equals("round", step)
    assert.truthy(lock:command(2):find("EVALSHA", 1, true))
    assert.equals("ok", lock:reply(1, "integer", 1))
    lock:fail(2, "unreachable", "Connection refused")
    lock:fail(3, "unreachable", "Connection refused")
    local done, ok, err = lock:step()
    assert.equals("done", done)
    assert.is_nil(ok)
    assert.equals("connection failed: 1 of 3 masters answered (2 needed); "
      .. "127.0.0.1:2: connection refused; 127.0.0.1:3: timeout after 50 ms", err)
  end)

  it("classifies error replies", function()
    local lock = client:lock("res")
    assert.is_true(lock:begin("acquire", 0))
    lock:step()
    assert.equals("server", lock:reply(1, "error", "READONLY You can't write"))
    assert.equals("auth", lock:reply(2, "error", "NOAUTH Authentication required."))
    assert.equals("protocol", lock:reply(3, "integer", 7))
    lock:step() -- the cleanup round (master 3 may hold it)
    for i = 1, 3 do
      lock:reply(i, "integer", 0)
    end
    local done, ok, err = lock:step()
    assert.equals("done", done)
    assert.is_nil(ok)
    assert.matches("^authentication failed: 0 of 3 masters answered", err)
  end)

  it("says when an operation cannot start", function()
    local lock = client:lock("res")
    assert.same({ nil, "not held" }, { lock:begin("release") })
    assert.same({ nil, "not held" }, { lock:begin("extend", 1) })
    lock = acquired()
    assert.same({ nil, "already held" }, { lock:begin("acquire", 0) })
    raises("bad argument #1 to 'begin' (invalid option 'fly')", function()
      local _ = lock:begin("fly")
    end)
    -- begin's argument is the operation's own: its errors name it.
    raises("bad argument #1 to 'extend' (ttl must be between 0.005 and "
      .. "2147483.647 seconds, got -1)", function()
      local _ = lock:begin("extend", -1)
    end)
    raises("no round is out: call step() first", function()
      local _ = lock:command(1)
    end)
    assert.is_true(lock:begin("release"))
    lock:step()
    raises("bad argument #1 to 'command' (no such master)", function()
      local _ = lock:command(4)
    end)
    raises("bad argument #1 to 'reply' (no such master)", function()
      local _ = lock:reply(0, "nil")
    end)
    raises("bad argument #2 to 'reply' (unknown reply kind 'bogus')", function()
      local _ = lock:reply(1, "bogus")
    end)
    raises("bad argument #2 to 'fail' (unknown result 'gone')", function()
      local _ = lock:fail(1, "gone")
    end)
  end)

  it("gives the handshake of a new connection and judges its replies", function()
    -- Two masters: each handshake ends with INFO server, whose run_id
    -- tells one server under two names.
    local info = "*2\r\n$4\r\nINFO\r\n$6\r\nserver\r\n"
    local c = core.new({ "redis://:pw@127.0.0.1:1/2", "redis://127.0.0.1:2" })
    local bytes, replies = c:handshake(1)
    assert.equals("*2\r\n$4\r\nAUTH\r\n$2\r\npw\r\n*2\r\n$6\r\nSELECT\r\n$1\r\n2\r\n"
      .. info, bytes)
    assert.equals(3, replies)
    assert.same({ info, 1 }, { c:handshake(2) })
    assert.same({ "ok", "" }, { c:handshake_reply(1, 1, "status", "OK") })
    assert.same({ "auth", "WRONGPASS invalid username-password pair" },
      { c:handshake_reply(1, 1, "error", "WRONGPASS invalid username-password pair") })
    assert.same({ "server", "ERR DB index is out of range" },
      { c:handshake_reply(1, 2, "error", "ERR DB index is out of range") })
    local run_id = ("a"):rep(40)
    local text = "# Server\r\nrun_id:" .. run_id .. "\r\nuptime_in_seconds:9\r\n"
    assert.same({ "ok", "" }, { c:handshake_reply(1, 3, "string", text) })
    assert.same({ "server", "the same server as 127.0.0.1:1 (run_id aaaaaaaaaaaa...)" },
      { c:handshake_reply(2, 1, "string", text) })
    assert.equals("protocol", (c:handshake_reply(2, 2, "status", "OK")))
    assert.equals("127.0.0.1:2", c:master_label(2))
    -- One master: no INFO (nothing to compare), unless a restart_guard.
    assert.same({ "", 0 }, { core.new({ "redis://127.0.0.1:2" }):handshake(1) })
    assert.same({ info, 1 },
      { core.new({ "redis://127.0.0.1:2" }, { restart_guard = 30 }):handshake(1) })
  end)

  it("keeps the client a lock came from", function()
    local lock = client:lock("res")
    assert.equals(client, lock:client())
  end)
end)

describe("a Lua driver on the sans-I/O protocol", function()
  local fx

  setup(function()
    fx = fixture.start(3, "--password pw")
  end)

  teardown(function()
    fx:stop()
  end)

  -- A facade client whose network calls go through the luasocket driver.
  local function client(opts)
    local c = fx:client(opts)
    c._driver = socket_driver
    return c
  end

  it("runs acquire, extend and release against Redis", function()
    local rounds = socket_driver.rounds
    local a = client()
    local lock, err = a:acquire("sio:basic", { ttl = 10, timeout = 0 })
    assert.is_nil(err)
    assert.equals(32, #lock.token)
    for i = 1, 3 do
      fx:cmd(i, "AUTH", "pw")
      assert.equals(lock.token, fx:cmd(i, "GET", "sio:basic"))
    end
    local other, oerr = client():acquire("sio:basic", { timeout = 0.25 })
    assert.is_nil(other)
    assert.equals("timeout", oerr)
    assert.same({ true }, { lock:extend(30) })
    assert.is_true(fx:cmd(2, "PTTL", "sio:basic") > 29000)
    fx:cmd(1, "SCRIPT", "FLUSH") -- NOSCRIPT, then the full script
    assert.same({ true }, { lock:release() })
    assert.equals(0, fx:cmd(1, "EXISTS", "sio:basic"))
    assert.same({ nil, "not held" }, { lock:release() })
    assert.is_true(socket_driver.rounds > rounds)
  end)

  it("works under client:with and reports lost locks", function()
    local a = client()
    local ok, r = a:with("sio:with", nil, function(lock)
      return lock.name
    end)
    assert.is_true(ok)
    assert.equals("sio:with", r)
    ok, r = a:with("sio:with", nil, function()
      for i = 1, 3 do
        fx:cmd(i, "SET", "sio:with", "x")
      end
    end)
    assert.is_nil(ok)
    assert.equals("not owned", r)
  end)

  it("gets the same connection message as the C driver", function()
    fx:ctl("kill", 2)
    fx:ctl("kill", 3)
    local lock, err = client():acquire("sio:down", { timeout = 1 })
    assert.is_nil(lock)
    assert.matches("^connection failed: 1 of 3 masters answered %(2 needed%); "
      .. "127%.0%.0%.1:%d+: connection refused; 127%.0%.0%.1:%d+: connection refused$",
      err)
    local lock2, err2 = fx:client():acquire("sio:down", { timeout = 1 })
    assert.is_nil(lock2)
    assert.equals(err, err2)
  end)
end)
