-- client:with(name, opts, fn, ...): fn runs under the lock, which is always
-- released afterwards, also when fn raises.
local fixture = require "helpers.fixture"

describe("client:with", function()
  local fx, client

  setup(function()
    fx = fixture.start(1)
    client = fx:client()
  end)

  teardown(function()
    fx:stop()
  end)

  it("returns true and fn's results, nils included", function()
    local seen
    local results = { client:with("w:ok", { ttl = 5 }, function(lock, x, y)
      seen = { lock.name, lock:held(), fx:cmd(1, "GET", "w:ok") == lock.token }
      return x + y, nil, "z", nil
    end, 1, 2) }
    assert.same({ "w:ok", true, true }, seen)
    assert.equals(true, results[1])
    assert.equals(3, results[2])
    assert.is_nil(results[3])
    assert.equals("z", results[4])
    assert.equals(5, select("#", client:with("w:ok", nil, function()
      return 1, nil, 3, nil
    end)))
    assert.equals(0, fx:cmd(1, "EXISTS", "w:ok"))
  end)

  it("passes nil and many arguments through", function()
    local ok, n, last = client:with("w:args", nil, function(_, ...)
      return select("#", ...), (select(select("#", ...), ...))
    end, nil, nil, 3, nil, 5)
    assert.is_true(ok)
    assert.equals(5, n)
    assert.equals(5, last)
  end)

  it("releases when fn raises, then raises fn's error unchanged", function()
    local token
    local ok, err = pcall(client.with, client, "w:err", nil, function(lock)
      token = lock.token
      error("boom", 0)
    end)
    assert.is_false(ok)
    assert.equals("boom", err)
    assert.is_string(token)
    assert.equals(0, fx:cmd(1, "EXISTS", "w:err"))

    local obj = setmetatable({}, { __tostring = function() return "obj" end })
    ok, err = pcall(client.with, client, "w:err", nil, function()
      error(obj)
    end)
    assert.is_false(ok)
    assert.equals(obj, err) -- the very same error value
    assert.equals(0, fx:cmd(1, "EXISTS", "w:err"))

    -- A runtime error keeps its position.
    ok, err = pcall(client.with, client, "w:err", nil, function()
      local t = nil
      return t.field
    end)
    assert.is_false(ok)
    assert.matches("05%-with_spec%.lua:%d+: attempt to index", err)
    assert.equals(0, fx:cmd(1, "EXISTS", "w:err"))
  end)

  it("returns nil, err without calling fn when not acquired", function()
    local holder = assert(client:acquire("w:busy", { timeout = 0 }))
    local called = false
    local ok, err = client:with("w:busy", { timeout = 0.1 }, function()
      called = true
    end)
    assert.is_nil(ok)
    assert.equals("timeout", err)
    assert.is_false(called)
    assert.equals(holder.token, fx:cmd(1, "GET", "w:busy"))
    assert.is_true(holder:release())
  end)

  it("returns nil, \"not owned\" when the lock was lost during fn", function()
    local ok, err = client:with("w:lost", { ttl = 10 }, function()
      fx:cmd(1, "SET", "w:lost", "someoneelse00000000000000000000x")
      return "done"
    end)
    assert.is_nil(ok)
    assert.equals("not owned", err)
    assert.equals("someoneelse00000000000000000000x", fx:cmd(1, "GET", "w:lost"))
    fx:cmd(1, "DEL", "w:lost")
  end)

  it("accepts that fn released the lock itself", function()
    local ok, r = client:with("w:self", nil, function(lock)
      assert.is_true(lock:release())
      return "r"
    end)
    assert.is_true(ok)
    assert.equals("r", r)
  end)

  it("takes a callable table", function()
    local callable = setmetatable({}, {
      __call = function(_, lock, x)
        return lock.name .. x
      end,
    })
    local ok, r = client:with("w:call", nil, callable, "!")
    assert.is_true(ok)
    assert.equals("w:call!", r)
  end)

  it("nests different names and excludes the same one", function()
    local ok, inner_ok, inner_err = client:with("w:outer", nil, function()
      local a = { client:with("w:inner", nil, function() return "in" end) }
      local b = { client:with("w:outer", { timeout = 0 }, function() end) }
      return a[1] and a[2], b[2]
    end)
    assert.is_true(ok)
    assert.equals("in", inner_ok)
    assert.equals("timeout", inner_err)
  end)
end)
