--- The Lua bad-input table, part 3: what real deployments add, the TLS
-- options and rediss:// URLs, Redis Cluster and Sentinel URLs (rows as
-- described in helpers/bad_inputs.lua).
-- Every row fails before any I/O but the ones that load a CA file that is
-- not there or speak TLS to the healthy plain master.
local TLS_URL = "rediss://127.0.0.1:1"

local function new(...)
  return require("hiredlock").new(...)
end

--- One attempt on url: true when taken (and released), else nil, err.
local function acquire(url, opts)
  local o = { timeout = 0.3, connect_timeout = 0.3 }
  for k, v in pairs(opts or {}) do
    o[k] = v
  end
  local lock, err = new(url, o):acquire("bad:tls", { timeout = 0 })
  if not lock then
    return nil, err
  end
  return lock:release()
end

local R = {}
for _, case in ipairs({
  { "rediss://h?ssl_cert_reqs=maybe",
    "ssl_cert_reqs must be one of none, optional, required, got 'maybe'" },
  { "rediss://h?ssl_verify=1", "unknown TLS option 'ssl_verify' (known: ssl_ca_certs, "
    .. "ssl_ca_path, ssl_certfile, ssl_keyfile, ssl_cert_reqs, ssl_check_hostname)" },
  { "redis://h?ssl_cert_reqs=none", "TLS options (ssl_*) need a rediss:// url" },
  { "rediss://h?ssl_check_hostname=perhaps",
    "ssl_check_hostname must be true or false, got 'perhaps'" },
  { "rediss://h?ssl_ca_certs=a&ssl_ca_certs=b", "ssl_ca_certs is given twice" },
  { "rediss://h?ssl_ca_certs=", "the query must be name=value pairs joined by &" },
  { "rediss://h?ssl_ca_certs=a&", "empty query after '&'" },
  { "rediss://h?ssl_certfile=a%00b", "bad %-escape in the query" },
}) do
  R[#R + 1] = { "tls", ("url %q"):format(case[1]), function() return new(case[1]) end,
    "raises", "bad argument #1 to 'new' (url \"" .. case[1] .. "\": " .. case[2] .. ")", "none" }
end
for _, case in ipairs({
  { "ssl_cert_reqs = \"maybe\"", { ssl_cert_reqs = "maybe" },
    "(ssl_cert_reqs must be one of none, optional, required, got 'maybe')" },
  { "ssl_cert_reqs = 2", { ssl_cert_reqs = 2 }, "(ssl_cert_reqs must be a string, got number)" },
  { "ssl_ca_certs = 5", { ssl_ca_certs = 5 }, "(ssl_ca_certs must be a string, got number)" },
  { "ssl_ca_certs = \"\"", { ssl_ca_certs = "" }, "(ssl_ca_certs must be 1 to 4096 bytes, got 0)" },
  { "ssl_ca_certs of 4097 bytes", { ssl_ca_certs = ("a"):rep(4097) }, "got 4097)" },
  { "ssl_certfile with a NUL", { ssl_certfile = "a\0b" },
    "(ssl_certfile must not contain a NUL byte)" },
  { "ssl_check_hostname = \"no\"", { ssl_check_hostname = "no" },
    "(ssl_check_hostname must be a boolean, got string)" },
  { "ssl_keyfile without ssl_certfile", { ssl_keyfile = "/k.pem" },
    "ssl_keyfile is given without ssl_certfile" },
  { "ssl_verify = true (not an option)", { ssl_verify = true }, "unknown option 'ssl_verify'" },
}) do
  R[#R + 1] = { "tls", case[1], function() return new(TLS_URL, case[2]) end, "raises",
    case[3], "none" }
end
R[#R + 1] = { "tls", "ssl_cert_reqs = \"none\" is taken",
  function() return new(TLS_URL, { ssl_cert_reqs = "none" }) end, "ok", "", "none" }
R[#R + 1] = { "tls", "url rediss://:pw@h:6380/2?ssl_cert_reqs=none is taken",
  function() return new("rediss://:pw@h:6380/2?ssl_cert_reqs=none") end, "ok", "", "none" }
R[#R + 1] = { "tls", "ssl_ca_certs that is not there",
  function() return acquire(TLS_URL, { ssl_ca_certs = "/nonexistent/ca.pem" }) end,
  "nil, err", "TLS: ssl_ca_certs /nonexistent/ca.pem: No such file or directory", "none" }
R[#R + 1] = { "tls", "rediss:// to a plain master", function(c)
  return acquire("rediss://" .. c.ok:gsub("^redis://", "") .. "?ssl_cert_reqs=none")
end, "nil, err", "(TLS handshake)", "ok" }
local seeds = {}
for p = 1, 17 do
  seeds[p] = "h:" .. p
end
for _, case in ipairs({
  { "redis+cluster://h:1,h:1", "an address is listed twice" },
  { "redis+cluster://h:1/2", "a cluster has no databases (only /0)" },
  { "rediss+cluster://h:1", "TLS to a Redis Cluster or through Sentinel (rediss+cluster://, rediss+sentinel://) is not supported" },
  { "redis+cluster://", "missing host" },
  { "redis+cluster://h:1,", "missing host" },
  { "redis+cluster://" .. table.concat(seeds, ","), "at most 16 addresses, got 17" },
}) do
  R[#R + 1] = { "cluster", ("url %q"):format(case[1]:sub(1, 60)),
    function() return new(case[1]) end, "raises", case[2], "none" }
end
R[#R + 1] = { "cluster", "a cluster and a master naming one server",
  function() return new({ "redis+cluster://h:1,h:2", "redis://h:2" }) end, "raises",
  "is listed twice; Redlock needs independent masters", "none" }
R[#R + 1] = { "cluster", "url redis+cluster://:pw@h:1,[::1]:2,h is taken",
  function() return new("redis+cluster://:pw@h:1,[::1]:2,h") end, "ok", "", "none" }
for _, case in ipairs({
  { "redis+sentinel://h:1", "the service name must follow the sentinels" },
  { "redis+sentinel://h:1/", "the service name must follow the sentinels" },
  { "redis+sentinel://h:1/a$b", "bad character in the service name" },
  { "redis+sentinel://h:1/svc/x", "database must be a number after the service" },
  { "rediss+sentinel://h:1/svc", "is not supported" },
  { "redis+sentinel://h:1/" .. ("a"):rep(65), "service name longer than 64 bytes" },
}) do
  R[#R + 1] = { "sentinel", ("url %q"):format(case[1]:sub(1, 60)),
    function() return new(case[1]) end, "raises", case[2], "none" }
end
R[#R + 1] = { "sentinel", "two urls asking one sentinel about one service",
  function() return new({ "redis+sentinel://a:1,b:2/svc", "redis+sentinel://b:2/svc" }) end,
  "raises", "is listed twice", "none" }
R[#R + 1] = { "sentinel", "url redis+sentinel://:pw@h,h:26380/svc/2 is taken",
  function() return new("redis+sentinel://:pw@h,h:26380/svc/2") end, "ok", "", "none" }
return R
