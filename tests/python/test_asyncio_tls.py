"""hiredlock.asyncio over TLS (rediss://): the same ssl_* settings as the
sync client, the certificate verified by default, and a refusal worded as
the C driver words it, leaving no key."""

from __future__ import annotations

from pathlib import Path

import pytest
from pytest_redis import TOLERANT

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
