-- Lua 5.4 to-be-closed variables: `local lock <close> = ...` releases the
-- lock when the scope ends, normally or by an error. This file uses 5.4
-- syntax, so busted-config.lua loads it only where it parses.
local fixture = require "helpers.fixture"

describe("<close>", function()
  local fx, client

  setup(function()
    fx = fixture.start(1)
    client = fx:client()
  end)

  teardown(function()
    fx:stop()
  end)

  it("releases when the scope ends", function()
    do
      local lock <close> = assert(client:acquire("close:scope", { timeout = 0 }))
      assert.equals(lock.token, fx:cmd(1, "GET", "close:scope"))
    end
    assert.equals(0, fx:cmd(1, "EXISTS", "close:scope"))
  end)

  it("releases on return and on break", function()
    local function work()
      local lock <close> = assert(client:acquire("close:ret", { timeout = 0 }))
      return lock.token, fx:cmd(1, "GET", "close:ret")
    end
    local token, stored = work()
    assert.equals(token, stored)
    assert.equals(0, fx:cmd(1, "EXISTS", "close:ret"))
    for _ = 1, 3 do
      local lock <close> = assert(client:acquire("close:loop", { timeout = 0 }))
      break
    end
    assert.equals(0, fx:cmd(1, "EXISTS", "close:loop"))
  end)

  it("releases when an error unwinds the scope, keeping that error", function()
    local ok, err = pcall(function()
      local lock <close> = assert(client:acquire("close:err", { timeout = 0 }))
      error("boom", 0)
    end)
    assert.is_false(ok)
    assert.equals("boom", err)
    assert.equals(0, fx:cmd(1, "EXISTS", "close:err"))
  end)

  it("raises a lost lock when the scope ends normally", function()
    local ok, err = pcall(function()
      local lock <close> = assert(client:acquire("close:lost", { timeout = 0 }))
      fx:cmd(1, "SET", "close:lost", "someone-else")
    end)
    assert.is_false(ok)
    assert.matches("70%-close%-lua54_spec%.lua:%d+: not owned$", err)
    assert.equals("someone-else", fx:cmd(1, "GET", "close:lost"))
    -- Unwinding an error, the scope's own error wins.
    ok, err = pcall(function()
      local lock <close> = assert(client:acquire("close:lost2", { timeout = 0 }))
      fx:cmd(1, "SET", "close:lost2", "someone-else")
      error("the real problem", 0)
    end)
    assert.is_false(ok)
    assert.equals("the real problem", err)
    fx:cmd(1, "DEL", "close:lost", "close:lost2")
  end)

  it("does nothing for a lock released already or never acquired", function()
    do
      local lock <close> = assert(client:acquire("close:done", { timeout = 0 }))
      assert.is_true(lock:release())
    end
    local holder = assert(client:acquire("close:busy", { timeout = 0 }))
    do
      local lock <close>, err = client:acquire("close:busy", { timeout = 0 })
      assert.is_nil(lock)
      assert.equals("timeout", err)
    end
    assert.equals(holder.token, fx:cmd(1, "GET", "close:busy"))
    assert.is_true(holder:release())
  end)
end)
