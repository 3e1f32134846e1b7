-- Bad inputs, Lua: one table, one row per bad input, each checked for the
-- error it must give (programming errors raise, runtime failures return
-- nil, err); the observed errors are written out as JSON for the table in
-- docs/RELIABILITY.md. Runs under lua5.1, luajit and lua5.4.
--   lua bad_inputs.lua OUT.json   (HRL_BAD_* servers: hrlrel/badenv.py)
local dir = arg[0]:match("^(.*/)[^/]*$") or "./"
-- resp.lua is the Lua test suites' own (tests/lua/helpers).
package.path = dir .. "?.lua;" .. dir .. "../../lua/helpers/?.lua;" .. package.path

local hiredlock = require "hiredlock"
local resp = require "resp"

local E = setmetatable({}, { __index = function(_, k)
  return assert(os.getenv(k), k)
end })
local OK = E.HRL_BAD_OK
local FAST = { timeout = 0.5, connect_timeout = 0.5 }
local inspect = assert(resp.connect(tonumber(E.HRL_BAD_OK_PORT), 30))

local function client(url, opts)
  local o = {}
  for k, v in pairs(FAST) do
    o[k] = v
  end
  for k, v in pairs(opts or {}) do
    o[k] = v
  end
  return hiredlock.new(url or OK, o)
end

local c = client()

local function acquire_on(url)
  return client(url):acquire("bad:srv", { ttl = 5, timeout = 0.2 })
end

local function released()
  local lock = assert(c:acquire("bad:rel", { ttl = 5, timeout = 0 }))
  assert(lock:release())
  return lock
end

local function stored(name)
  local lock, err = c:acquire(name, { ttl = 5, timeout = 0 })
  local there = inspect:call("EXISTS", name)
  if lock then
    lock:release()
  end
  return ("acquired=%s, key of %d bytes stored=%s"):format(tostring(lock ~= nil), #name,
    tostring(there == 1)), err
end

local function wrongtype_acquire()
  inspect:call("DEL", "bad:list")
  inspect:call("LPUSH", "bad:list", "x")
  return c:acquire("bad:list", { ttl = 5, timeout = 0 })
end

local function wrongtype_release()
  inspect:call("DEL", "bad:list2")
  local lock = assert(c:acquire("bad:list2", { ttl = 5, timeout = 0 }))
  inspect:call("DEL", "bad:list2")
  inspect:call("LPUSH", "bad:list2", "x")
  return lock:release()
end

local function masters(n)
  local urls = {}
  for i = 1, n do
    urls[i] = "redis://127.0.0.1:" .. (1000 + i)
  end
  return urls
end

local NAN, INF = 0 / 0, math.huge
local X = "x"

-- category, input, call, expected kind, message fragment. Kinds: "raises"
-- (an error containing the fragment), "nil, err" (nil and a message
-- containing it), "returns" (the first value, as text), "ok" (accepted).
local ROWS = {
  { "name", 'name ""', function() return c:acquire("") end, "raises",
    "bad argument #1 to 'acquire' (name must be 1 to 512 bytes, got 0)" },
  { "name", "name of 513 bytes", function() return c:acquire(X:rep(513)) end, "raises",
    "got 513" },
  { "name", "name of 257 x 'é' (514 bytes)", function() return c:acquire(("é"):rep(257)) end,
    "raises", "got 514" },
  { "name", 'name "a\\0b" (embedded NUL)', function() return stored("bad:a\0b") end,
    "returns", "acquired=true, key of 7 bytes stored=true" },
  { "name", "name \"\\255\\254\" (invalid UTF-8)", function() return stored("bad:\255\254") end,
    "returns", "acquired=true" },
  { "name", "name nil", function() return c:acquire(nil) end, "raises",
    "name must be a string, got nil" },
  { "name", "name 42", function() return c:acquire(42) end, "raises",
    "name must be a string, got number" },
  { "name", "name {}", function() return c:acquire({}) end, "raises", "got table" },
  { "name", "name true", function() return c:acquire(true) end, "raises", "got boolean" },
  { "name", "name print (a function)", function() return c:with(print, nil, print) end,
    "raises", "got function" },
  { "ttl", "ttl = 0", function() return c:acquire(X, { ttl = 0 }) end, "raises",
    "ttl must be between 0.005 and 2147483.647 seconds, got 0" },
  { "ttl", "ttl = -1", function() return c:acquire(X, { ttl = -1 }) end, "raises", "got -1" },
  { "ttl", "ttl = nan", function() return c:acquire(X, { ttl = NAN }) end, "raises", "nan" },
  { "ttl", "ttl = inf", function() return c:acquire(X, { ttl = INF }) end, "raises",
    "got inf" },
  { "ttl", "ttl = -inf", function() return c:acquire(X, { ttl = -INF }) end, "raises",
    "got -inf" },
  { "ttl", "ttl = 2147484 (overflow)", function() return c:acquire(X, { ttl = 2147484 }) end,
    "raises", "2147483.647" },
  { "ttl", "ttl = 2^64", function() return c:acquire(X, { ttl = 2 ^ 64 }) end, "raises",
    "ttl must be" },
  { "ttl", "ttl = 0.0004 (sub-millisecond)", function()
    return c:acquire(X, { ttl = 0.0004 })
  end, "raises", "got 0.0004" },
  { "ttl", 'ttl = "10"', function() return c:acquire(X, { ttl = "10" }) end, "raises",
    "ttl" },
  { "ttl", "ttl = true", function() return c:acquire(X, { ttl = true }) end, "raises",
    "ttl" },
  { "ttl", "lock:extend(0)", function()
    local lock = assert(c:acquire("bad:ext", { ttl = 5, timeout = 0 }))
    local ok, err = pcall(lock.extend, lock, 0)
    lock:release()
    if not ok then
      error(err, 0)
    end
  end, "raises", "got 0" },
  { "timeout", "timeout = -1", function() return c:acquire(X, { timeout = -1 }) end,
    "raises", "timeout must be between" },
  { "timeout", "timeout = nan", function() return c:acquire(X, { timeout = NAN }) end,
    "raises", "nan" },
  { "timeout", "timeout = inf", function() return c:acquire(X, { timeout = INF }) end,
    "raises", "got inf" },
  { "timeout", 'timeout = "1"', function() return c:acquire(X, { timeout = "1" }) end,
    "raises", "timeout" },
  { "timeout", "option 'tll' (typo)", function() return c:acquire(X, { tll = 1 }) end,
    "raises", "unknown option 'tll'" },
  { "timeout", "opts = 5", function() return c:acquire(X, 5) end, "raises", "table" },
  { "timeout", "new: timeout = 0", function() return client(OK, { timeout = 0 }) end,
    "raises", "timeout" },
  { "timeout", "new: connect_timeout = -1", function()
    return client(OK, { connect_timeout = -1 })
  end, "raises", "connect_timeout" },
  { "timeout", "new: retry_delay = -1", function() return client(OK, { retry_delay = -1 }) end,
    "raises", "retry_delay" },
  { "timeout", "new: timeout = 0.0001", function() return client(OK, { timeout = 0.0001 }) end,
    "raises", "got 0.0001" },
  { "config", "new({}) (N = 0)", function() return hiredlock.new({}) end, "raises",
    "1 to 63 masters, got 0" },
  { "config", "64 masters", function() return hiredlock.new(masters(64)) end, "raises",
    "got 64" },
  { "config", "the same master twice", function() return hiredlock.new({ OK, OK }) end,
    "raises", "listed twice" },
  { "config", "the same master as 127.0.0.1 and localhost", function()
    return hiredlock.new({ OK, E.HRL_BAD_DUP })
  end, "ok", "" },
  { "config", "drift_factor = 0.5", function() return client(OK, { drift_factor = 0.5 }) end,
    "raises", "drift_factor must be in [0, 0.5)" },
  { "config", "drift_factor = -0.1", function() return client(OK, { drift_factor = -0.1 }) end,
    "raises", "drift_factor" },
  { "config", "drift_factor = nan", function() return client(OK, { drift_factor = NAN }) end,
    "raises", "drift_factor" },
  { "config", "key_prefix of 513 bytes", function()
    return client(OK, { key_prefix = ("p"):rep(513) })
  end, "raises", "key_prefix" },
  { "config", "option 'tiemout' (typo)", function() return client(OK, { tiemout = 1 }) end,
    "raises", "unknown option 'tiemout'" },
  { "url", 'url ""', function() return hiredlock.new("") end, "raises", "url" },
  { "url", 'url "http://x"', function() return hiredlock.new("http://x") end, "raises",
    "scheme must be redis:// or unix://" },
  { "url", 'url "redis://h:99999"', function() return hiredlock.new("redis://h:99999") end,
    "raises", "port" },
  { "url", 'url "redis://:@h"', function() return hiredlock.new("redis://:@h") end, "raises",
    "empty password" },
  { "url", 'url "redis://h/x"', function() return hiredlock.new("redis://h/x") end, "raises",
    "database" },
  { "url", 'url "unix://"', function() return hiredlock.new("unix://") end, "raises",
    "absolute" },
  { "url", 'url "redis://[::1"', function() return hiredlock.new("redis://[::1") end,
    "raises", "url" },
  { "url", 'url "redis://a\\0b" (embedded NUL)', function()
    return hiredlock.new("redis://a\0b")
  end, "raises", "urls[1] contains a NUL character" },
  { "type", "urls = 5", function() return hiredlock.new(5) end, "raises", "urls" },
  { "type", "urls = {5}", function() return hiredlock.new({ 5 }) end, "raises", "url" },
  { "type", "opts = \"fast\"", function() return hiredlock.new(OK, "fast") end, "raises",
    "table" },
  { "type", "with: fn = 5", function() return c:with("bad:w", nil, 5) end, "raises",
    "function expected" },
  { "state", "release twice", function() return released():release() end, "nil, err",
    "not held" },
  { "state", "extend after release", function() return released():extend() end, "nil, err",
    "not held" },
  { "state", "acquire while another lock object holds it", function()
    local lock = assert(c:acquire("bad:h", { ttl = 5, timeout = 0 }))
    local a, b = c:acquire("bad:h", { ttl = 5, timeout = 0 })
    lock:release()
    return a, b
  end, "nil, err", "timeout" },
  { "state", "release after the key expired", function()
    local lock = assert(c:acquire("bad:exp", { ttl = 0.05, timeout = 0 }))
    require("system").sleep(0.1)
    return lock:release()
  end, "nil, err", "not owned" },
  { "server", "OOM (maxmemory 1)", function() return acquire_on(E.HRL_BAD_OOM) end,
    "nil, err", "server error: 0 of 1 masters answered (1 needed)" },
  { "server", "READONLY (a replica)", function() return acquire_on(E.HRL_BAD_RO) end,
    "nil, err", "READONLY" },
  { "server", "BUSY (a script runs)", function() return acquire_on(E.HRL_BAD_BUSY) end,
    "nil, err", "BUSY" },
  { "server", "LOADING (scripted reply)", function() return acquire_on(E.HRL_BAD_LOADING) end,
    "nil, err", "LOADING" },
  { "server", "NOAUTH (no password given)", function()
    return acquire_on(E.HRL_BAD_NOAUTH)
  end, "nil, err", "authentication failed" },
  { "server", "WRONGPASS", function() return acquire_on(E.HRL_BAD_WRONGPASS) end,
    "nil, err", "WRONGPASS" },
  { "server", "WRONGTYPE: the name holds a list (acquire)", wrongtype_acquire, "nil, err",
    "timeout" },
  { "server", "WRONGTYPE: the key became a list (release)", wrongtype_release, "nil, err",
    "not owned" },
  { "network", "connection refused", function() return acquire_on(E.HRL_BAD_REFUSED) end,
    "nil, err", "connection refused" },
  { "network", "connection reset", function() return acquire_on(E.HRL_BAD_RESET) end,
    "nil, err", "reset" },
  { "network", "unix socket that does not exist", function()
    return acquire_on(E.HRL_BAD_MISSING_SOCK)
  end, "nil, err", "no such file or directory" },
}

local function run(row)
  local category, input, fn, kind, frag = row[1], row[2], row[3], row[4], row[5]
  local res = { pcall(fn) }
  local got_kind, text
  if not res[1] then
    -- without the "file:line: " of where it was raised
    got_kind, text = "raises", (tostring(res[2]):gsub("^[^:]*:%d+: ", ""))
  elseif res[2] == nil and res[3] ~= nil then
    got_kind, text = "nil, err", tostring(res[3])
  elseif kind == "returns" then
    got_kind, text = "returns", tostring(res[2])
  else
    got_kind, text = "ok", tostring(res[2])
  end
  return {
    category = category, input = input,
    expected = kind .. (frag ~= "" and (": " .. frag) or ""),
    got = got_kind == "ok" and "accepted" or (got_kind .. ": " .. text),
    as_expected = got_kind == kind and text:find(frag, 1, true) ~= nil,
  }
end

local function json(v)
  if type(v) == "boolean" then
    return tostring(v)
  end
  return '"' .. tostring(v):gsub('[%c"\\]', function(ch)
    return ("\\u%04x"):format(ch:byte())
  end) .. '"'
end

local version = os.getenv("HRL_LUA_INTERP") or _VERSION
local rows, bad = {}, 0
for _, row in ipairs(ROWS) do
  local r = run(row)
  rows[#rows + 1] = r
  if not r.as_expected then
    bad = bad + 1
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
print(("bad inputs (%s): %d of %d as expected"):format(version, #rows - bad, #rows))
os.exit(bad == 0 and 0 or 1)
