"""The Python bad-input table, part 4: what real deployments add, the TLS
options and rediss:// URLs, Redis Cluster and Sentinel URLs (rows as
described in __init__.py). Every row
fails before any I/O but the ones that load a CA file that is not there or
speak TLS to the healthy plain master."""

from __future__ import annotations

import ssl

from . import NONE, OK

TLS_URL = "rediss://127.0.0.1:1"
INVALID = "^invalid argument: "


def client(url=TLS_URL, **kw):
    import hiredlock

    return hiredlock.Client(url, **kw)


def acquire(url, **kw):
    """One attempt on url; the lock is released when it was taken."""
    import hiredlock

    c = hiredlock.Client(url, **{"timeout": 0.3, "connect_timeout": 0.3, **kw})
    lk = c.lock("bad:tls")
    if lk.acquire(blocking=False):
        lk.release()
        return True
    return False


def tls_to(ctx_url: str) -> str:
    return "rediss://" + ctx_url.removeprefix("redis://") + "?ssl_cert_reqs=none"


ROWS: list[tuple] = []
for url, message in [
    (
        "rediss://h?ssl_cert_reqs=maybe",
        "ssl_cert_reqs must be one of none, optional, required, got 'maybe'",
    ),
    ("rediss://h?ssl_verify=1", "unknown TLS option 'ssl_verify'"),
    ("redis://h?ssl_cert_reqs=none", "TLS options (ssl_*) need a rediss:// url"),
    (
        "rediss://h?ssl_check_hostname=perhaps",
        "ssl_check_hostname must be true or false, got 'perhaps'",
    ),
    ("rediss://h?ssl_ca_certs=a&ssl_ca_certs=b", "ssl_ca_certs is given twice"),
    ("rediss://h?ssl_ca_certs=", "name=value pairs"),
    ("rediss://h?ssl_ca_certs=a&", "empty query after '&'"),
    ("rediss://h?ssl_certfile=a%00b", "bad %-escape in the query"),
]:
    ROWS.append(
        ("tls", f"url {url!r}", lambda x, u=url: client(u), "ValueError", message, NONE)
    )  # fmt: skip
for kw, kind, message in [
    (
        {"ssl_cert_reqs": "maybe"},
        "ValueError",
        INVALID + "ssl_cert_reqs must be one of none, optional, required, got 'maybe'",
    ),
    ({"ssl_cert_reqs": "REQUIRED"}, "ValueError", "got 'REQUIRED'"),
    (
        {"ssl_cert_reqs": 7},
        "ValueError",
        INVALID + "ssl_cert_reqs must be one of none, optional, required, got 7$",
    ),
    (
        {"ssl_cert_reqs": True},
        "TypeError",
        "^ssl_cert_reqs must be str or ssl.VerifyMode, not bool",
    ),
    ({"ssl_cert_reqs": 2**80}, "OverflowError", ""),
    (
        {"ssl_ca_certs": 5},
        "TypeError",
        "^ssl_ca_certs must be str, os.PathLike or None, not int",
    ),
    ({"ssl_ca_certs": b"/ca.pem"}, "TypeError", "not bytes"),
    (
        {"ssl_ca_certs": ""},
        "ValueError",
        INVALID + "ssl_ca_certs must be 1 to 4096 bytes, got 0",
    ),
    ({"ssl_ca_certs": "a" * 4097}, "ValueError", "got 4097"),
    ({"ssl_certfile": "a\x00b"}, "ValueError", "ssl_certfile must not contain a NUL"),
    (
        {"ssl_check_hostname": 1},
        "TypeError",
        "^ssl_check_hostname must be a bool, not int",
    ),
    ({"ssl_check_hostname": "no"}, "TypeError", "not str"),
    (
        {"ssl_keyfile": "/k.pem"},
        "ValueError",
        "ssl_keyfile is given without ssl_certfile",
    ),
    ({"ssl_verify": True}, "TypeError", "unexpected keyword argument 'ssl_verify'"),
]:
    ROWS.append(
        ("tls", f"Client({', '.join(f'{k}={v!r:.20}' for k, v in kw.items())})",
         lambda x, k=kw: client(**k), kind, message, NONE)
    )  # fmt: skip
ROWS += [
    ("tls", "Client(ssl_cert_reqs=ssl.CERT_NONE, ssl_ca_certs=None) is taken",
     lambda x: client(ssl_cert_reqs=ssl.CERT_NONE, ssl_ca_certs=None), "ok", "", NONE),
    ("tls", "Client('rediss://:pw@h:6380/2?ssl_cert_reqs=none') is taken",
     lambda x: client("rediss://:pw@h:6380/2?ssl_cert_reqs=none"), "ok", "", NONE),
    ("tls", "ssl_ca_certs that is not there",
     lambda x: acquire(TLS_URL, ssl_ca_certs="/nonexistent/ca.pem"), "ConnectionError",
     "TLS: ssl_ca_certs /nonexistent/ca.pem: No such file or directory", NONE),
    ("tls", "rediss:// to a plain master",
     lambda x: acquire(tls_to(x.ok)), "ConnectionError", "(TLS handshake)", OK),
]  # fmt: skip

for url, message in [
    ("redis+cluster://h:1,h:1", "an address is listed twice"),
    ("redis+cluster://h:1/2", "a cluster has no databases (only /0)"),
    ("rediss+cluster://h:1", "TLS to a Redis Cluster or through Sentinel"),
    ("redis+cluster://", "missing host"),
    ("redis+cluster://h:1,", "missing host"),
    (
        "redis+cluster://" + ",".join(f"h:{p}" for p in range(1, 18)),
        "at most 16 addresses, got 17",
    ),
    (
        ["redis+cluster://h:1,h:2", "redis://h:2"],
        "is listed twice; Redlock needs independent masters",
    ),
]:
    ROWS.append(
        ("cluster", f"url {url!r:.60}", lambda x, u=url: client(u), "ValueError",
         message, NONE)
    )  # fmt: skip
ROWS.append(
    ("cluster", "url redis+cluster://:pw@h:1,[::1]:2,h is taken",
     lambda x: client("redis+cluster://:pw@h:1,[::1]:2,h"), "ok", "", NONE)
)  # fmt: skip
for url, message in [
    ("redis+sentinel://h:1", "the service name must follow the sentinels"),
    ("redis+sentinel://h:1/", "the service name must follow the sentinels"),
    ("redis+sentinel://h:1/a$b", "bad character in the service name"),
    ("redis+sentinel://h:1/svc/x", "database must be a number after the service"),
    ("rediss+sentinel://h:1/svc", "is not supported"),
    ("redis+sentinel://h:1/" + "a" * 65, "service name longer than 64 bytes"),
    (["redis+sentinel://a:1,b:2/svc", "redis+sentinel://b:2/svc"], "is listed twice"),
]:
    ROWS.append(
        ("sentinel", f"url {url!r:.60}", lambda x, u=url: client(u), "ValueError",
         message, NONE)
    )  # fmt: skip
ROWS.append(
    ("sentinel", "url redis+sentinel://:pw@h,h:26380/svc/2 is taken",
     lambda x: client("redis+sentinel://:pw@h,h:26380/svc/2"), "ok", "", NONE)
)  # fmt: skip
