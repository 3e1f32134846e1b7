-- The C module under valgrind memcheck: every path of helpers/memcheck.lua
-- runs in a child interpreter, and any invalid access, use of uninitialised
-- memory or leak (but "still reachable", which is Lua's own) fails it.
-- LuaJIT's allocator is not valgrind-clean, so under LuaJIT the child is
-- lua5.1 loading the very same module from the same 5.1 tree.
local fixture = require "helpers.fixture"

describe("memcheck", function()
  it("finds no memory error or leak in the C module", function()
    local fx = fixture.start(1)
    local dead = fixture.start(1)
    dead:ctl("kill", 1)
    local auth = fixture.start(1, "--password right")
    local interp = fixture.interpreter()
    if rawget(_G, "jit") then
      interp = "lua5.1"
    end
    local here = debug.getinfo(1, "S").source:match("^@(.*)90%-memcheck_spec%.lua$")
    local cmd = ("URLS='%s' DOWN_URL='%s' AUTH_URL='%s' valgrind -q "
      .. "--error-exitcode=99 --leak-check=full "
      .. "--errors-for-leak-kinds=definite,indirect,possible "
      .. "--show-leak-kinds=definite,indirect,possible '%s' '%shelpers/memcheck.lua' "
      .. "2>&1; echo \"exit $?\""):format(fx.urls[1], dead.urls[1],
      auth.urls[1]:gsub(":right@", ":wrong@"), interp, here)
    local p = assert(io.popen(cmd))
    local out = p:read("*a")
    p:close()
    fx:stop()
    dead:stop()
    auth:stop()
    assert.truthy(out:find("memcheck: done\nexit 0\n", 1, true), out)
  end)
end)
