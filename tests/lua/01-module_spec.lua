-- The modules load on this interpreter and describe themselves; making a
-- client does no I/O.
local hiredlock = require "hiredlock"
local core = require "hiredlock.core"

local function header_version()
  local f = assert(io.open("core/include/hiredlock.h"))
  local text = f:read("*a")
  f:close()
  return text:match('#define HIREDLOCK_VERSION "([%d.]+)"')
end

describe("hiredlock module", function()
  it("takes its version from the C header", function()
    local version = header_version()
    assert.is_string(version)
    assert.equals(version, core.VERSION)
    assert.equals(version, hiredlock.VERSION)
    assert.equals("hiredlock " .. version, hiredlock._VERSION)
  end)

  it("exposes the core's limits", function()
    assert.equals(512, core.NAME_MAX)
    assert.equals(32, core.TOKEN_LEN)
  end)

  it("makes a client without connecting", function()
    -- Port 1 on 127.0.0.1 has no server: new() must not try it.
    local client = hiredlock.new({ "redis://127.0.0.1:1", "redis://127.0.0.1:2",
      "unix:///nonexistent/redis.sock" })
    assert.equals(3, client:masters())
    assert.equals(2, client:quorum())
    assert.equals("hiredlock.client (3 masters: 127.0.0.1:1 127.0.0.1:2 "
      .. "/nonexistent/redis.sock)", tostring(client))
  end)

  it("takes one URL as a string", function()
    local client = hiredlock.new("redis://127.0.0.1:1")
    assert.equals(1, client:masters())
    assert.equals(1, client:quorum())
    assert.equals("hiredlock.client (1 master: 127.0.0.1:1)", tostring(client))
  end)

  it("computes the quorum as N/2 + 1", function()
    for n, quorum in pairs({ [1] = 1, [2] = 2, [3] = 2, [4] = 3, [5] = 3 }) do
      local urls = {}
      for i = 1, n do
        urls[i] = "redis://127.0.0.1:" .. i
      end
      assert.equals(quorum, hiredlock.new(urls):quorum())
    end
  end)

  it("runs on the interpreter the suite asked for", function()
    local want = os.getenv("HRL_LUA_VERSION")
    if want then
      local jit_version = rawget(_G, "jit") and jit.version or nil
      local running = jit_version and "luajit" or _VERSION:match("%d+%.%d+")
      assert.equals(want, running)
    end
    assert.is_truthy(_VERSION == "Lua 5.1" or _VERSION == "Lua 5.4")
  end)
end)
