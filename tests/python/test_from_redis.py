"""A hiredlock client from a redis-py client's settings
(hiredlock.Client.from_redis, hiredlock.Client(redis_client), the asyncio
twins): what is read from each kind of redis-py client, what is refused
and why, and locks taken that way on every deployment the fixtures have
(a database, a password, an ACL user, a unix socket, TLS, a Redis Cluster,
a Sentinel-managed primary), landing where redis-py itself reads them."""

from __future__ import annotations

import ssl
from pathlib import Path

import pytest
import redis
import redis.asyncio
from pytest_redis import TOLERANT
from redis.cluster import ClusterNode, RedisCluster
from redis.credentials import CredentialProvider, UsernamePasswordCredentialProvider
from redis.sentinel import Sentinel
from redis_fixture import Servers

import hiredlock
import hiredlock.asyncio
from hiredlock._from_redis import url_of


@pytest.fixture(scope="module")
def servers_pw():
    s = Servers(1, "--password", "p@ss:w/rd")
    yield s
    s.stop()


@pytest.fixture(scope="module")
def acl_server():
    s = Servers(1, "--acl-user", "locker:pw")
    yield s
    s.stop()


def test_a_redis_py_client_is_taken_where_urls_go(servers1, name):
    """Before: hiredlock.Client(redis.Redis()) failed with KeyError: 0 (it
    read the client as a sequence of URLs)."""
    r = redis.Redis(host="127.0.0.1", port=servers1.ports[0], db=3)
    client = hiredlock.Client(r, **TOLERANT)
    assert client.masters == (f"127.0.0.1:{servers1.ports[0]}",)
    with client.lock(name, ttl=10) as lk:
        assert servers1.redis(1, db=3).get(name) == lk.token.encode()
        assert servers1.redis(1, db=0).get(name) is None
    assert type(hiredlock.Client.from_redis(r)) is hiredlock.Client


TLS_DEFAULTS = "ssl_cert_reqs=required&ssl_check_hostname=true"
SETTINGS = [
    (redis.Redis(), "redis://localhost:6379"),
    (
        redis.Redis(host="10.0.0.1", port=7000, db=3, username="u", password="p@ss w"),
        "redis://u:p%40ss%20w@10.0.0.1:7000/3",
    ),
    (redis.Redis(password="pw"), "redis://:pw@localhost:6379"),
    (redis.Redis(host="::1"), "redis://[::1]:6379"),
    (
        redis.Redis(unix_socket_path="/run/redis.sock", db=2, password="x"),
        "unix://:x@/run/redis.sock?db=2",
    ),
    (
        redis.Redis(
            ssl=True, ssl_ca_certs="/ca.pem", ssl_certfile="/c.pem", ssl_keyfile="/k"
        ),
        "rediss://localhost:6379?ssl_ca_certs=%2Fca.pem&ssl_certfile=%2Fc.pem"
        f"&ssl_keyfile=%2Fk&{TLS_DEFAULTS}",
    ),
    (
        redis.Redis.from_url("rediss://:pw@h:6380/1?ssl_cert_reqs=none"),
        "rediss://:pw@h:6380/1?ssl_cert_reqs=none&ssl_check_hostname=false",
    ),
    (
        redis.Redis(ssl=True, ssl_cert_reqs=ssl.CERT_OPTIONAL),
        "rediss://localhost:6379?ssl_cert_reqs=optional&ssl_check_hostname=true",
    ),
    (
        redis.Redis(ssl=True, ssl_min_version=ssl.TLSVersion.TLSv1_2),
        f"rediss://localhost:6379?{TLS_DEFAULTS}",
    ),
    (
        redis.Redis(credential_provider=UsernamePasswordCredentialProvider("u", "p")),
        "redis://u:p@localhost:6379",
    ),
    (
        Sentinel([("10.0.0.5", 26379), ("10.0.0.6", 26380)]).master_for(
            "svc", password="pw", db=2
        ),
        "redis+sentinel://:pw@10.0.0.5:26379,10.0.0.6:26380/svc/2",
    ),
    (redis.asyncio.Redis(port=7001, db=1), "redis://localhost:7001/1"),
    (redis.asyncio.Redis(unix_socket_path="/s.sock"), "unix:///s.sock"),
]


@pytest.mark.parametrize("client,url", SETTINGS)
def test_what_is_read_from_a_redis_py_client(client, url):
    assert url_of(client) == url
    hiredlock.Client(client)  # and hiredlock takes the URL


def test_a_cluster_client_gives_its_startup_nodes():
    # RedisCluster connects in its constructor: made without running that.
    r = RedisCluster.__new__(RedisCluster)
    r.nodes_manager = type(
        "NM",
        (),
        {
            "startup_nodes": {
                "a": ClusterNode("10.0.0.1", 7000),
                "b": ClusterNode("10.0.0.2", 7001),
            },
            "connection_kwargs": {"password": "pw"},
        },
    )()
    assert url_of(r) == "redis+cluster://:pw@10.0.0.1:7000,10.0.0.2:7001"


class TokenProvider(CredentialProvider):
    def get_credentials(self):
        return ("token",)


REFUSED = [
    (redis.Redis(ssl=True, ssl_ca_data="-----BEGIN..."), "ssl_ca_data"),
    (redis.Redis(ssl=True, ssl_password="k"), "ssl_password"),
    (redis.Redis(ssl=True, ssl_validate_ocsp=True), "ssl_validate_ocsp"),
    (redis.Redis(ssl=True, ssl_ciphers="HIGH"), "ssl_ciphers"),
    (redis.Redis(ssl=True, ssl_min_version=ssl.TLSVersion.TLSv1_3), "ssl_min_version"),
    (redis.Redis(credential_provider=TokenProvider()), "credential_provider"),
    (Sentinel([("h", 26379)]).slave_for("svc"), "replica"),
    (
        Sentinel([("h", 26379)], sentinel_kwargs={"password": "x"}).master_for("s"),
        "sentinels without credentials",
    ),
    (Sentinel([("h", 26379)], ssl=True).master_for("s"), "TLS through Sentinel"),
]


@pytest.mark.parametrize("client,named", REFUSED)
def test_what_hiredlock_cannot_honour_is_refused_by_name(client, named):
    for make in (hiredlock.Client, hiredlock.Client.from_redis):
        with pytest.raises(ValueError, match=named):
            make(client)
    with pytest.raises(ValueError, match=named):
        hiredlock.asyncio.Client.from_redis(client)


def test_not_a_redis_py_client():
    with pytest.raises(TypeError, match="expects a redis-py client, not str"):
        hiredlock.Client.from_redis("redis://localhost")
    with pytest.raises(TypeError, match="expects a redis-py client, not dict"):
        hiredlock.asyncio.Client.from_redis({})


def test_options_and_several_masters(servers3, name):
    """Client options go with the redis-py clients; a list of them is N
    masters (pottery's masters={...})."""
    rs = [redis.Redis(host="127.0.0.1", port=p) for p in servers3.ports]
    client = hiredlock.Client.from_redis(rs, key_prefix="app:", **TOLERANT)
    assert client.quorum == 2
    with client.lock(name, ttl=10) as lk:
        assert lk.key == f"app:{name}".encode()
        assert [r.get(f"app:{name}") for r in rs] == [lk.token.encode()] * 3
    mixed = hiredlock.Client([rs[0], servers3.urls[1], rs[2]])
    assert mixed.masters == client.masters
    with pytest.raises(TypeError, match="not str"):
        hiredlock.Client.from_redis([rs[0], "redis://x"])


def lock_lands(client: hiredlock.Client, reader, name: str) -> None:
    """A lock taken through client is the key reader (redis-py) reads."""
    with client.lock(name, ttl=10, timeout=5) as lk:
        assert reader.get(name) == lk.token.encode()
    assert reader.get(name) is None


def test_password_acl_user_and_unix_socket(servers_pw, acl_server, servers1, name):
    pw = redis.Redis(port=servers_pw.ports[0], password="p@ss:w/rd")
    lock_lands(hiredlock.Client.from_redis(pw, **TOLERANT), pw, name)
    acl = redis.Redis(port=acl_server.ports[0], username="locker", password="pw")
    lock_lands(hiredlock.Client.from_redis(acl, **TOLERANT), acl, name)
    unix = redis.Redis(unix_socket_path=servers1.unix_paths[0], db=5)
    client = hiredlock.Client.from_redis(unix, **TOLERANT)
    assert client.masters == (servers1.unix_paths[0],)
    lock_lands(client, unix, name)


def test_tls(tls1, name):
    ca = str(Path(tls1.tls_dir) / "ca.crt")
    host, port = tls1.tls_urls[0].split("//")[1].rsplit(":", 1)
    r = redis.Redis(host=host, port=int(port), ssl=True, ssl_ca_certs=ca)
    lock_lands(hiredlock.Client.from_redis(r, **TOLERANT), r, name)
    # The certificate is checked as redis-py would: an untrusted CA fails.
    other = redis.Redis(
        host=host,
        port=int(port),
        ssl=True,
        ssl_ca_certs=str(Path(tls1.tls_dir) / "other-ca.crt"),
    )
    with pytest.raises(hiredlock.ConnectionError, match="certificate verify failed"):
        hiredlock.Client.from_redis(other, **TOLERANT).lock(name).acquire(
            blocking=False
        )


def test_cluster(cluster3, name):
    r = RedisCluster(host="127.0.0.1", port=cluster3.ports[0])
    try:
        client = hiredlock.Client.from_redis(r, **TOLERANT)
        assert client.masters[0].startswith("cluster 127.0.0.1:")
        lock_lands(client, r, name)
    finally:
        r.close()


def test_sentinel(sentinel2, name):
    sentinel = Sentinel([("127.0.0.1", p) for p in sentinel2.sentinel_ports])
    r = sentinel.master_for(sentinel2.service)
    client = hiredlock.Client.from_redis(r, **TOLERANT)
    assert client.masters[0].startswith(f"{sentinel2.service} (sentinel 127.0.0.1:")
    lock_lands(client, r, name)


@pytest.mark.asyncio
async def test_asyncio_twin(servers1, name):
    r = redis.asyncio.Redis(port=servers1.ports[0], db=4)
    try:
        async with hiredlock.asyncio.Client(r, **TOLERANT) as client:
            async with client.lock(name, ttl=10) as lk:
                assert await r.get(name) == lk.token.encode()
            assert await r.get(name) is None
        client = hiredlock.asyncio.Client.from_redis(r)
        assert client.masters == (f"localhost:{servers1.ports[0]}",)
        await client.close()
    finally:
        await r.aclose()


def test_asyncio_refuses_a_cluster_in_its_own_words(cluster3):
    r = RedisCluster(host="127.0.0.1", port=cluster3.ports[0])
    try:
        with pytest.raises(ValueError, match="asyncio"):
            hiredlock.asyncio.Client.from_redis(r)
    finally:
        r.close()
