"""A redis-py client's connection settings as hiredlock's: one master URL
(TLS settings in its query, as hiredlock's URLs take them per master).

Used by :meth:`hiredlock.Client.from_redis` (and its asyncio twin), by
``hiredlock.Client(redis_client)``, and by :mod:`hiredlock.redis_py`. It
reads what redis-py keeps of a client's configuration (its connection
pool's class and keyword arguments, a Sentinel pool's service and
sentinels, a cluster's startup nodes), never talks to Redis, and refuses
what hiredlock cannot do the same way rather than weaken it: a TLS setting
it has no equal for, credentials that change over time, a replica.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import quote, urlencode

# redis-py TLS settings hiredlock's client takes as they are (same names).
_SSL_PASSED = ("ssl_ca_certs", "ssl_ca_path", "ssl_certfile", "ssl_keyfile")
# redis-py TLS settings hiredlock has no equal for: refused when set, since
# dropping them would connect with less than the user asked for.
_SSL_REFUSED = (
    "ssl_ca_data",
    "ssl_password",
    "ssl_ocsp_context",
    "ssl_ocsp_expected_cert",
    "ssl_ciphers",
    "ssl_include_verify_flags",
    "ssl_exclude_verify_flags",
)
_SSL_REFUSED_TRUE = ("ssl_validate_ocsp", "ssl_validate_ocsp_stapled")
SEEDS_MAX = 16  # a cluster's or a Sentinel's addresses in one URL


_KINDS = {"Redis", "RedisCluster"}  # redis.StrictRedis is redis.Redis


def is_redis_client(obj: object) -> bool:
    """Whether obj is a redis-py client (sync or asyncio; plain, Sentinel
    managed or cluster), without importing redis-py."""
    return any(
        c.__name__ in _KINDS and (c.__module__ or "").startswith("redis.")
        for c in type(obj).__mro__
    )


def url_of(client: Any) -> str:
    """The hiredlock URL of the server a redis-py client talks to."""
    if not is_redis_client(client):
        raise TypeError(
            "expected a redis-py client (redis.Redis, redis.asyncio.Redis, "
            f"redis.cluster.RedisCluster, ...), not {type(client).__name__}"
        )
    if hasattr(client, "nodes_manager"):
        return _cluster(client)
    pool = client.connection_pool
    if hasattr(pool, "service_name") and hasattr(pool, "sentinel_manager"):
        return _sentinel(pool)
    return _single(pool.connection_class, dict(pool.connection_kwargs))


def _credentials(kwargs: dict[str, Any]) -> str:
    """``user:password@`` (percent-encoded) for a URL, or ""."""
    username, password = kwargs.get("username"), kwargs.get("password")
    provider = kwargs.get("credential_provider")
    if provider is not None:
        if type(provider).__name__ != "UsernamePasswordCredentialProvider":
            raise ValueError(
                "invalid argument: a redis-py credential_provider other than "
                "UsernamePasswordCredentialProvider (credentials that change "
                "over time) cannot be handed to hiredlock; give the client a "
                "username and password"
            )
        creds = provider.get_credentials()
        username, password = (None, creds[0]) if len(creds) == 1 else creds
    if password is None and not username:
        return ""
    user = quote(str(username), safe="") if username else ""
    word = quote(str(password), safe="") if password is not None else ""
    return f"{user}:{word}@"


def _host(host: str) -> str:
    return f"[{host}]" if ":" in host else host


def _is_tls(connection_class: type, kwargs: dict[str, Any]) -> bool:
    return bool(kwargs.get("ssl")) or any(
        c.__name__ == "SSLConnection" for c in connection_class.__mro__
    )


def urls_of(urls: Any) -> Any:
    """urls with every redis-py client in it (or it, when it is one)
    replaced by its URL; anything else is left for hiredlock to judge."""
    if is_redis_client(urls):
        return url_of(urls)
    if isinstance(urls, (list, tuple)):
        return [url_of(u) if is_redis_client(u) else u for u in urls]
    return urls


def _single(connection_class: type, kwargs: dict[str, Any]) -> str:
    creds = _credentials(kwargs)
    db = int(kwargs.get("db") or 0)
    classes = {c.__name__ for c in connection_class.__mro__}
    if "UnixDomainSocketConnection" in classes:
        query = f"?db={db}" if db else ""
        return f"unix://{creds}{kwargs['path']}{query}"
    host = _host(str(kwargs.get("host") or "localhost"))
    where = f"{creds}{host}:{int(kwargs.get('port') or 6379)}"
    path = f"/{db}" if db else ""
    if not _is_tls(connection_class, kwargs):
        return f"redis://{where}{path}"
    return f"rediss://{where}{path}?{urlencode(_tls_options(kwargs))}"


def _tls_options(kwargs: dict[str, Any]) -> dict[str, str]:
    """The URL query of a rediss:// master: redis-py's TLS settings."""
    # Imported here, not with the module: `import hiredlock` works on a
    # Python without the ssl module (tests in scripts/packaging.sh), and a
    # redis-py client with TLS settings has it.
    import ssl

    refused = [k for k in _SSL_REFUSED if kwargs.get(k) is not None]
    refused += [k for k in _SSL_REFUSED_TRUE if kwargs.get(k)]
    minimum = kwargs.get("ssl_min_version")
    if minimum is not None and minimum > ssl.TLSVersion.TLSv1_2:
        refused.append("ssl_min_version")  # hiredlock speaks TLS 1.2 and 1.3
    if refused:
        raise ValueError(
            f"invalid argument: hiredlock cannot honour the redis-py TLS "
            f"setting{'s' if len(refused) > 1 else ''} {', '.join(refused)} "
            "(docs/MIGRATING.md); remove it or give hiredlock.Client the "
            "ssl_* options it takes"
        )
    options = {k: str(kwargs[k]) for k in _SSL_PASSED if kwargs.get(k)}
    reqs = kwargs.get("ssl_cert_reqs", "required")
    if isinstance(reqs, ssl.VerifyMode):
        reqs = {ssl.CERT_NONE: "none", ssl.CERT_OPTIONAL: "optional"}.get(
            reqs, "required"
        )
    options["ssl_cert_reqs"] = str(reqs or "none")  # redis-py: None is none
    check = bool(kwargs.get("ssl_check_hostname", True))
    # redis-py checks no host name when it verifies nothing.
    check = check and options["ssl_cert_reqs"] != "none"
    options["ssl_check_hostname"] = "true" if check else "false"
    return options


def _sentinel(pool: Any) -> str:
    if not getattr(pool, "is_master", True):
        raise ValueError(
            "invalid argument: a redis-py client of a Sentinel-managed replica "
            "(slave_for) cannot hold locks; use master_for"
        )
    kwargs = dict(pool.connection_kwargs)
    if _is_tls(pool.connection_class, kwargs):
        raise ValueError(
            "invalid argument: TLS through Sentinel is not supported by "
            "hiredlock (docs/DEPLOYMENTS.md)"
        )
    manager = pool.sentinel_manager
    sentinel_kwargs = getattr(manager, "sentinel_kwargs", None) or {}
    if sentinel_kwargs.get("password") or sentinel_kwargs.get("username"):
        raise ValueError(
            "invalid argument: hiredlock asks sentinels without credentials "
            "(docs/DEPLOYMENTS.md); the redis-py Sentinel has sentinel_kwargs "
            "with a password"
        )
    seeds = []
    for sentinel in manager.sentinels[:SEEDS_MAX]:
        where = sentinel.connection_pool.connection_kwargs
        seeds.append(f"{_host(str(where['host']))}:{int(where.get('port') or 26379)}")
    db = int(kwargs.get("db") or 0)
    path = f"/{db}" if db else ""
    service = quote(str(pool.service_name), safe="")
    return f"redis+sentinel://{_credentials(kwargs)}{','.join(seeds)}/{service}{path}"


def _cluster(client: Any) -> str:
    manager = client.nodes_manager
    kwargs = dict(
        getattr(manager, "connection_kwargs", None)
        or getattr(client, "connection_kwargs", None)
        or {}
    )
    connection_class = kwargs.get("connection_class", object)
    if _is_tls(connection_class, kwargs):
        raise ValueError(
            "invalid argument: TLS to a Redis Cluster is not supported by "
            "hiredlock (docs/DEPLOYMENTS.md)"
        )
    nodes = list(manager.startup_nodes.values())[:SEEDS_MAX]
    seeds = ",".join(f"{_host(str(n.host))}:{int(n.port)}" for n in nodes)
    return f"redis+cluster://{_credentials(kwargs)}{seeds}"
