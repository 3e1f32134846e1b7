--- The Lua bad-input table, part 1: names, TTLs, timeouts, options, URLs,
-- wrong types; the rows are described in helpers/bad_inputs.lua. Every one
-- fails (or is accepted) before any I/O but the few marked "ok".
local NAN, INF = 0 / 0, math.huge
local X = "x"

local function masters(n)
  local urls = {}
  for i = 1, n do
    urls[i] = "redis://127.0.0.1:" .. (1000 + i)
  end
  return urls
end

local function new(...)
  return require("hiredlock").new(...)
end

--- extend(ttl) on a held lock: it raises, and the lock stays held and can
-- be released (the error is raised again after).
local function extend_held(ctx, ttl)
  local lock = assert(ctx.client:acquire("bad:extend", { ttl = 10, timeout = 0 }))
  local ok, err = pcall(lock.extend, lock, ttl)
  assert(lock:held(), "the lock must stay held after the raise")
  assert(lock:release())
  if not ok then
    error(err, 0)
  end
end

local R = {
  { "name", 'name ""', function(c) return c.client:acquire("") end, "raises",
    "bad argument #1 to 'acquire' (name must be 1 to 512 bytes, got 0)", "none",
    exact = true, id = "empty_name" },
  { "name", "name of 513 bytes", function(c) return c.client:acquire(X:rep(513)) end,
    "raises", "bad argument #1 to 'acquire' (name must be 1 to 512 bytes, got 513)",
    "none", id = "long_name" },
  { "name", "name of 257 x 'é' (514 bytes)",
    function(c) return c.client:acquire(("é"):rep(257)) end, "raises", "got 514", "none" },
  { "name", 'name "a{doc:a}:queue", key_prefix "doc:" (a\'s queue key)', function()
    return new("redis://127.0.0.1:1", { key_prefix = "doc:" }):acquire("a{doc:a}:queue")
  end, "raises", "bad argument #1 to 'acquire' (name must not make another lock's queue "
    .. "key (key_prefix + name is a sibling key: docs/DESIGN.md, section 3))", "none",
    exact = true },
  { "name", 'name "b{doc:b}:fence", key_prefix "doc:" (b\'s counter)', function()
    return new("redis://127.0.0.1:1", { key_prefix = "doc:" }):acquire("b{doc:b}:fence")
  end, "raises", "another lock's fence key", "none" },
  { "name", "name of 512 bytes is taken whole", function(c)
    local lock = assert(c.client:acquire(("n"):rep(512), { timeout = 0 }))
    return lock.name == ("n"):rep(512) and lock:release()
  end, "returns", "true", "ok" },
  { "name", "name print (a function) to with",
    function(c) return c.client:with(print, nil, print) end, "raises",
    "bad argument #1 to 'acquire' (name must be a string, got function)", "none" },
  { "ttl", "ttl = 0", function(c) return c.client:acquire(X, { ttl = 0 }) end, "raises",
    "(ttl must be between 0.005 and 2147483.647 seconds, got 0)", "none" },
  { "ttl", "ttl = 0.0004 (sub-millisecond)",
    function(c) return c.client:acquire(X, { ttl = 0.0004 }) end, "raises",
    "got 0.0004)", "none" },
  { "ttl", "ttl = 2^64", function(c) return c.client:acquire(X, { ttl = 2 ^ 64 }) end,
    "raises", "ttl must be", "none" },
  { "ttl", 'ttl = "10"', function(c) return c.client:acquire("bad", { ttl = "10" }) end,
    "raises", "bad argument #2 to 'acquire' (ttl must be a number of seconds, got string)",
    "none", id = "string_ttl" },
  { "ttl", "ttl = true", function(c) return c.client:acquire(X, { ttl = true }) end,
    "raises", "ttl", "none" },
  { "timeout", "timeout = true", function(c) return c.client:acquire(X, { timeout = true }) end,
    "raises", "(timeout must be a number of seconds, got boolean)", "none" },
  { "timeout", 'timeout = "1"', function(c) return c.client:acquire(X, { timeout = "1" }) end,
    "raises", "timeout", "none" },
  { "timeout", "timeout = 0 is one attempt", function(c)
    local lock, err = c.client:acquire("x", { timeout = 0 })
    return err == nil and lock:release()
  end, "returns", "true", "ok" },
  { "timeout", "option 'tll' (typo)", function(c) return c.client:acquire(X, { tll = 1 }) end,
    "raises", "unknown option 'tll'", "none" },
  { "timeout", "option 'tll' = 10 (typo)",
    function(c) return c.client:acquire("bad", { tll = 10 }) end, "raises",
    "bad argument #2 to 'acquire' (unknown option 'tll' (known: ttl, auto_renew, max_hold, "
      .. "fenced, owner, sync_replicas, sync_aof, timeout, mode, permits))", "none",
    id = "unknown_option" },
  { "timeout", "option [1] (a number key)", function(c) return c.client:acquire(X, { 5 }) end,
    "raises", "(unknown option: a number key (known: ttl, auto_renew, max_hold, fenced, "
      .. "owner, sync_replicas, sync_aof, timeout, mode, permits))", "none" },
  { "type", "option sync_replicas = 1.5",
    function(c) return c.client:acquire(X, { sync_replicas = 1.5 }) end, "raises",
    "bad argument #2 to 'acquire' (sync_replicas must be a whole number from 0 to 100, got 1.5)",
    "none" },
  { "type", "option sync_replicas = '1'",
    function(c) return c.client:acquire(X, { sync_replicas = "1" }) end, "raises",
    "bad argument #2 to 'acquire' (sync_replicas must be a number, got string)", "none" },
  { "config", "new: restart_guard = -1",
    function(c) return c.new(c.ok, { restart_guard = -1 }) end, "raises",
    "restart_guard must be between 0.000 and", "none" },
  { "config", "the same master as 127.0.0.1 and localhost: acquire",
    function(c) return c.new({ c.ok, c.dup }):acquire("bad-dup", { timeout = 0 }) end,
    "nil, err", "are one server (run_id", "ok" },
  { "type", "option auto_renew = 1",
    function(c) return c.client:acquire(X, { auto_renew = 1 }) end, "raises",
    "bad argument #2 to 'acquire' (auto_renew must be a boolean, got number)", "none" },
  { "timeout", "option max_hold = -1",
    function(c) return c.client:acquire(X, { auto_renew = true, max_hold = -1 }) end,
    "raises", "bad argument #2 to 'acquire' (max_hold must be between 0.000 and", "none" },
  { "timeout", "option max_hold = 0.003 (below the smallest TTL)",
    function(c) return c.client:acquire(X, { auto_renew = true, max_hold = 0.003 }) end,
    "raises", "max_hold must be 0 (no cap) or at least the smallest TTL, 5 ms; got 3 ms",
    "none" },
  { "config", "new: max_hold = 'x'", function(c) return c.new(c.ok, { max_hold = "x" }) end,
    "raises", "max_hold must be a number of seconds, got string", "none" },
  { "timeout", "opts = 5", function(c) return c.client:acquire(X, 5) end, "raises",
    "bad argument #2 to 'acquire' (options must be a table, got number)", "none" },
  { "timeout", "new: timeout = 0", function(c) return c.new(c.ok, { timeout = 0 }) end,
    "raises", "timeout", "none" },
  { "timeout", "new: connect_timeout = -1",
    function(c) return c.new(c.ok, { connect_timeout = -1 }) end, "raises",
    "connect_timeout", "none" },
  { "timeout", "new: retry_delay = -1", function(c) return c.new(c.ok, { retry_delay = -1 }) end,
    "raises", "retry_delay", "none" },
  { "timeout", "new: timeout = 0.0001", function(c) return c.new(c.ok, { timeout = 0.0001 }) end,
    "raises", "got 0.0001", "none" },
  { "config", "option 'prefix' (unknown)", function(c) return new(c.ok, { prefix = "a:" }) end,
    "raises", "bad argument #2 to 'new' (unknown option 'prefix' (known: connect_timeout, "
      .. "timeout, retry_delay, retry_jitter, drift_factor, key_prefix, auto_renew, "
      .. "max_hold, fenced, owner, slow_wait, sync_replicas, sync_aof, restart_guard, "
      .. "ssl_ca_certs, ssl_ca_path, "
      .. "ssl_certfile, ssl_keyfile, ssl_cert_reqs, ssl_check_hostname))", "none" },
  { "config", "option 'tiemout' (typo)", function(c) return c.new(c.ok, { tiemout = 1 }) end,
    "raises", "unknown option 'tiemout'", "none" },
  { "config", 'opts = "fast"', function(c) return new(c.ok, "fast") end, "raises",
    "bad argument #2 to 'new' (options must be a table, got string)", "none" },
  { "config", "new({}) (N = 0)", function() return new({}) end, "raises",
    "bad argument #1 to 'new' (urls must list 1 to 63 masters, got 0)", "none" },
  { "config", "64 masters", function() return new(masters(64)) end, "raises",
    "urls must list 1 to 63 masters, got 64", "none" },
  { "config", "the same master twice", function(c) return new({ c.ok, c.ok }) end,
    "raises", "is listed twice; Redlock needs independent masters", "none" },
  { "config", "the same master as 127.0.0.1 and localhost",
    function(c) return new({ c.ok, c.dup }) end, "ok", "", "none" },
  { "url", 'url ""', function() return new("") end, "raises", "url", "none" },
  { "url", 'url "http://x"', function() return new("http://x") end, "raises",
    "bad argument #1 to 'new' (url \"http://x\": scheme must be redis://, rediss://, unix://, redis+cluster:// or redis+sentinel://)",
    "none" },
  { "url", 'url "redis://h:99999"', function() return new("redis://h:99999") end,
    "raises", "port", "none" },
  { "url", 'url "redis://:@h"', function() return new("redis://:@h") end, "raises",
    "empty password", "none" },
  { "url", 'url "redis://h/x"', function() return new("redis://h/x") end, "raises",
    "database", "none" },
  { "url", 'url "unix://"', function() return new("unix://") end, "raises", "absolute",
    "none" },
  { "url", 'url "redis://[::1"', function() return new("redis://[::1") end, "raises",
    "url", "none" },
  { "url", 'url "redis://a\\0b" (embedded NUL)', function() return new("redis://a\0b") end,
    "raises", "bad argument #1 to 'new' (urls[1] contains a NUL character)", "none" },
  { "url", "a NUL in urls[2]", function(c) return new({ c.ok, "redis://127.0.0.1:1\0/2" }) end,
    "raises", "bad argument #1 to 'new' (urls[2] contains a NUL character)", "none" },
  { "url", "a password is not in the message", function()
    local ok, err = pcall(new, "redis://:secret@127.0.0.1:99999")
    return not ok and err:find("secret", 1, true) == nil
  end, "returns", "true", "none" },
  { "url", "no part of a password with '@' or '/' is in the message", function()
    local shown = {}
    for _, url in ipairs({ "redis://:p4ss@w0rdQ@127.0.0.1:99999",
        "redis://app:Tr0ub4dor/3xyz@127.0.0.1", "redis+cluster://app:Tr0ub4dor/3xyz@a:1,b:2" }) do
      local ok, err = pcall(new, url)
      assert(not ok)
      for _, part in ipairs({ "p4ss", "w0rdQ", "Tr0ub4dor", "3xyz" }) do
        assert(not err:find(part, 1, true), err)
      end
      shown[#shown + 1] = err:match('url "([^"]*)"')
    end
    return table.concat(shown, " ")
  end, "returns", "redis://:***@127.0.0.1:99999 redis://app:***@127.0.0.1 "
    .. "redis+cluster://app:***@a:1,b:2", "none" },
  { "type", "urls = 5", function() return new(5) end, "raises", "urls", "none" },
  { "type", "urls = {5}", function() return new({ 5 }) end, "raises", "url", "none" },
  { "type", "urls = nil", function() return new() end, "raises", "got nil)", "none" },
  { "type", "urls[2] = 6379", function(c) return new({ c.ok, 6379 }) end, "raises",
    "bad argument #1 to 'new' (urls[2] must be a URL string, got number)", "none" },
  { "type", "with: fn = 5", function(c) return c.client:with("bad:w", nil, 5) end, "raises",
    "function expected", "none" },
  { "type", "with: fn = nil", function(c) return c.client:with("bad", nil, nil) end, "raises",
    "bad argument #3 to 'with' (function expected, got nil)", "none", id = "with_no_fn" },
}

-- A wrong type as a name, to acquire and to with (the same message).
for _, case in ipairs({
  { "nil", nil, "nil_name" }, { "number", 42, "number_name" }, { "number", 1.5 },
  { "table", {} }, { "boolean", true }, { "boolean", false }, { "function", print },
}) do
  local message = "bad argument #1 to 'acquire' (name must be a string, got " .. case[1] .. ")"
  R[#R + 1] = { "name", ("name %s"):format(tostring(case[2]):gsub(":.*", "")),
    function(c) return c.client:acquire(case[2]) end, "raises", message, "none", id = case[3] }
  R[#R + 1] = { "name", ("with: name %s"):format(tostring(case[2]):gsub(":.*", "")),
    function(c) return c.client:with(case[2], nil, print) end, "raises", message, "none" }
end

-- Out of range: ttl and timeout name the range in seconds.
for _, case in ipairs({
  { -1, "got -1", "negative_ttl" }, { NAN, "got nan" }, { INF, "got inf" },
  { -INF, "got -inf" }, { 2147484, "got 2.14748e+06" },
}) do
  local ttl = { "bad argument #2 to 'acquire' (ttl must ", case[2] }
  local timeout = { "bad argument #2 to 'acquire' (timeout must ", case[2] }
  if case[1] == -1 then
    ttl[#ttl + 1] = "(ttl must be between 0.005 and 2147483.647 seconds, got -1)"
    timeout[#timeout + 1] = "(timeout must be between 0.000 and 2147483.647 seconds, got -1)"
  elseif case[1] ~= case[1] then
    ttl[#ttl + 1] = "(ttl must be a number of seconds, got nan)"
  elseif case[1] == 2147484 then
    ttl[#ttl + 1] = "2147483.647"
  end
  R[#R + 1] = { "ttl", "ttl = " .. tostring(case[1]),
    function(c) return c.client:acquire("bad", { ttl = case[1] }) end, "raises", ttl, "none",
    id = case[3] }
  R[#R + 1] = { "timeout", "timeout = " .. tostring(case[1]),
    function(c) return c.client:acquire("bad", { timeout = case[1] }) end, "raises",
    timeout, "none", id = case[1] ~= case[1] and "nan_timeout" or nil }
end

-- Too short for a round to leave any validity (5 ms at the default
-- drift_factor): refused, naming the smallest TTL accepted.
R[#R + 1] = { "ttl", "ttl = 0.002 (no room for a round)",
  function(c) return c.client:acquire("bad", { ttl = 0.002 }) end, "raises",
  "bad argument #2 to 'acquire' (ttl must be between 0.005 and 2147483.647 "
  .. "seconds, got 0.002)", "none", id = "short_ttl" }

-- Every client option, checked by new.
for _, case in ipairs({
  { "connect_timeout = 0", { connect_timeout = 0 }, "connect_timeout must be between 0.001" },
  { "timeout = -0.05", { timeout = -0.05 }, "timeout must be between 0.001" },
  { "timeout = nan", { timeout = NAN }, "timeout must be a number of seconds, got nan" },
  { "retry_delay = -1", { retry_delay = -1 }, "retry_delay must be between 0.000" },
  { "retry_jitter = inf", { retry_jitter = INF }, "retry_jitter must be between" },
  { "drift_factor = 0.5", { drift_factor = 0.5 }, "drift_factor must be in [0, 0.5), got 0.5" },
  { "drift_factor = -0.1", { drift_factor = -0.1 },
    "drift_factor must be in [0, 0.5), got -0.1" },
  { "drift_factor = nan", { drift_factor = NAN }, "drift_factor must be in [0, 0.5), got" },
  { 'drift_factor = "0.1"', { drift_factor = "0.1" }, "drift_factor must be a number, got string" },
  { "key_prefix = 42", { key_prefix = 42 }, "key_prefix must be a string, got number" },
  { "key_prefix of 513 bytes", { key_prefix = ("p"):rep(513) },
    "key_prefix must be at most 512 bytes, got 513" },
}) do
  R[#R + 1] = { "config", "new: " .. case[1], function(c) return new(c.ok, case[2]) end,
    "raises", "bad argument #2 to 'new' (" .. case[3], "none" }
end
for _, v in ipairs({ 42, true }) do
  R[#R + 1] = { "type", "urls = " .. tostring(v), function() return new(v) end, "raises",
    "bad argument #1 to 'new' (urls must be a URL string or a list of them, got "
      .. type(v) .. ")", "none" }
end
for _, v in ipairs({ 42, "f", {}, true }) do
  R[#R + 1] = { "type", ("with: fn = %s"):format(type(v)),
    function(c) return c.client:with("with:bad", nil, v) end, "raises",
    "bad argument #3 to 'with' (function expected, got " .. type(v) .. ")", "none" }
end

-- extend's ttl on a held lock: raises, the lock stays held.
for _, case in ipairs({
  { -1, "bad argument #1 to 'extend' (ttl must be between 0.005 and 2147483.647 seconds, got -1)",
    "extend_ttl" },
  { NAN, "bad argument #1 to 'extend' (ttl must be a number of seconds, got nan)" },
  { INF, "(ttl must be between 0.005 and 2147483.647 seconds, got inf)" },
  { 0, "(ttl must be between 0.005 and 2147483.647 seconds, got 0)" },
  { "5", "(ttl must be a number of seconds, got string)" },
}) do
  R[#R + 1] = { "ttl", ("lock:extend(%s)"):format(tostring(case[1])),
    function(c) return extend_held(c, case[1]) end, "raises", case[2], "ok", id = case[3] }
end

return R
