-- An ACL user allowed only what a lock needs (docs/DEPLOYMENTS.md, "ACL
-- users"), through redis://user:password@...: the documented rules are
-- enough for acquire, extend and release (EVAL after NOSCRIPT too); a key
-- outside the pattern is refused, as an authentication failure naming it.
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
    assert.matches("^authentication failed: .*NOPERM", err)
  end)
end)
