-- An ACL user allowed only what a lock needs (docs/DEPLOYMENTS.md, "ACL
-- users"), through redis://user:password@...: the documented rules are
-- enough for acquire, extend and release (EVAL after NOSCRIPT too); a key
-- outside the pattern, or a command the rules leave out, is a permission
-- refusal (not an authentication failure) naming the command and key, in
-- the words of every runtime.
local fixture = require "helpers.fixture"
local hiredlock = require "hiredlock"

-- The line DEPLOYMENTS.md gives, for the key prefix "locks:".
local LOCK_RULES = "resetkeys ~locks:* resetchannels &locks:hiredlock:wake:* -@all +set +eval +evalsha +get +del +pexpire +exists +pttl +time +zadd +zrange +zrem +hset +hget +hdel +publish +subscribe"

describe("an ACL user with only a lock's rights", function()
  local fx

  setup(function()
    fx = fixture.start(1, "--acl-user locker:pw --acl-rules '" .. LOCK_RULES .. "'")
  end)

  teardown(function()
    fx:stop()
  end)

  local function client(prefix)
    return hiredlock.new(("redis://locker:pw@127.0.0.1:%d"):format(fx.ports[1]),
      { key_prefix = prefix, timeout = 0.5, connect_timeout = 1 })
  end

  it("acquires, extends and releases", function()
    local c = client("locks:")
    for k = 1, 3 do
      local lock = assert(c:acquire("acl", { timeout = 0 }))
      assert.equals(lock.token, fx:cmd(1, "GET", "locks:acl"))
      assert.is_true(lock:extend(20))
      if k == 2 then
        fx:cmd(1, "SCRIPT", "FLUSH") -- NOSCRIPT, then EVAL
      end
      assert.is_true(lock:release())
    end
    assert.equals(0, fx:count_key("locks:acl"))
  end)

  it("is refused a key outside its pattern", function()
    local lock, err = client("other:"):acquire("acl", { timeout = 0 })
    assert.is_nil(lock)
    assert.matches("^permission denied: 0 of 1 masters answered .*NOPERM", err)
    assert.equals("; refused: SET on 'other:acl'",
      err:sub(-#"; refused: SET on 'other:acl'"))
  end)

  it("is refused a command the rules leave out", function()
    fx:cmd(1, "ACL", "SETUSER", "locker", "-pexpire")
    local lock = assert(client("locks:"):acquire("acl2", { timeout = 0 }))
    local ok, err = lock:extend(20)
    fx:cmd(1, "ACL", "SETUSER", "locker", "+pexpire")
    assert.is_nil(ok)
    assert.matches("^permission denied: .*can't run this command", err)
    assert.matches("; refused: the extend script on 'locks:acl2'$", err)
    assert.is_true(lock:release())
  end)
end)
