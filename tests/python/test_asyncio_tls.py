"""hiredlock.asyncio over TLS (rediss://): the same ssl_* settings as the
sync client, the certificate verified by default, and a refusal worded as
the C driver words it, leaving no key."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

import pytest
from pytest_redis import TOLERANT
from redis_fixture import Servers

import hiredlock
import hiredlock.asyncio as hla


def ca(servers) -> Path:
    return Path(servers.tls_dir) / "ca.crt"


async def refused(servers, client, name) -> str:
    lk = client.lock(name)
    with pytest.raises(hiredlock.ConnectionError) as info:
        await lk.acquire(blocking=False)
    assert servers.count(name) == 0 and not lk.locked()
    return str(info.value)


@pytest.mark.asyncio
async def test_verified_cycles_exclude_the_sync_client(tls1, name):
    client = hla.Client(tls1.tls_urls, ssl_ca_certs=ca(tls1), **TOLERANT)
    sync = hiredlock.Client(tls1.tls_urls, ssl_ca_certs=ca(tls1), **TOLERANT)
    lk = client.lock(name)
    for _ in range(5):  # one kept TLS connection, cycle after cycle
        async with lk:
            assert tls1.get(1, name) == lk.token.encode()
            assert not sync.lock(name).acquire(blocking=False)
        assert tls1.count(name) == 0
    # A host name: sent as SNI and matched against the certificate.
    url = f"rediss://localhost:{tls1.tls_ports[0]}?ssl_ca_certs={ca(tls1)}"
    other = hla.Client([url], **TOLERANT)
    async with other.lock(name, timeout=0):
        assert tls1.count(name) == 1
    await client.close()
    await other.close()


@pytest.mark.asyncio
async def test_refusals_say_what_the_c_driver_says(tls1, name):
    # Verification is the default, and the system's CAs do not know the
    # fixture's.
    default = hla.Client(tls1.tls_urls, **TOLERANT)
    sync = hiredlock.Client(tls1.tls_urls, **TOLERANT)
    message = await refused(tls1, default, name)
    assert "TLS: certificate verify failed: self-signed" in message, message
    with pytest.raises(hiredlock.ConnectionError) as info:
        sync.lock(name).acquire(blocking=False)
    assert str(info.value) == message  # the same words as the C driver
    missing = hla.Client(tls1.tls_urls, ssl_ca_certs="/nonexistent/ca.pem")
    message = await refused(tls1, missing, name)
    assert "TLS: ssl_ca_certs /nonexistent/ca.pem: " in message, message
    # The explicit opt-out connects without any check.
    unchecked = hla.Client(tls1.tls_urls, ssl_cert_reqs="none", **TOLERANT)
    async with unchecked.lock(name, timeout=0):
        assert tls1.count(name) == 1
    for c in (default, missing, unchecked):
        await c.close()


@pytest.mark.asyncio
async def test_wrong_host_is_refused(tls_wrong_host, name):
    client = hla.Client(
        tls_wrong_host.tls_urls, ssl_ca_certs=ca(tls_wrong_host), **TOLERANT
    )
    message = await refused(tls_wrong_host, client, name)
    assert "TLS: certificate verify failed: IP address mismatch" in message, message
    await client.close()


@pytest.fixture(scope="module")
def wrong_host2():
    """Two TLS masters whose certificates name wrong.invalid only."""
    s = Servers(2, "--tls", "--tls-wrong-host")
    yield s
    s.stop()


@pytest.mark.asyncio
@pytest.mark.parametrize("lax_first", [True, False], ids=["lax-first", "lax-last"])
async def test_tls_settings_are_per_master(wrong_host2, name, lax_first):
    # As the sync client (test_tls.py): one master's opt-out of the host
    # name check stays its own.
    lax = 0 if lax_first else 1
    urls = list(wrong_host2.tls_urls)
    urls[lax] += "?ssl_check_hostname=false"
    client = hla.Client(urls, ssl_ca_certs=ca(wrong_host2), **TOLERANT)
    message = await refused(wrong_host2, client, name)
    assert message.startswith("connection failed: 1 of 2 masters answered"), message
    strict = client.masters[1 - lax]
    want = f"{strict}: TLS: certificate verify failed: IP address mismatch"
    assert want in message, message
    assert f"{client.masters[lax]}: " not in message
    await client.close()


# A client certificate the server refuses: found during the handshake or
# at the first read, as the C driver says either.
HANDSHAKE_REFUSAL = (
    r"TLS: (server closed the connection before any reply \(client "
    r"certificate refused\?\)|tlsv13 alert certificate required|tlsv1 alert "
    r"unknown ca)$"
)


@pytest.mark.asyncio
@pytest.mark.parametrize(
    "case",
    [
        "no client certificate",
        "a certificate of another CA",
        "a certificate without its key",
        "a key that is not the certificate's",
        "a key file that is not there",
        "a certificate that is not PEM",
        "a CA file that is not PEM",
    ],
)
async def test_client_certificate_refusals_in_the_c_drivers_words(
    mtls1, name, case, tmp_path
):
    d = Path(mtls1.tls_dir)
    options = {
        "no client certificate": {},
        "a certificate of another CA": {
            "ssl_certfile": d / "other-client.crt",
            "ssl_keyfile": d / "other-client.key",
        },
        "a certificate without its key": {"ssl_certfile": d / "client.crt"},
        "a key that is not the certificate's": {
            "ssl_certfile": d / "client.crt",
            "ssl_keyfile": d / "other-client.key",
        },
        "a key file that is not there": {
            "ssl_certfile": d / "client.crt",
            "ssl_keyfile": "/nonexistent/client.key",
        },
        "a certificate that is not PEM": {},
        "a CA file that is not PEM": {"ssl_ca_certs": "/etc/hostname"},
    }[case]
    if case == "a certificate that is not PEM":
        garbage = tmp_path / "garbage.pem"
        garbage.write_text("not a certificate\n")
        options = {"ssl_certfile": garbage}
    options = {"ssl_ca_certs": d / "ca.crt", **options}
    client = hla.Client(mtls1.tls_urls, **options, **TOLERANT)
    message = await refused(mtls1, client, name)
    await client.close()
    sync = hiredlock.Client(mtls1.tls_urls, **options, **TOLERANT)
    with pytest.raises(hiredlock.ConnectionError) as info:
        sync.lock(name).acquire(blocking=False)
    expected = str(info.value)
    assert "operation not permitted" not in message
    assert "Unknown error" not in message
    if case in ("no client certificate", "a certificate of another CA"):
        for text in (message, expected):
            why = text.split(f"{client.masters[0]}: ", 1)[1]
            assert re.match(HANDSHAKE_REFUSAL, why), text
    else:
        assert message == expected  # word for word


@pytest.mark.asyncio
@pytest.mark.parametrize("seen", ["between rounds", "in the next round"])
async def test_a_carried_connect_that_failed_meanwhile_is_begun_again(name, seen):
    """A TLS handshake to a paused master outlives its round and carries
    over; the master is restarted, which resets it, before the next round
    (the loop sees the reset before that round, or in it): that error is
    old news, and the next round connects anew, as the C driver does
    (connect.c), instead of failing with it."""
    servers = Servers(1, "--tls")
    try:
        client = hla.Client(
            servers.tls_urls, ssl_ca_certs=ca(servers), connect_timeout=10, timeout=0.2
        )
        lk = client.lock(name)
        servers.pause(1)
        with pytest.raises(hiredlock.ConnectionError, match="connecting"):
            await lk.acquire(blocking=False)  # the handshake carries over
        servers.restart(1)  # kills it: the carried handshake fails
        if seen == "between rounds":
            await asyncio.sleep(0.2)  # the loop reads the reset
        assert await lk.acquire(blocking=False)
        await lk.release()
        await client.close()
    finally:
        servers.stop()
