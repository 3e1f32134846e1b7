-- The lock object's fields (docs/LUA-API.md, "The lock object") over a
-- hold's whole life: the facade reads a fenced lock's fence while the hold
-- lasts (the core handle forgets it after) and a plain lock's not at all,
-- from acquire's option or the client's default; either way every field
-- reads the same before and after release, or a lost lease, with either
-- driver.
local fixture = require "helpers.fixture"
local socket_driver = require "helpers.socket_driver"
local system = require "system"

local TOLERANT = { timeout = 0.5, connect_timeout = 1 }

local function with(base, extra)
  local out = {}
  for k, v in pairs(base) do
    out[k] = v
  end
  for k, v in pairs(extra) do
    out[k] = v
  end
  return out
end

describe("the lock object", function()
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

  for _, driver in ipairs({ "hiredis", "socket" }) do
    describe("with the " .. driver .. " driver", function()
      local function client(opts)
        local c = fx:client(with(TOLERANT, opts or {}))
        if driver == "socket" then
          c._driver = socket_driver
        end
        return c
      end

      it("keeps its name and token after release", function()
        local lock = assert(client():acquire("fa:plain", { timeout = 0 }))
        local stored = fx:cmd(1, "GET", "fa:plain")
        assert.is_true(lock:release())
        -- Read for the first time after the hold ended.
        assert.equals(stored, lock.token)
        assert.equals("fa:plain", lock.name)
        assert.is_nil(lock.fence)
        assert.is_nil(lock.fence_string)
        assert.equals(lock.token, lock.token)
      end)

      it("a fenced lock keeps its fence after release", function()
        for want = 1, 2 do
          local lock = assert(client():acquire("fa:fenced", { fenced = true,
            timeout = 0 }))
          assert.is_true(lock:release())
          assert.equals(want, lock.fence)
          assert.equals(tostring(want), lock.fence_string)
        end
      end)

      it("takes the fenced default of the client, and its override", function()
        local c = client({ fenced = true })
        local lock = assert(c:acquire("fa:default", { timeout = 0 }))
        assert.is_true(lock:release())
        assert.equals(1, lock.fence)
        lock = assert(c:acquire("fa:default"))
        assert.is_true(lock:release())
        assert.equals("2", lock.fence_string)
        lock = assert(c:acquire("fa:default", { fenced = false, timeout = 0 }))
        assert.is_true(lock:release())
        assert.is_nil(lock.fence)
        assert.is_nil(lock.fence_string)
      end)
    end)
  end

  it("a lost lease keeps its token and fence", function()
    local lock = assert(fx:client(TOLERANT):acquire("fa:lost", { ttl = 0.3,
      auto_renew = true, fenced = true, timeout = 0 }))
    local stored = fx:cmd(1, "GET", "fa:lost")
    fx:cmd(1, "SET", "fa:lost", "someone else")
    for _ = 1, 300 do -- the renewer finds out within a renewal period
      if lock:lost() then
        break
      end
      system.sleep(0.01)
    end
    assert.same({ true, "not owned" }, { lock:lost() })
    assert.equals(stored, lock.token)
    assert.equals(1, lock.fence)
    assert.equals("1", lock.fence_string)
  end)

  it("fields a caller sets stay the caller's", function()
    local lock = assert(fx:client(TOLERANT):acquire("fa:own", { timeout = 0 }))
    lock.note = "mine"
    assert.equals("mine", lock.note)
    assert.is_nil(lock.nothing)
    assert.is_true(lock:release())
  end)
end)
