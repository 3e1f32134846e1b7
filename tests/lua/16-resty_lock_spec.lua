-- hiredlock.resty.lock: lua-resty-lock's API (new, lock, unlock, expire and
-- their error strings) over hiredlock, here in plain Lua with the blocking
-- driver; tests/nginx/test_resty_lock.py runs lua-resty-lock's own
-- t/sanity.t against it inside nginx.
local fixture = require "helpers.fixture"
local hiredlock = require "hiredlock"

describe("hiredlock.resty.lock", function()
  local fx, resty_lock

  setup(function()
    fx = fixture.start(1)
    resty_lock = require "hiredlock.resty.lock"
    resty_lock.configure(fx.urls, { timeout = 0.5, connect_timeout = 1,
      retry_delay = 0.01, retry_jitter = 0.005 })
  end)

  teardown(function()
    resty_lock.configure(nil)
    fx:stop()
  end)

  it("locks key in the dictionary's namespace, with exptime as its TTL", function()
    local lock = assert(resty_lock:new("my_locks", { exptime = 10 }))
    assert.equals(0, lock:lock("k1"))
    local token = fx:cmd(1, "GET", "my_locks:k1")
    assert.equals(lock:hold().token, token)
    local pttl = fx:cmd(1, "PTTL", "my_locks:k1")
    assert.is_true(pttl > 9000 and pttl <= 10000, tostring(pttl))
    assert.equals(1, lock:unlock())
    assert.equals(0, fx:cmd(1, "EXISTS", "my_locks:k1"))
  end)

  it("says what lua-resty-lock says for its misuse", function()
    local lock = assert(resty_lock:new("d", { timeout = 0 }))
    assert.same({ nil, "nil key" }, { lock:lock(nil) })
    assert.same({ nil, "empty key" }, { lock:lock("") })
    assert.same({ nil, "key too long" }, { lock:lock(("x"):rep(600)) })
    assert.same({ nil, "unlocked" }, { lock:unlock() })
    assert.same({ nil, "unlocked" }, { lock:expire() })
    assert.equals(0, lock:lock(42)) -- keys are strings, as a shared dict's
    assert.equals("42", lock.key)
    assert.same({ nil, "locked" }, { lock:lock("other") })
    assert.equals(1, lock:unlock())
    assert.same({ nil, "unlocked" }, { lock:unlock() })
    assert.same({ nil, "dictionary not found" }, { resty_lock:new(nil) })
    assert.same({ nil, "dictionary not found" }, { resty_lock:new("") })
  end)

  it("raises for options of the wrong type", function()
    assert.has_error(function()
      resty_lock:new("d", { exptime = "10" })
    end, "bad argument #2 to 'new' (exptime must be a number, got string)")
    assert.has_error(function()
      resty_lock:new("d", { exptime = -1 })
    end, "bad argument #2 to 'new' (exptime must be 0 or more, got -1)")
    local lock = assert(resty_lock:new("d", { timeout = 0 }))
    assert.equals(0, lock:lock("raise"))
    assert.has_error(function()
      lock:expire(0)
    end, "bad argument #1 to 'expire' (time must be a number above 0, got 0)")
    assert.equals(1, lock:unlock())
  end)

  it("times out while another holds it, and waits no longer than exptime", function()
    local a = assert(resty_lock:new("d", { timeout = 0 }))
    local b = assert(resty_lock:new("d", { timeout = 0.05 }))
    assert.equals(0, a:lock("busy"))
    assert.same({ nil, "timeout" }, { b:lock("busy") })
    -- timeout is capped at exptime, as in lua-resty-lock
    local capped = assert(resty_lock:new("d", { timeout = 60, exptime = 0.2 }))
    assert.equals(0.2, capped.timeout)
    assert.equals(1, a:unlock())
    assert.equals(0, b:lock("busy"))
    assert.equals(1, b:unlock())
  end)

  it("reports the time waited when a release let it in", function()
    -- The holder is another process (plain Lua blocks while it waits).
    local a = assert(resty_lock:new("d"))
    assert.equals(0, a:lock("handoff"))
    -- It expires after 0.3 s: a waiter gets it then, and says it waited.
    assert.is_true(a:expire(0.3))
    local b = assert(resty_lock:new("d", { timeout = 2 }))
    local elapsed = b:lock("handoff")
    assert.is_number(elapsed)
    assert.is_true(elapsed >= 0.2 and elapsed < 1.5, tostring(elapsed))
    assert.equals(1, b:unlock())
  end)

  it("unlocks nothing of a later holder's once its own lock expired", function()
    local a = assert(resty_lock:new("d", { exptime = 0.1, timeout = 0 }))
    local b = assert(resty_lock:new("d", { timeout = 0 }))
    assert.equals(0, a:lock("stale"))
    local deadline = os.time() + 5
    local got
    repeat
      got = b:lock("stale")
    until got or os.time() > deadline
    assert.equals(0, got)
    -- lua-resty-lock's unlock would delete b's key here.
    assert.same({ nil, "not owned" }, { a:unlock() })
    assert.equals(b:hold().token, fx:cmd(1, "GET", "d:stale"))
    assert.same({ nil, "unlocked" }, { a:unlock() })
    assert.same({ nil, "unlocked" }, { a:expire() })
    assert.equals(1, b:unlock())
  end)

  it("expire() sets the time left, and refuses a lock that was taken", function()
    local a = assert(resty_lock:new("d", { exptime = 5, timeout = 0 }))
    assert.equals(0, a:lock("exp"))
    assert.is_true(a:expire(20))
    local pttl = fx:cmd(1, "PTTL", "d:exp")
    assert.is_true(pttl > 19000 and pttl <= 20000, tostring(pttl))
    assert.is_true(a:expire())
    pttl = fx:cmd(1, "PTTL", "d:exp")
    assert.is_true(pttl > 4000 and pttl <= 5000, tostring(pttl))
    fx:cmd(1, "SET", "d:exp", "someone else")
    assert.same({ nil, "not owned" }, { a:expire() })
    assert.equals("someone else", fx:cmd(1, "GET", "d:exp"))
    assert.same({ nil, "unlocked" }, { a:unlock() })
  end)

  it("makes exptime = 0 a lease renewed while held, not a lock without a TTL", function()
    local a = assert(resty_lock:new("d", { exptime = 0, timeout = 0 }))
    assert.equals(0, a:lock("lease"))
    local pttl = fx:cmd(1, "PTTL", "d:lease")
    assert.is_true(pttl > 0 and pttl <= 30000, tostring(pttl))
    assert.is_false(a:hold():lost()) -- a lease: lost() tells of a loss
    assert.equals(1, a:unlock())
  end)

  it("excludes hiredlock's own locks on dict:key, and the reverse", function()
    local client = fx:client({ timeout = 0.5, connect_timeout = 1 })
    local held = assert(client:acquire("ns:shared", { timeout = 0 }))
    local lock = assert(resty_lock:new("ns", { timeout = 0 }))
    assert.same({ nil, "timeout" }, { lock:lock("shared") })
    assert.is_true(held:release())
    assert.equals(0, lock:lock("shared"))
    assert.same({ nil, "timeout" }, { client:acquire("ns:shared", { timeout = 0 }) })
    assert.equals(1, lock:unlock())
  end)

  it("configure takes a client, and nil goes back to HIREDLOCK_URL(S)", function()
    local client = hiredlock.new(fx.urls)
    assert.is_true(resty_lock.configure(client))
    local lock = assert(resty_lock:new("c", { timeout = 0 }))
    assert.equals(0, lock:lock("x"))
    assert.equals(1, lock:unlock())
    assert.has_error(function()
      resty_lock.configure("http://nowhere")
    end)
    resty_lock.configure(fx.urls, { timeout = 0.5, connect_timeout = 1 })
  end)
end)
