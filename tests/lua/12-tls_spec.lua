-- TLS (rediss://) from plain Lua against real TLS servers from the launcher
-- (--tls, --mtls, --tls-wrong-host): what works, every way a certificate can
-- be wrong (nil and a message naming the master and why, no key left), the
-- options as redis-py names them and in the URL query, and what the
-- protocol tells a driver (master_info). The luasocket test driver stays
-- plain and says so.
local fixture = require "helpers.fixture"
local hiredlock = require "hiredlock"
local socket_driver = require "helpers.socket_driver"
local handoff = require "helpers.handoff"

local TOLERANT = { connect_timeout = 1, timeout = 0.5, retry_delay = 0.01, retry_jitter = 0.005 }

local function options(extra)
  local o = {}
  for k, v in pairs(TOLERANT) do
    o[k] = v
  end
  for k, v in pairs(extra or {}) do
    o[k] = v
  end
  return o
end

--- One attempt fails: nil, a message naming the master and why, no key.
local function refused(fx, client, name, why)
  local lock, err = client:acquire(name, { timeout = 0 })
  assert.is_nil(lock)
  assert.matches("^connection failed: 0 of 1 masters answered", err)
  assert.truthy(err:find(client._handle:master_label(1) .. ": TLS: ", 1, true), err)
  assert.truthy(err:find(why, 1, true), err)
  assert.equals(0, fx:count_key(name))
end

describe("TLS, server certificate only", function()
  local fx
  setup(function()
    fx = fixture.start(2, "--tls")
  end)
  teardown(function()
    fx:stop()
  end)

  it("acquires and releases over kept TLS connections", function()
    local c = hiredlock.new(fx.tls_urls, options({ ssl_ca_certs = fx:tls_file("ca.crt") }))
    for _ = 1, 10 do
      local lock = assert(c:acquire("tls:works", { timeout = 0 }))
      assert.equals(lock.token, fx:cmd(1, "GET", "tls:works"))
      assert.equals(2, fx:count_key("tls:works"))
      assert.is_true(lock:release())
      assert.equals(0, fx:count_key("tls:works"))
    end
    -- localhost: a name, sent as SNI and matched against the DNS SAN.
    local url = ("rediss://localhost:%d?ssl_ca_certs=%s"):format(fx.tls_ports[1],
      fx:tls_file("ca.crt"))
    local lock = assert(hiredlock.new(url, options()):acquire("tls:url", { timeout = 0 }))
    assert.is_true(lock:release())
  end)

  it("hears a release's hand-off over TLS", function()
    -- The subscriber connection shakes hands as the command connections do
    -- (before: none over TLS, every hand-off waited for retry_delay).
    local ca = fx:tls_file("ca.crt")
    local opts = {}
    for k, v in pairs(handoff.PATIENT) do
      opts[k] = v
    end
    opts.ssl_ca_certs = ca
    local took = assert(handoff.after_release(fx.tls_urls[1], "tls:handoff", opts, ca))
    assert.is_true(took < 3, "took " .. took) -- woken: not the 20 s cap
  end)

  it("verifies by default, against the system's CAs", function()
    refused(fx, hiredlock.new(fx.tls_urls[1], options()), "tls:default",
      "certificate verify failed: self-signed")
  end)

  it("refuses the wrong CA, and names a CA file that is not there", function()
    refused(fx, hiredlock.new(fx.tls_urls[1], options({ ssl_ca_certs = fx:tls_file("other-ca.crt") })),
      "tls:other", "certificate verify failed")
    refused(fx, hiredlock.new(fx.tls_urls[1], options({ ssl_ca_certs = "/nonexistent/ca.pem" })),
      "tls:nofile", "ssl_ca_certs /nonexistent/ca.pem: No such file")
  end)

  it("tells drivers the settings, the URL's over the client's", function()
    local url = fx.tls_urls[1] .. "?ssl_cert_reqs=none&ssl_check_hostname=no"
    local c = hiredlock.new({ url, fx.tls_urls[2], fx.urls[1] }, options({
      ssl_ca_certs = "/client/ca.pem", ssl_certfile = "/c.pem" }))
    local a, b, plain = c._handle:master_info(1), c._handle:master_info(2), c._handle:master_info(3)
    assert.is_true(a.tls)
    assert.equals("none", a.ssl_cert_reqs)
    assert.is_false(a.ssl_check_hostname)
    assert.equals("/client/ca.pem", a.ssl_ca_certs)
    assert.equals("/c.pem", a.ssl_certfile)
    assert.is_nil(a.ssl_keyfile)
    assert.equals("required", b.ssl_cert_reqs)
    assert.is_true(b.ssl_check_hostname)
    assert.is_nil(plain.tls)
    assert.is_nil(plain.ssl_ca_certs)
  end)

  it("is not spoken by the luasocket test driver, which says so", function()
    local c = hiredlock.new(fx.tls_urls[1], options({ ssl_ca_certs = fx:tls_file("ca.crt") }))
    c._driver = socket_driver
    local lock, err = c:acquire("tls:luasocket", { timeout = 0 })
    assert.is_nil(lock)
    assert.truthy(err:find("TLS (rediss://) is not supported by the luasocket test driver",
      1, true), err)
  end)
end)

describe("TLS, a certificate for another host", function()
  local fx
  setup(function()
    fx = fixture.start(2, "--tls --tls-wrong-host")
  end)
  teardown(function()
    fx:stop()
  end)

  it("is refused by name, and taken with the name check off", function()
    local ca = fx:tls_file("ca.crt")
    refused(fx, hiredlock.new(fx.tls_urls[1], options({ ssl_ca_certs = ca })), "tls:host",
      "IP address mismatch")
    local byname = ("rediss://localhost:%d"):format(fx.tls_ports[1])
    refused(fx, hiredlock.new(byname, options({ ssl_ca_certs = ca })), "tls:host",
      "hostname mismatch")
    local c = hiredlock.new(fx.tls_urls[1], options({ ssl_ca_certs = ca,
      ssl_check_hostname = false }))
    assert.is_true(assert(c:acquire("tls:nocheck", { timeout = 0 })):release())
    c = hiredlock.new(fx.tls_urls[1] .. "?ssl_check_hostname=false", options({ ssl_ca_certs = ca }))
    assert.is_true(assert(c:acquire("tls:nocheck", { timeout = 0 })):release())
  end)

  it("keeps each master's settings its own, whichever connects first", function()
    -- One master opts out of the host name check in its URL, the other
    -- not: the other is still refused, and the first still taken.
    local ca = fx:tls_file("ca.crt")
    for lax = 1, 2 do
      local urls = { fx.tls_urls[1], fx.tls_urls[2] }
      urls[lax] = urls[lax] .. "?ssl_check_hostname=false"
      local c = hiredlock.new(urls, options({ ssl_ca_certs = ca }))
      local lock, err = c:acquire("tls:per-master", { timeout = 0 })
      assert.is_nil(lock)
      assert.matches("^connection failed: 1 of 2 masters answered", err)
      local strict = c._handle:master_label(3 - lax)
      assert.truthy(err:find(strict .. ": TLS: certificate verify failed: IP address mismatch",
        1, true), err)
      assert.falsy(err:find(c._handle:master_label(lax) .. ": ", 1, true), err)
      assert.equals(0, fx:count_key("tls:per-master"))
    end
  end)

  it("is taken with every check off (ssl_cert_reqs = none)", function()
    local c = hiredlock.new(fx.tls_urls[1], options({ ssl_cert_reqs = "none" }))
    assert.is_true(assert(c:acquire("tls:none", { timeout = 0 })):release())
  end)
end)

describe("mutual TLS", function()
  local fx
  setup(function()
    fx = fixture.start(1, "--mtls")
  end)
  teardown(function()
    fx:stop()
  end)

  it("works with the client certificate, by option and by URL", function()
    local c = hiredlock.new(fx.tls_urls, options({ ssl_ca_certs = fx:tls_file("ca.crt"),
      ssl_certfile = fx:tls_file("client.crt"), ssl_keyfile = fx:tls_file("client.key") }))
    assert.is_true(assert(c:acquire("mtls:ok", { timeout = 0 })):release())
    local url = ("%s?ssl_ca_certs=%s&ssl_certfile=%s&ssl_keyfile=%s"):format(fx.tls_urls[1],
      fx:tls_file("ca.crt"), fx:tls_file("client.crt"), fx:tls_file("client.key"))
    assert.is_true(assert(hiredlock.new(url, options()):acquire("mtls:url", { timeout = 0 })):release())
  end)

  it("refuses no certificate, a foreign one and a key that is not its own", function()
    local ca = fx:tls_file("ca.crt")
    refused(fx, hiredlock.new(fx.tls_urls, options({ ssl_ca_certs = ca })), "mtls:none", "TLS: ")
    refused(fx, hiredlock.new(fx.tls_urls, options({ ssl_ca_certs = ca,
      ssl_certfile = fx:tls_file("other-client.crt"),
      ssl_keyfile = fx:tls_file("other-client.key") })), "mtls:other", "TLS: ")
    refused(fx, hiredlock.new(fx.tls_urls, options({ ssl_ca_certs = ca,
      ssl_certfile = fx:tls_file("client.crt"),
      ssl_keyfile = fx:tls_file("other-client.key") })), "mtls:key", "ssl_keyfile")
  end)
end)
