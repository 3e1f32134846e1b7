--- The test application nginx.conf.in runs: locations over hiredlock as an
-- OpenResty user writes them. Clients are made once per worker, on first
-- use, from the masters the suite passes in the environment (the `env`
-- lines of nginx.conf.in). Responses are plain text; the headers X-Pid
-- (the worker), X-Elapsed (seconds the lock call took, measured here) and
-- X-Token carry what the tests look at.
local hiredlock = require "hiredlock"
local core = require "hiredlock.core"

local T = {}

-- Client configurations by name: which masters, which options
-- (tests/nginx/hrltest_configs.lua).
local CONFIGS = require "hrltest_configs"

local clients = {}

--- The worker's client for a configuration name; "fresh:NAME", a new
-- client for every call (a client made per request, inside the handler).
function T.client(name)
  local c = clients[name]
  if not c then
    local make = CONFIGS[name:gsub("^blocking:", ""):gsub("^fresh:", "")]
    if not make then
      return nil
    end
    c = hiredlock.new(make())
    if name:find("^blocking:") then
      -- The negative control: the C driver's blocking sockets inside nginx.
      c._driver = require "hiredlock.driver.hiredis"
    end
    if not name:find("^fresh:") then
      clients[name] = c
    end
  end
  return c
end

local stats = hiredlock._driver.stats -- nil outside the cosocket driver
local heard = require("hiredlock.driver.listener").stats

--- log_by_lua of every location: publishes this worker's driver counters
-- in the shared dict, for /stats.
function T.publish_stats()
  if stats then
    ngx.shared.hrltest:set("stats:" .. ngx.worker.pid(),
      ("%d %d %d %d %d %d %d"):format(stats.new, stats.reused, stats.rounds,
        heard.subscribed, heard.handoffs, heard.feeds or -1, stats.kept or -1))
  end
end

local function arg_number(v)
  return v and tonumber(v)
end

local function reply(status, body, lock, elapsed)
  ngx.status = status
  ngx.header["X-Pid"] = ngx.worker.pid()
  if elapsed then
    ngx.header["X-Elapsed"] = ("%.6f"):format(elapsed)
  end
  if lock then
    ngx.header["X-Token"] = lock.token
    -- masters that granted the acquire (counts of the last operation)
    ngx.header["X-Granted"] = lock.granted
    ngx.header["X-Fence"] = lock.fence_string -- a fenced lock's
  end
  ngx.print(body)
end

--- /lock?c=NAME&name=N&ttl=S&timeout=S&hold=S&keep=1&fenced=1&sync=N&aof=1
--        &mode=M&permits=P
-- Acquires (fenced=1: a fenced lock, its fence in X-Fence), holds for
-- `hold` seconds (ngx.sleep), then releases, unless keep=1 leaves the lock
-- to its TTL. 200 "ok" or 409 with the error. mode read/write/permit (with
-- permits): a hold of a read-write lock or a semaphore; X-Permit says a
-- permit's number.
function T.lock()
  local args = ngx.req.get_uri_args()
  local client = T.client(args.c or "c3")
  local t0 = core.now()
  local lock, err = client:acquire(args.name or "res", {
    ttl = arg_number(args.ttl) or 10,
    timeout = arg_number(args.timeout) or 0,
    fenced = args.fenced == "1",
    sync_replicas = arg_number(args.sync),
    sync_aof = args.aof == "1" or nil,
    mode = args.mode,
    permits = arg_number(args.permits),
  })
  local elapsed = core.now() - t0
  if not lock then
    return reply(409, err, nil, elapsed)
  end
  if lock.permit then
    ngx.header["X-Permit"] = lock.permit
  end
  lock.granted = lock._handle:counts().ok
  if args.extend then
    local ok, eerr = lock:extend(arg_number(args.extend))
    ngx.header["X-Extend"] = ok and "true" or eerr
  end
  local hold = arg_number(args.hold)
  if hold and hold > 0 then
    ngx.sleep(hold)
  end
  if args.keep ~= "1" then
    local ok, rerr = lock:release()
    if not ok then
      return reply(500, "release: " .. rerr, lock, elapsed)
    end
  end
  return reply(200, "ok", lock, elapsed)
end

--- /release_twice?c=NAME&name=N&ttl=S&pause=S: acquires, sleeps `pause`
-- seconds (the test stops a master meanwhile), releases, sleeps `pause`
-- again (the test resumes it), and releases again: "first|second", each
-- "true" or the error.
function T.release_twice()
  local args = ngx.req.get_uri_args()
  local lock, err = T.client(args.c or "r5"):acquire(args.name,
    { ttl = arg_number(args.ttl) or 10, timeout = 0 })
  if not lock then
    return reply(409, err)
  end
  local pause = arg_number(args.pause) or 0.5
  ngx.sleep(pause)
  local ok1, err1 = lock:release()
  local held = lock:held()
  ngx.sleep(pause)
  local ok2, err2 = lock:release()
  return reply(200, ("%s|%s|%s"):format(ok1 and "true" or err1,
    held and "held" or "not held", ok2 and "true" or err2), lock)
end

--- /with?name=N&raise=1: client:with; fn returns the token, or raises.
function T.with()
  local args = ngx.req.get_uri_args()
  local called, ok, token = pcall(T.client("c3").with, T.client("c3"),
    args.name, { ttl = 10, timeout = 0 }, function(lock)
      if args.raise == "1" then
        error({ token = lock.token }) -- a table: passed through unchanged
      end
      return lock.token
    end)
  if not called then
    return reply(500, "raised " .. ok.token)
  end
  if not ok then
    return reply(409, token)
  end
  return reply(200, token)
end

-- A table as "path=value" lines, sorted: a.b=1, masters.1.ok=true.
local function flatten(t, prefix, out)
  for k, v in pairs(t) do
    local key = prefix .. tostring(k)
    if type(v) == "table" then
      flatten(v, key .. ".", out)
    else
      out[#out + 1] = key .. "=" .. tostring(v)
    end
  end
  return out
end

--- /inspect?c=NAME&name=N: client:inspect(name) as sorted "path=value"
-- lines (the cosocket driver's inspection), or 500 and the error.
function T.inspect()
  local args = ngx.req.get_uri_args()
  local ins, err = T.client(args.c or "c3"):inspect(args.name)
  if not ins then
    return reply(500, err)
  end
  local lines = flatten(ins, "", {})
  table.sort(lines)
  return reply(200, table.concat(lines, "\n"))
end

--- /idle?s=S: this worker's subscriber connections close after S seconds
-- without waiters (hiredlock.driver.listener.IDLE_S); the worker's pid.
function T.idle()
  require("hiredlock.driver.listener").IDLE_S = tonumber(ngx.var.arg_s)
  T.ping()
end

--- /ping: the worker's pid, at once.
function T.ping()
  ngx.header["X-Pid"] = ngx.worker.pid()
  ngx.print(ngx.worker.pid())
end

--- /stats: every worker's "pid new reused rounds subscribed handoffs
-- feeds kept", one a line (subscribed: subscriptions made, handoffs:
-- hand-offs heard, feeds: subscriber connections running now, kept:
-- connections a lock took up again for the late replies they owed).
function T.stats()
  local dict = ngx.shared.hrltest
  local lines = {}
  for _, key in ipairs(dict:get_keys(0)) do
    local pid = key:match("^stats:(%d+)$")
    if pid then
      lines[#lines + 1] = pid .. " " .. dict:get(key)
    end
  end
  ngx.print(table.concat(lines, "\n"))
end

-- A command to the counter's Redis (the first of URLS3) over a cosocket:
-- the test's own plumbing, separate from the driver under test. Returns
-- the reply's kind and value.
local function call(...)
  local port = tonumber(os.getenv("HRL_NGX_URLS3"):match(":(%d+)"))
  local sock = ngx.socket.tcp()
  sock:settimeout(5000)
  assert(sock:connect("127.0.0.1", port, { pool = "hrltest:counter" }))
  local parts = { "*" .. select("#", ...) .. "\r\n" }
  for i = 1, select("#", ...) do
    local a = tostring((select(i, ...)))
    parts[#parts + 1] = "$" .. #a .. "\r\n" .. a .. "\r\n"
  end
  assert(sock:send(parts))
  local parser = core.parser()
  while true do
    local kind, value = parser:next()
    if kind then
      sock:setkeepalive()
      return kind, value
    end
    assert(parser:feed(assert(sock:receiveany(4096))))
  end
end

local function redis(...)
  local kind, value = call(...)
  assert(kind ~= "error", value)
  return value
end

-- The store of the fencing example's upstream, shaped like a
-- lua-resty-redis object for hiredlock.fenced_write: eval() -> reply, or
-- nil and the error reply.
local store = {
  eval = function(_, ...)
    local kind, value = call("EVAL", ...)
    if kind == "error" then
      return nil, value
    end
    return value
  end,
}

--- The upstream of docs/LUA-API.md's fencing example (/docs/NAME on the
-- backend port): writes ?body=... under store:doc:NAME with the request's
-- Fencing-Token, the HTTP recipe of docs/SAFETY.md. 200 "written FENCE",
-- 409 with the STALEFENCE message for an older fence, 400 without one.
function T.docs_backend()
  local fence = ngx.req.get_headers()["Fencing-Token"]
  if type(fence) ~= "string" or not fence:find("^[1-9]%d*$") then
    ngx.status = 400
    return ngx.print("a Fencing-Token header is needed")
  end
  local doc = "store:doc:" .. ngx.var.uri
  local res, err = hiredlock.fenced_write(store, { doc .. ":fence", doc }, fence,
    "SET", doc, ngx.var.arg_body or "")
  if res then
    return ngx.print("written " .. fence)
  end
  ngx.status = err:find("^STALEFENCE") and 409 or 503
  ngx.print(err)
end

-- The non-atomic increment: GET, a yield to the event loop, SET.
local function increment(key)
  local value = tonumber(redis("GET", key) or "0")
  ngx.sleep(0.001)
  redis("SET", key, value + 1)
end

--- /counter?key=K&lock=0|1&c=NAME: increments K in Redis (the first of
-- HRL_NGX_URLS3), under the lock of client NAME (default c3) or not.
function T.counter()
  local args = ngx.req.get_uri_args()
  local key = args.key or "counter"
  if args.lock == "0" then
    increment(key)
    return reply(200, "ok")
  end
  local ok, err = T.client(args.c or "c3"):with("lock:" .. key, { ttl = 10, timeout = 60 },
    function(_, k) increment(k) end, key)
  if not ok then
    return reply(409, err)
  end
  return reply(200, "ok")
end

-- Bad requests: the rows of the Lua bad-input table with an id
-- (tests/lua/helpers/bad_inputs.lua, the table every Lua suite uses);
-- guard=1 runs the row in the pcall idiom the README shows (400 and the
-- message), guard=0 lets the error escape (ngx_lua answers 500 and logs it;
-- the worker goes on).
local BAD = require "helpers.bad_inputs"

--- /bad?case=ID&guard=0|1
function T.bad()
  local args = ngx.req.get_uri_args()
  local row = assert(BAD.by_id(args.case), "no such case")
  local ctx = { client = T.client("c3") }
  if args.guard == "0" then
    row[3](ctx)
    return reply(200, "no error")
  end
  local ok, err = pcall(row[3], ctx)
  if not ok then
    return reply(400, tostring(err))
  end
  return reply(200, "no error")
end

-- Takes the leases /lease asks for, watches them and, unless drop=1,
-- releases them: the response's lines so far. A function of its own, so
-- that no slot of the handler's frame keeps a dropped lease alive.
local function hold_leases(args)
  local opts = { ttl = arg_number(args.ttl) or 1, timeout = 0, auto_renew = true,
    max_hold = arg_number(args.max_hold) }
  local stats = hiredlock._driver.stats
  local locks = {}
  for i = 1, arg_number(args.n) or 1 do
    local name = i == 1 and args.name or (args.name .. ":" .. i)
    locks[i] = assert(T.client(args.c or "c3"):acquire(name, opts))
  end
  if args.c2 then
    locks[#locks + 1] = assert(T.client(args.c2):acquire(args.name .. ":c2",
      opts))
  end
  local out = { "token=" .. locks[1].token }
  local held, renewers, after = true, 0, "never"
  local t0 = core.now()
  while core.now() - t0 < (arg_number(args.hold) or 1) do
    ngx.sleep(0.05)
    renewers = math.max(renewers, stats.renewers)
    for i = 1, #locks do
      held = held and locks[i]:held()
    end
    if args.until_lost == "1" and locks[1]:lost() then
      after = ("%.3f"):format(core.now() - t0)
      break
    end
  end
  local lost, reason = locks[1]:lost()
  local _, check = locks[1]:check()
  out[#out + 1] = "held=" .. tostring(held)
  out[#out + 1] = "lost=" .. tostring(lost) .. (reason and (" " .. reason) or "")
  out[#out + 1] = "check=" .. tostring(check or true)
  out[#out + 1] = "after=" .. after
  out[#out + 1] = "renewers=" .. renewers
  if args.drop ~= "1" then
    local ok, err = locks[1]:release()
    out[#out + 1] = "release=" .. tostring(ok or err)
    for i = 2, #locks do
      locks[i]:release()
    end
  end
  return out
end

--- /lease?c=NAME&name=N&ttl=S&hold=S&n=K&max_hold=S&until_lost=1&c2=NAME
--   &drop=1
-- Acquires K (default 1) auto-renewed locks (N, N:2, ...) on client c, and
-- with c2 one more (N:c2) on that client, then looks at them every 50 ms
-- for `hold` seconds (until_lost=1: until the first is lost), releases
-- them, and waits for the renewers to end. drop=1 drops them unreleased
-- instead (collected). Lines "key=value": held (all, at every look), lost
-- and check (of the first), after (seconds until it was found lost),
-- renewers (most renewer timers running in this worker), release (the
-- first's), renewers_after, token (the first's).
function T.lease()
  local args = ngx.req.get_uri_args()
  local out = hold_leases(args)
  collectgarbage()
  collectgarbage()
  local stats = hiredlock._driver.stats
  local t1 = core.now()
  while stats.renewers > 0 and core.now() - t1 < 3 do
    ngx.sleep(0.05)
  end
  out[#out + 1] = "renewers_after=" .. stats.renewers
  return reply(200, table.concat(out, "\n") .. "\n")
end

-- Phases without cosockets: what an acquire there returns, and how long
-- it took (it must not block).
local function try_here()
  local t0 = core.now()
  local lock, err = T.client("c3"):acquire("phase", { timeout = 1 })
  if lock then
    lock:release()
    return ("ok %.3f"):format(core.now() - t0)
  end
  return ("%s|%.3f"):format(err, core.now() - t0)
end

--- init_by_lua: the master process, before forking (phase "init").
function T.init()
  ngx.shared.hrltest:set("phase:init", try_here())
end

--- init_worker_by_lua: directly (no cosockets), then from a timer (yes).
function T.init_worker()
  if ngx.worker.id() ~= 0 then
    return
  end
  local dict = ngx.shared.hrltest
  dict:set("phase:init_worker", try_here())
  assert(ngx.timer.at(0, function(premature)
    if not premature then
      dict:set("phase:timer", try_here())
    end
  end))
end

function T.in_set()
  return try_here()
end

function T.in_header_filter()
  ngx.header["X-Hrl-Phase"] = try_here()
end

function T.in_log()
  ngx.shared.hrltest:set("phase:log", try_here())
end

--- /phase?name=P: what the phase P recorded.
function T.phase()
  ngx.print(ngx.shared.hrltest:get("phase:" .. ngx.var.arg_name) or "")
end

return T
