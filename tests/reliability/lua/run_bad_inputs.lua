-- The reliability side of the Lua bad-input table (tests/lua/helpers/
-- bad_inputs.lua, the one the busted suite runs too): every row, the "env"
-- ones against the HRL_BAD_* servers of hrlrel/badenv.py, the observed
-- outcomes written as JSON for docs/RELIABILITY.md. Under lua5.1, luajit
-- and lua5.4; exits non-zero when a row does not give what it should.
--   lua run_bad_inputs.lua OUT.json     (run by tests/reliability/run_bad.py)
local dir = arg[0]:match("^(.*/)[^/]*$") or "./"
package.path = dir .. "../../lua/?.lua;" .. package.path -- tests/lua: helpers.*

local bad = require "helpers.bad_inputs"

local ok_url = assert(os.getenv("HRL_BAD_OK"), "HRL_BAD_OK")
local ctx = bad.context({ ok = ok_url, dup = assert(os.getenv("HRL_BAD_DUP")),
  port = assert(os.getenv("HRL_BAD_OK_PORT")) })
ctx.client = ctx.new(ok_url)

local function json(v)
  if type(v) == "boolean" then
    return tostring(v)
  end
  return '"' .. tostring(v):gsub('[%c"\\]', function(ch)
    return ("\\u%04x"):format(ch:byte())
  end) .. '"'
end

local version = os.getenv("HRL_LUA_INTERP") or _VERSION
local rows, failed = {}, 0
for _, row in ipairs(bad.rows()) do
  local r = bad.run(row, ctx)
  rows[#rows + 1] = r
  if not r.as_expected then
    failed = failed + 1
    print(("bad inputs (%s): NOT as expected: %s: want %s, got %s"):format(version,
      r.input, r.expected, r.got))
  end
end
local out = assert(io.open(arg[1], "w"))
out:write('{"runtime": ', json(version), ', "rows": [\n')
for i, r in ipairs(rows) do
  out:write(("  {%s}%s\n"):format(table.concat({
    '"category": ' .. json(r.category), '"input": ' .. json(r.input),
    '"expected": ' .. json(r.expected), '"got": ' .. json(r.got),
    '"as_expected": ' .. json(r.as_expected) }, ", "), i < #rows and "," or ""))
end
out:write("]}\n")
out:close()
print(("bad inputs (%s): %d of %d as expected"):format(version, #rows - failed, #rows))
os.exit(failed == 0 and 0 or 1)
