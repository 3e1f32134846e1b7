-- Handle lifetimes: a lock keeps its client alive, the garbage collector
-- frees handles without network I/O, and handles used after their
-- finalizer ran (explicitly, or resurrected by another finalizer) raise a
-- clear error instead of crashing.
local fixture = require "helpers.fixture"
local hiredlock = require "hiredlock"
local core = require "hiredlock.core"

local function full_gc()
  collectgarbage("collect")
  collectgarbage("collect")
end

local function raises(text, fn)
  local ok, err = pcall(fn)
  assert.is_false(ok)
  assert(tostring(err):find(text, 1, true), ("expected %q in %q"):format(text,
    tostring(err)))
end

-- Runs fn from a finalizer of an object that becomes garbage now (a
-- newproxy userdata in 5.1/LuaJIT, a table in 5.4).
local function on_collect(fn)
  local newproxy = rawget(_G, "newproxy")
  if newproxy then
    local proxy = newproxy(true)
    getmetatable(proxy).__gc = fn
  else
    setmetatable({}, { __gc = fn })
  end
end

describe("handle lifetimes", function()
  local fx

  setup(function()
    fx = fixture.start(1)
  end)

  teardown(function()
    fx:stop()
  end)

  it("a lock keeps its client alive", function()
    local weak = setmetatable({}, { __mode = "v" })
    local lock
    do
      -- a fresh client's single try: deadlines for a loaded test run (its
      -- first connect under the 50 ms default missed once in make test)
      local client = fx:client({ timeout = 0.5, connect_timeout = 1 })
      weak.handle = client._handle
      lock = assert(client:acquire("life:client", { timeout = 0 }))
    end
    full_gc()
    assert.is_not_nil(weak.handle) -- anchored by the lock
    assert.equals(lock._handle:client(), weak.handle)
    local ok, err = lock:release()
    assert.is_true(ok)
    assert.is_nil(err)
    assert.equals(0, fx:cmd(1, "EXISTS", "life:client"))
    lock = nil -- luacheck: ignore
    full_gc()
    assert.is_nil(weak.handle) -- and freed with it
  end)

  it("collects a held lock without releasing it: its TTL ends it", function()
    do
      local lock = assert(fx:client():acquire("life:dropped", { ttl = 5,
        timeout = 0 }))
      assert.is_true(lock:held())
    end
    full_gc()
    -- No I/O from a finalizer: the key is still there, with its TTL.
    assert.equals(1, fx:cmd(1, "EXISTS", "life:dropped"))
    assert.is_true(fx:cmd(1, "PTTL", "life:dropped") > 0)
    fx:cmd(1, "DEL", "life:dropped")
  end)

  it("survives many handles coming and going", function()
    local client = fx:client()
    for i = 1, 300 do
      local lock = assert(client:acquire("life:many" .. i % 7, { timeout = 0 }))
      assert.is_true(lock:release())
      if i % 50 == 0 then
        full_gc()
      end
    end
    full_gc()
    assert.same({}, fx:cmd(1, "KEYS", "life:*"))
  end)

  it("raises on a lock handle used after its finalizer", function()
    local client = fx:client()
    local lock = assert(client:acquire("life:gc", { ttl = 5, timeout = 0 }))
    local handle = lock._handle
    local gc = debug.getmetatable(handle).__gc
    gc(handle)
    gc(handle) -- twice is harmless
    for _, call in ipairs({
      function() return lock:release() end,
      function() return lock:extend(5) end,
      function() return lock:validity() end,
      function() return lock:held() end,
      function() return handle:token() end,
      function() return handle:counts() end,
      function() return handle:begin("release") end,
    }) do
      raises("the lock was closed (finalized)", call)
    end
    assert.equals("hiredlock.core.lock (closed)", tostring(handle))
    assert.equals('hiredlock.lock "life:gc" (closed)', tostring(lock))
    fx:cmd(1, "DEL", "life:gc")
  end)

  it("raises on a client handle used after its finalizer", function()
    local client = fx:client()
    local lock = assert(client:acquire("life:cgc", { ttl = 5, timeout = 0 }))
    local handle = client._handle
    debug.getmetatable(handle).__gc(handle)
    raises("the client was closed (finalized)", function()
      return client:acquire("life:cgc2")
    end)
    raises("the client was closed (finalized)", function()
      return client:masters()
    end)
    -- Its lock cannot reach the masters any more; what it knows, it says.
    raises("the lock's client was closed (finalized)", function()
      return lock:release()
    end)
    raises("the lock's client was closed (finalized)", function()
      return lock:extend()
    end)
    assert.is_true(lock:held())
    assert.is_true(lock:validity() > 4)
    assert.equals("hiredlock.core.client (closed)", tostring(handle))
    fx:cmd(1, "DEL", "life:cgc")
    lock, client, handle = nil, nil, nil -- luacheck: ignore
    full_gc() -- the real finalizers run on closed handles: no double free
  end)

  it("raises on handles a finalizer brought back after collection", function()
    local back = {}
    do
      local client = fx:client()
      local lock = assert(client:acquire("life:zombie", { ttl = 5, timeout = 0 }))
      local parser = core.parser()
      on_collect(function()
        back.client, back.lock, back.parser = client, lock, parser
      end)
    end
    full_gc()
    assert.is_not_nil(back.lock)
    raises("the lock was closed (finalized)", function()
      return back.lock:release()
    end)
    raises("the client was closed (finalized)", function()
      return back.client:acquire("life:zombie2")
    end)
    raises("the parser was closed (finalized)", function()
      return back.parser:feed("+OK\r\n")
    end)
    assert.equals('hiredlock.client (closed)', tostring(back.client))
    back = nil -- luacheck: ignore
    full_gc()
    fx:cmd(1, "DEL", "life:zombie")
  end)

  it("rejects a handle of the wrong type as self", function()
    local lock = assert(fx:client():acquire("life:self", { timeout = 0 }))
    local release = getmetatable(lock._handle).__index.release
    raises("hiredlock.core.lock expected", function()
      return release(core.parser())
    end)
    raises("hiredlock.core.lock expected", function()
      return release(nil)
    end)
    assert.is_true(lock:release())
    assert.matches("^hiredlock%.lock \"life:self\" %(not held%)$", tostring(lock))
    assert.is_true(hiredlock.VERSION ~= nil)
  end)
end)
