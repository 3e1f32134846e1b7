-- Bad input: every row of the Lua bad-input table (helpers/bad_inputs.lua)
-- that needs no misbehaving server, one test a row: wrong types and values
-- raise an argument error naming the argument, with the core's own words,
-- nothing crashes and nothing reaches Redis; runtime failures return nil,
-- err. tests/reliability runs the same table with the rows that need
-- misbehaving servers as well, and counts them.
local fixture = require "helpers.fixture"
local bad = require "helpers.bad_inputs"

describe("bad input", function()
  local fx, ctx

  setup(function()
    fx = fixture.start(1)
    ctx = bad.context({
      client = fx:client(),
      ok = fx.urls[1],
      dup = fx.urls[1]:gsub("127%.0%.0%.1", "localhost"),
      port = fx.ports[1],
    })
  end)

  teardown(function()
    fx:stop()
  end)

  after_each(function()
    -- No row may leave a key behind.
    assert.same({}, fx:cmd(1, "KEYS", "*"))
  end)

  for _, row in ipairs(bad.rows("ok")) do
    it(row[1] .. ": " .. row[2], function()
      local r = bad.run(row, ctx)
      assert(r.as_expected, ("want %s, got %s"):format(r.expected, r.got))
    end)
  end
end)
