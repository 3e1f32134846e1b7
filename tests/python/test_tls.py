"""TLS (rediss://) against real TLS servers from the launcher (--tls,
--mtls, --tls-wrong-host): what works, every way a certificate can be
wrong (a ConnectionError naming the master and why, and no key left), and
the options' spellings: keyword arguments as redis-py names them, paths as
os.PathLike, ssl.VerifyMode, and the URL query."""

from __future__ import annotations

import re
import ssl
from pathlib import Path

import pytest
from pytest_redis import TOLERANT
from redis_fixture import Servers

import hiredlock


def ca(servers) -> Path:
    return Path(servers.tls_dir) / "ca.crt"


def tls_client(servers, url=None, **options):
    return hiredlock.Client(url or servers.tls_urls, **{**TOLERANT, **options})


def refused(servers, client, name, why):
    """One attempt fails: a ConnectionError naming the master and why; no
    key is left."""
    lk = client.lock(name)
    with pytest.raises(hiredlock.ConnectionError) as info:
        lk.acquire(blocking=False)
    message = str(info.value)
    assert message.startswith("connection failed: 0 of 1 masters answered")
    assert f"{client.masters[0]}: TLS: " in message
    assert re.search(why, message), message
    assert servers.count(name) == 0
    assert not lk.locked()
    return message


def test_server_certificate_verified(tls1, name):
    c = tls_client(tls1, ssl_ca_certs=ca(tls1))  # an os.PathLike
    lk = c.lock(name)
    for _ in range(10):  # one kept connection, cycle after cycle
        with lk:
            assert tls1.get(1, name) == lk.token.encode()
        assert tls1.count(name) == 0
    # localhost, a name: sent as SNI and matched against the DNS SAN.
    url = f"rediss://localhost:{tls1.tls_ports[0]}?ssl_ca_certs={ca(tls1)}"
    with tls_client(tls1, url).lock(name, timeout=0):
        assert tls1.count(name) == 1


def test_verification_is_the_default(tls1, name):
    # The system's CAs do not know the fixture's.
    refused(tls1, tls_client(tls1), name, "certificate verify failed: self-signed")


def test_wrong_ca_is_refused(tls1, name):
    c = tls_client(tls1, ssl_ca_certs=str(Path(tls1.tls_dir) / "other-ca.crt"))
    refused(tls1, c, name, "certificate verify failed")


def test_missing_ca_file_is_named(tls1, name):
    c = tls_client(tls1, ssl_ca_certs="/nonexistent/ca.pem")
    refused(tls1, c, name, "ssl_ca_certs /nonexistent/ca.pem: No such file")


@pytest.mark.parametrize("reqs", ["none", ssl.CERT_NONE])
def test_explicit_opt_out(tls_wrong_host, name, reqs):
    # Neither the chain (no CA given) nor the name is checked.
    with tls_client(tls_wrong_host, ssl_cert_reqs=reqs).lock(name, timeout=0):
        assert tls_wrong_host.count(name) == 1


def test_wrong_host_name_is_refused(tls_wrong_host, name):
    c = tls_client(tls_wrong_host, ssl_ca_certs=ca(tls_wrong_host))
    refused(tls_wrong_host, c, name, "IP address mismatch")
    url = f"rediss://localhost:{tls_wrong_host.tls_ports[0]}"
    c = tls_client(tls_wrong_host, url, ssl_ca_certs=ca(tls_wrong_host))
    refused(tls_wrong_host, c, name, "hostname mismatch")


@pytest.mark.parametrize("where", ["option", "url"])
def test_host_name_check_can_be_turned_off_alone(tls_wrong_host, name, where):
    if where == "option":
        c = tls_client(
            tls_wrong_host, ssl_ca_certs=ca(tls_wrong_host), ssl_check_hostname=False
        )
    else:
        url = f"{tls_wrong_host.tls_urls[0]}?ssl_check_hostname=false"
        c = tls_client(tls_wrong_host, url, ssl_ca_certs=ca(tls_wrong_host))
    with c.lock(name, timeout=0):
        assert tls_wrong_host.count(name) == 1
    # The chain is still checked.
    url = f"{tls_wrong_host.tls_urls[0]}?ssl_check_hostname=false"
    other = Path(tls_wrong_host.tls_dir) / "other-ca.crt"
    refused(
        tls_wrong_host,
        tls_client(tls_wrong_host, url, ssl_ca_certs=other),
        name,
        "certificate verify failed",
    )


@pytest.fixture(scope="module")
def wrong_host2():
    """Two TLS masters whose certificates name wrong.invalid only."""
    s = Servers(2, "--tls", "--tls-wrong-host")
    yield s
    s.stop()


def per_master_urls(servers, lax_first):
    """One master opting out of the host name check in its URL, the other
    not; the lax one first or second. Returns (urls, lax index)."""
    lax = 0 if lax_first else 1
    urls = list(servers.tls_urls)
    urls[lax] += "?ssl_check_hostname=false"
    return urls, lax


@pytest.mark.parametrize("lax_first", [True, False], ids=["lax-first", "lax-last"])
def test_tls_settings_are_per_master(wrong_host2, name, lax_first):
    # Two masters of one CA: one master's opt-out must not switch off the
    # other's host name check (nor its check switch on the first's),
    # whichever connects first.
    urls, lax = per_master_urls(wrong_host2, lax_first)
    c = hiredlock.Client(urls, ssl_ca_certs=ca(wrong_host2), **TOLERANT)
    lk = c.lock(name)
    with pytest.raises(hiredlock.ConnectionError) as info:
        lk.acquire(blocking=False)
    message = str(info.value)
    strict = c.masters[1 - lax]
    assert message.startswith("connection failed: 1 of 2 masters answered"), message
    want = f"{strict}: TLS: certificate verify failed: IP address mismatch"
    assert want in message, message
    assert f"{c.masters[lax]}: " not in message
    assert wrong_host2.count(name) == 0


def test_client_certificate(mtls1, name):
    d = Path(mtls1.tls_dir)
    c = tls_client(
        mtls1,
        ssl_ca_certs=d / "ca.crt",
        ssl_certfile=d / "client.crt",
        ssl_keyfile=d / "client.key",
        ssl_cert_reqs=ssl.CERT_REQUIRED,
    )
    with c.lock(name, timeout=0):
        assert mtls1.count(name) == 1
    url = (
        f"{mtls1.tls_urls[0]}?ssl_ca_certs={d}/ca.crt"
        f"&ssl_certfile={d}/client.crt&ssl_keyfile={d}/client.key"
    )
    with hiredlock.Client(url, **TOLERANT).lock(name, timeout=0):
        assert mtls1.count(name) == 1


def test_no_or_bad_client_certificate_is_refused(mtls1, name):
    d = Path(mtls1.tls_dir)
    refused(mtls1, tls_client(mtls1, ssl_ca_certs=d / "ca.crt"), name, "TLS: ")
    bad = tls_client(
        mtls1,
        ssl_ca_certs=d / "ca.crt",
        ssl_certfile=d / "other-client.crt",
        ssl_keyfile=d / "other-client.key",
    )
    refused(mtls1, bad, name, "TLS: ")
    mismatched = tls_client(
        mtls1,
        ssl_ca_certs=d / "ca.crt",
        ssl_certfile=d / "client.crt",
        ssl_keyfile=d / "other-client.key",
    )
    refused(mtls1, mismatched, name, "ssl_keyfile")


def test_mixed_tls_and_plain_masters(servers3, tls1, name):
    urls = [tls1.tls_urls[0], servers3.urls[0], servers3.urls[1]]
    c = hiredlock.Client(urls, ssl_ca_certs=ca(tls1), **TOLERANT)
    with c.lock(name, timeout=1):
        assert tls1.count(name) == 1
        assert servers3.count(name) == 2
    assert tls1.count(name) + servers3.count(name) == 0


def test_options_are_in_the_table():
    assert hiredlock.OPTIONS["ssl_cert_reqs"] == "required"
    assert hiredlock.OPTIONS["ssl_check_hostname"] is True
    for path in ("ssl_ca_certs", "ssl_ca_path", "ssl_certfile", "ssl_keyfile"):
        assert hiredlock.OPTIONS[path] is None
