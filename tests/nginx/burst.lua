--- /burst: many acquires of one name at once in one worker, the shape of
-- a cache stampede (tests/nginx/test_first_try.py).
local hrltest = require "hrltest"

local stats = require("hiredlock")._driver.stats

local B = {}

--- /burst?c=NAME&fresh=1&name=N&n=K&timeout=S: K light threads of this
-- request acquire N at once (each with a client of its own when fresh=1,
-- as a client made per request), release at once, and the answer is
-- "rounds granted errors": the rounds this worker ran from the start of the
-- burst until the first acquire returned held (-1 when none did), how many
-- acquired, and the errors of those that did not, comma-separated.
function B.burst()
  local args = ngx.req.get_uri_args()
  local n = tonumber(args.n) or 10
  local timeout = tonumber(args.timeout) or 5
  local name = args.name
  local config = args.c or "c3"
  local shared = hrltest.client(config)
  local rounds0 = stats.rounds
  local at_first, granted, errors = nil, 0, {}
  local function one()
    local client = args.fresh == "1" and hrltest.client("fresh:" .. config)
      or shared
    local lock, err = client:acquire(name, { ttl = 10, timeout = timeout })
    if not lock then
      errors[#errors + 1] = err
      return
    end
    at_first = at_first or stats.rounds - rounds0
    granted = granted + 1
    local ok, rerr = lock:release()
    if not ok then
      errors[#errors + 1] = "release: " .. rerr
    end
  end
  local threads = {}
  for i = 1, n do
    threads[i] = ngx.thread.spawn(one)
  end
  for i = 1, n do
    ngx.thread.wait(threads[i])
  end
  ngx.print(("%d %d %s"):format(at_first or -1, granted,
    table.concat(errors, ",")))
end

--- /abandon?n=K: K first tries (first_try.enter) of distinct names whose
-- owners never say they are over, as when their requests are aborted mid-
-- round, on masters whose rounds are bounded at 0 s, then one more of the
-- first name: "entries_after replaced", the worker's first tries on record
-- (swept, not K and more) and whether the last enter owned a new first
-- try instead of parking behind the abandoned one ("new" or "parked").
function B.abandon()
  local first_try = require "hiredlock.driver.first_try"
  local n = tonumber(ngx.req.get_uri_args().n) or 1000
  local list = { { opts = { pool = "abandon:" .. ngx.now() },
    connect_timeout_ms = 0, timeout_ms = 0 } }
  for i = 1, n do
    first_try.enter("abandoned:" .. i, list, 5)
  end
  local again = first_try.enter("abandoned:1", list, 5)
  ngx.print(("%d %s"):format(first_try.size(), again and "new" or "parked"))
end

return B
