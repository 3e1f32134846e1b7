-- busted configuration, the same for every interpreter; run from the
-- repository root:  lua5.4 /usr/bin/busted -f tests/lua/busted-config.lua
-- Specs named *-lua54_spec.lua use Lua 5.4 syntax (`<close>`), so only an
-- interpreter that can parse it loads them.
local has_close = (loadstring or load)("local x <close> = nil") ~= nil

return {
  default = {
    ROOT = { "tests/lua" },
    pattern = "_spec",
    ["exclude-pattern"] = has_close and "" or "%-lua54_spec",
    lpath = "tests/lua/?.lua",
  },
}
