--- The client configurations of the test application
-- (tests/nginx/hrltest.lua), by name: which masters, which options. The
-- masters come from the environment the suite passes (the `env` lines of
-- nginx.conf.in); each entry is a function returning the arguments of
-- hiredlock.new.
local function split(list)
  local out = {}
  for url in (list or ""):gmatch("[^,]+") do
    out[#out + 1] = url
  end
  return out
end

-- Per-master deadlines for tests that are not about deadlines (2 CPUs,
-- other suites running): a starved server can miss 50 ms.
local TOLERANT = { connect_timeout = 1, timeout = 0.5, retry_delay = 0.01,
  retry_jitter = 0.005 }

-- Waiters that never poll: a try after 20 s at the latest without a
-- hand-off.
local PATIENT = { connect_timeout = 1, timeout = 0.5, retry_delay = 20,
  retry_jitter = 0 }

-- A copy of options with more.
local function with(options, more)
  local out = {}
  for k, v in pairs(options) do
    out[k] = v
  end
  for k, v in pairs(more) do
    out[k] = v
  end
  return out
end

-- TOLERANT and a client certificate of the mTLS fixture (name.crt/.key).
local function client_cert(name)
  local dir = os.getenv("HRL_NGX_MTLS_DIR")
  return with(TOLERANT, { ssl_certfile = ("%s/%s.crt"):format(dir, name),
    ssl_keyfile = ("%s/%s.key"):format(dir, name) })
end

local CONFIGS = {
  -- three masters, for the counter, interop, keepalive and waits
  c3 = function() return split(os.getenv("HRL_NGX_URLS3")), TOLERANT end,
  -- the same, for waiters that never poll (a try after 20 s at the latest
  -- without a hand-off): a wait that ends sooner was woken
  patient3 = function()
    return split(os.getenv("HRL_NGX_URLS3")), PATIENT
  end,
  -- the first of them alone (a client of one master asks no INFO in its
  -- handshake, so clients made per request share the keepalive pools)
  patient1 = function()
    return { split(os.getenv("HRL_NGX_URLS3"))[1] }, PATIENT
  end,
  -- the first of them, 0.1 s per master and a try every 50 ms: a master
  -- paused for a few tenths of a second makes several rounds late
  quick1 = function()
    return { split(os.getenv("HRL_NGX_URLS3"))[1] }, { connect_timeout = 1,
      timeout = 0.1, retry_delay = 0.05, retry_jitter = 0.01 }
  end,
  -- TLS and a Sentinel-managed primary, patient likewise
  tls_patient = function()
    return { os.getenv("HRL_NGX_TLS") }, PATIENT
  end,
  sentinel_patient = function()
    return { os.getenv("HRL_NGX_SENTINEL") }, PATIENT
  end,
  -- the same masters, database 1 (the pools must keep them apart)
  c3db1 = function()
    local urls = split(os.getenv("HRL_NGX_URLS3"))
    for i, url in ipairs(urls) do
      urls[i] = url .. "/1"
    end
    return urls, TOLERANT
  end,
  -- the same masters, database 2: a pool of its own, cold at first
  ka3 = function()
    local urls = split(os.getenv("HRL_NGX_URLS3"))
    for i, url in ipairs(urls) do
      urls[i] = url .. "/2"
    end
    return urls, TOLERANT
  end,
  -- the first of the three, database 3 (a cold pool of its own: a SELECT
  -- in each new connection's handshake), 2 s to open a connection and the
  -- default 50 ms per master once it is open
  slowhs1 = function()
    return { split(os.getenv("HRL_NGX_URLS3"))[1] .. "/3" },
      { connect_timeout = 2, timeout = 0.05 }
  end,
  -- five masters for the fault tests: 0.2 s per master
  r5 = function()
    return split(os.getenv("HRL_NGX_URLS5")), { connect_timeout = 0.2,
      timeout = 0.2, retry_delay = 0.05, retry_jitter = 0.01 }
  end,
  -- five masters, 1 s per master: room to resume a paused one mid-round
  r5slow = function()
    return split(os.getenv("HRL_NGX_URLS5")), { connect_timeout = 1,
      timeout = 1, retry_delay = 0.05, retry_jitter = 0.01 }
  end,
  -- one master with a password, right and wrong
  pw = function() return split(os.getenv("HRL_NGX_URLS_PW")), TOLERANT end,
  badpw = function()
    return { (os.getenv("HRL_NGX_URLS_PW"):gsub("//:[^@]*@", "//:wrong@")) },
      TOLERANT
  end,
  -- the same masters over unix sockets
  unix3 = function() return split(os.getenv("HRL_NGX_UNIX3")), TOLERANT end,
  -- handshakes the masters refuse: a database out of range, a password
  -- for servers that have none
  db99 = function()
    local urls = split(os.getenv("HRL_NGX_URLS3"))
    for i, url in ipairs(urls) do
      urls[i] = url .. "/99"
    end
    return urls, TOLERANT
  end,
  nopw = function()
    local urls = split(os.getenv("HRL_NGX_URLS3"))
    for i, url in ipairs(urls) do
      urls[i] = url:gsub("^redis://", "redis://:nopass@")
    end
    return urls, TOLERANT
  end,
  -- TLS (tests/nginx/test_tls.py): masters named localhost, their CAs in
  -- lua_ssl_trusted_certificate, but tls_untrusted's
  tls = function() return { os.getenv("HRL_NGX_TLS") }, TOLERANT end,
  tls_ip = function() return { os.getenv("HRL_NGX_TLS_IP") }, TOLERANT end,
  tls_ip_nocheck = function()
    return { os.getenv("HRL_NGX_TLS_IP") .. "?ssl_check_hostname=false" }, TOLERANT
  end,
  tls_untrusted = function() return { os.getenv("HRL_NGX_TLS_UNTRUSTED") }, TOLERANT end,
  tls_none = function()
    return { os.getenv("HRL_NGX_TLS_UNTRUSTED") .. "?ssl_cert_reqs=none" }, TOLERANT
  end,
  tls_wrong_host = function() return { os.getenv("HRL_NGX_TLS_WRONG_HOST") }, TOLERANT end,
  tls_wrong_host_nocheck = function()
    return { os.getenv("HRL_NGX_TLS_WRONG_HOST") }, with(TOLERANT,
      { ssl_check_hostname = false })
  end,
  mtls = function() return { os.getenv("HRL_NGX_MTLS") }, client_cert("client") end,
  mtls_nocert = function() return { os.getenv("HRL_NGX_MTLS") }, TOLERANT end,
  mtls_other = function() return { os.getenv("HRL_NGX_MTLS") }, client_cert("other-client") end,
  -- a Redis Cluster as one master (tests/nginx/test_cluster.py)
  cluster = function() return { os.getenv("HRL_NGX_CLUSTER") }, TOLERANT end,
  -- a Sentinel-managed primary (tests/nginx/test_sentinel.py)
  sentinel = function() return { os.getenv("HRL_NGX_SENTINEL") }, TOLERANT end,
  -- an ACL user with only a lock's rights on locks:* (tests/nginx/test_acl.py)
  acl = function()
    return { os.getenv("HRL_NGX_ACL") }, with(TOLERANT, { key_prefix = "locks:" })
  end,
  acl_other = function()
    return { os.getenv("HRL_NGX_ACL") }, with(TOLERANT, { key_prefix = "other:" })
  end,
  -- failover safety (tests/nginx/test_failover.py): a master with a
  -- replica; one server under two names; Valkey with WAITAOF (its
  -- replica reports AOF fsyncs up to a second late: 3 s per master);
  -- three masters a test restarts, with and without restart_guard
  rep1 = function() return { os.getenv("HRL_NGX_REPLICATED") }, TOLERANT end,
  alias3 = function()
    local urls = split(os.getenv("HRL_NGX_URLS3"))
    return { urls[1], (urls[1]:gsub("127%.0%.0%.1", "localhost")), urls[2] },
      TOLERANT
  end,
  valkey = function()
    return { os.getenv("HRL_NGX_VALKEY") }, with(TOLERANT, { timeout = 3 })
  end,
  guard3 = function()
    return split(os.getenv("HRL_NGX_GUARD3")), with(TOLERANT, { restart_guard = 3 })
  end,
  plain_guard3 = function() return split(os.getenv("HRL_NGX_GUARD3")), TOLERANT end,
  mtls_missing = function()
    return { os.getenv("HRL_NGX_MTLS") }, with(TOLERANT,
      { ssl_certfile = "/nonexistent/client.crt" })
  end,
}

return CONFIGS
