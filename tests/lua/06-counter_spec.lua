-- Several Lua processes increment one counter with GET, a pause, then SET:
-- under the lock no update is lost; without it (the negative control, which
-- shows the test can see a lost update) updates are lost.
local fixture = require "helpers.fixture"

local WORKERS, COUNT = 4, 25

-- Runs the workers, lets them start together, and returns their reports.
local function run_workers(fx, mode)
  local worker = debug.getinfo(1, "S").source:match("^@(.*)06%-counter_spec%.lua$")
    .. "helpers/counter_worker.lua"
  local go = "go:" .. mode
  local cmd = {}
  for _ = 1, WORKERS do
    cmd[#cmd + 1] = ("'%s' '%s' '%s' %d %d %s %s 2>&1 &"):format(
      fixture.interpreter(), worker, table.concat(fx.urls, ","), fx.ports[1],
      COUNT, mode, go)
  end
  cmd[#cmd + 1] = "wait"
  local p = assert(io.popen(table.concat(cmd, " ")))
  fx:cmd(1, "SET", go, "1")
  local reports = {}
  for line in p:lines() do
    reports[#reports + 1] = line
  end
  p:close()
  return reports
end

describe("several processes", function()
  local fx

  setup(function()
    fx = fixture.start(5)
  end)

  teardown(function()
    fx:stop()
  end)

  before_each(function()
    fx:flush()
  end)

  it("lose no update under the lock", function()
    local reports = run_workers(fx, "lock")
    local expected = {}
    for i = 1, WORKERS do
      expected[i] = "ok " .. COUNT
    end
    assert.same(expected, reports)
    assert.equals(tostring(WORKERS * COUNT), fx:cmd(1, "GET", "counter"))
    assert.equals(0, fx:count_key("counter:lock"))
  end)

  it("lose updates without it (negative control)", function()
    local reports = run_workers(fx, "none")
    assert.equals(WORKERS, #reports)
    local final = tonumber(fx:cmd(1, "GET", "counter"))
    assert.is_true(final < WORKERS * COUNT,
      "no update was lost without the lock: the test could not see one")
  end)
end)
