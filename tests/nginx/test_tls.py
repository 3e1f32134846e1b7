"""TLS (rediss://) inside nginx: the cosocket driver's own handshake
(sock:sslhandshake, verification on) against real TLS masters, which are
named localhost (resolved by the suite's one-name DNS server) and trusted
through lua_ssl_trusted_certificate; see conftest.py. Each refusal is a 409
naming the master and why, with no key left on it."""

from __future__ import annotations

import uuid

import pytest


def unique(prefix: str) -> str:
    return f"{prefix}:{uuid.uuid4().hex[:12]}"


def lock(ngx, config: str, name: str, **args):
    return ngx.get("/lock", c=config, name=name, **args)


def refused(ngx, config: str, servers, why: str) -> str:
    name = unique(config)
    r = lock(ngx, config, name)
    assert r.status == 409, r.body
    assert r.body.startswith("connection failed: 0 of 1 masters answered"), r.body
    assert f":{servers.tls_ports[0]}: TLS: " in r.body, r.body
    assert why in r.body, r.body
    assert servers.count(name) == 0
    return r.body


def test_tls_master_by_name(ngx, tls1, resolver):
    name = unique("tls")
    r = lock(ngx, "tls", name, keep="1")
    assert r.status == 200, r.body
    assert tls1.get(1, name) == r.headers["X-Token"].encode()
    tls1.redis(1).delete(name)
    for _ in range(20):  # kept TLS connections, from the keepalive pool
        assert lock(ngx, "tls", unique("tls")).status == 200
    assert tls1.connections_received(1) < 20
    assert resolver.queries > 0  # localhost came from nginx's resolver


def test_ip_address_needs_the_name_check_off(ngx, tls1):
    name = unique("tls-ip")
    r = lock(ngx, "tls_ip", name)
    assert r.status == 409
    assert "TLS: nginx cannot check an IP address" in r.body
    assert "ssl_check_hostname=false" in r.body
    assert tls1.count(name) == 0
    assert lock(ngx, "tls_ip_nocheck", name).status == 200


def test_untrusted_ca_is_refused(ngx, tls_untrusted):
    refused(ngx, "tls_untrusted", tls_untrusted, "certificate")


def test_explicit_opt_out(ngx, tls_untrusted):
    name = unique("tls-none")
    r = lock(ngx, "tls_none", name, keep="1")
    assert r.status == 200, r.body
    assert tls_untrusted.get(1, name) == r.headers["X-Token"].encode()
    tls_untrusted.redis(1).delete(name)


def test_wrong_host_name_is_refused(ngx, tls_wrong_host):
    refused(ngx, "tls_wrong_host", tls_wrong_host, "certificate host mismatch")
    assert lock(ngx, "tls_wrong_host_nocheck", unique("tls-nc")).status == 200


def test_client_certificate(ngx, mtls1):
    name = unique("mtls")
    r = lock(ngx, "mtls", name, keep="1")
    assert r.status == 200, r.body
    assert mtls1.get(1, name) == r.headers["X-Token"].encode()
    mtls1.redis(1).delete(name)


@pytest.mark.parametrize(
    "config,why",
    [
        ("mtls_nocert", "TLS: "),
        ("mtls_other", "TLS: "),
        ("mtls_missing", "ssl_certfile /nonexistent/client.crt: No such file"),
    ],
)
def test_no_or_bad_client_certificate_is_refused(ngx, mtls1, config, why):
    refused(ngx, config, mtls1, why)
