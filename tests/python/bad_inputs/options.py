"""The Python bad-input table, part 2: client options, URLs, wrong types
and unknown arguments (rows as described in __init__.py)."""

from __future__ import annotations

import math

from . import NONE, NOWHERE, OK
from .arguments import nowhere


def client(**kw):
    import hiredlock

    return hiredlock.Client(NOWHERE, **kw)


def new(urls):
    import hiredlock

    return hiredlock.Client(urls)


def lock_class(*args, **kw):
    import hiredlock

    return hiredlock.Lock(*args, **kw)


def set_default(arg):
    import hiredlock

    return hiredlock.set_default_client(arg)


def masters(n):
    return [f"redis://127.0.0.1:{p}" for p in range(1000, 1000 + n)]


INVALID = "^invalid argument: "
ROWS: list[tuple] = []
for option, value, pattern in [
    ("connect_timeout", 0, "connect_timeout must be between 0\\.001 and"),
    ("timeout", -1, "timeout must be between 0\\.001 and"),
    ("timeout", math.nan, "timeout must be a number of seconds, got nan"),
    ("retry_delay", -0.1, "retry_delay must be between 0\\.000 and"),
    ("retry_jitter", math.inf, "retry_jitter must be between 0\\.000 and"),
    ("drift_factor", 0.5, "drift_factor must be in \\[0, 0\\.5\\), got 0\\.5"),
    ("drift_factor", math.nan, "drift_factor must be in \\[0, 0\\.5\\), got nan"),
    ("key_prefix", "p" * 513, "key_prefix must be at most 512 bytes, got 513"),
    ("restart_guard", -1, "restart_guard must be between 0\\.000 and"),
    ("sync_replicas", 101, "sync_replicas must be a whole number from 0 to 100"),
    ("sync_replicas", -1, "sync_replicas must be a whole number from 0 to 100"),
]:
    category = "timeout" if "time" in option or "retry" in option else "config"
    ROWS.append(
        (category, f"Client({option}={value!r:.12})",
         lambda x, o=option, v=value: client(**{o: v}), "ValueError",
         INVALID + pattern, NONE)
    )  # fmt: skip
for option, value, pattern in [
    (
        "timeout",
        "1",
        "^timeout must be a number of seconds \\(int or float\\), not str",
    ),
    (
        "drift_factor",
        None,
        "^drift_factor must be a number \\(int or float\\), not NoneType",
    ),
    ("key_prefix", 1, "^key_prefix must be str or bytes, not int"),
]:
    ROWS.append(
        ("type", f"Client({option}={value!r})",
         lambda x, o=option, v=value: client(**{o: v}), "TypeError", pattern, NONE)
    )  # fmt: skip
ROWS += [
    ("timeout", "Client(timeout=0)", lambda x: x.client(timeout=0), "ValueError",
     "timeout", OK),
    ("timeout", "Client(connect_timeout=-1)", lambda x: x.client(connect_timeout=-1),
     "ValueError", "connect_timeout", OK),
    ("timeout", "Client(retry_delay=-1)", lambda x: x.client(retry_delay=-1),
     "ValueError", "retry_delay", OK),
    ("timeout", "Client(timeout=0.0001)", lambda x: x.client(timeout=0.0001),
     "ValueError", "got 0.0001", OK),
    ("config", "64 masters", lambda x: new(masters(64)), "ValueError", "got 64", NONE),
    ("config", "the same master twice", lambda x: new([x.ok, x.ok]), "ValueError",
     "listed twice", OK),
    ("config", "the same master as 127.0.0.1 and localhost",
     lambda x: new([x.ok, x.dup]), "ok", "", OK),
    ("config", "... and an acquire on it (one server, two votes)",
     lambda x: new([x.ok, x.dup]).lock("bad-dup").acquire(blocking=False),
     "ValueError", "are one server (run_id", OK),
    ("type", "lock(sync_replicas=1.5)",
     lambda x: x.client().lock("bad", sync_replicas=1.5), "TypeError",
     "^sync_replicas must be an int, not float", OK),
    ("config", "drift_factor=-0.1", lambda x: x.client(drift_factor=-0.1),
     "ValueError", "drift_factor", OK),
    ("config", "unknown keyword tiemout=1", lambda x: x.client(tiemout=1),
     "TypeError", "tiemout", OK),
]  # fmt: skip

# URLs: the core's message, with the password hidden.
for urls, pattern in [
    ("http://127.0.0.1:6379", 'url "http://127\\.0\\.0\\.1:6379"'),
    ("redis://127.0.0.1:99999", 'url "redis://127\\.0\\.0\\.1:99999"'),
    ("redis://:pw@127.0.0.1:99999", 'url "redis://:\\*\\*\\*@127\\.0\\.0\\.1:99999"'),
    ("", "url must not be empty"),
    ("redis://127.0.0.1:6379/x", 'url "redis://127\\.0\\.0\\.1:6379/x"'),
    ([], "urls must list 1 to 63 masters, got 0"),
    (["redis://a"] * 64, "urls must list 1 to 63 masters, got 64"),
    ([NOWHERE, NOWHERE], "master 127\\.0\\.0\\.1:1 is listed twice"),
    ("redis://a\x00b", "urls\\[0\\] contains a NUL character"),
]:
    category = "config" if isinstance(urls, list) else "url"
    ROWS.append(
        (category, f"Client({urls!r:.40})", lambda x, u=urls: new(u), "ValueError",
         INVALID + ".*" + pattern, NONE)
    )  # fmt: skip
for url, message in [
    (
        "http://x",
        "scheme must be redis://, rediss://, unix://, redis+cluster:// or redis+sentinel://",
    ),
    ("redis://h:99999", "port"),
    ("redis://h:abc", "port"),
    ("redis://:@h", "empty password"),
    ("redis://h/x", "database"),
    ("unix://", "absolute"),
    ("redis://[::1", "url"),
    ("redis://h:6379/0%", "url"),
]:
    ROWS.append(
        ("url", f"url {url!r}", lambda x, u=url: new(u), "ValueError", message, NONE)
    )
for urls, pattern in [
    (None, "urls must be a str or a sequence of str"),
    (42, "urls must be a str or a sequence of str"),
    (b"redis://a", "urls must be a str or a sequence of str, not bytes"),
    ([NOWHERE, 7], "urls\\[1\\] must be str, not int"),
    (5, "urls"),
    ([5], "urls"),
    (b"redis://h", "urls"),
]:
    ROWS.append(
        ("type", f"urls={urls!r}", lambda x, u=urls: new(u), "TypeError",
         "^.*" + pattern, NONE)
    )  # fmt: skip

# Wrong types and unknown or surplus arguments.
ROWS += [
    ("type", "key_prefix=5", lambda x: x.client(key_prefix=5), "TypeError",
     "key_prefix", OK),
    ("type", "Lock(client=None)", lambda x: lock_class(None, "x"), "TypeError",
     "client", NONE),
    ("type", 'Lock("redis://x", "n")', lambda x: lock_class("redis://x", "n"),
     "TypeError", "^client must be a hiredlock\\.Client, not str$", NONE),
    ("type", 'set_default_client("redis://x")',
     lambda x: set_default("redis://x"), "TypeError",
     "^client must be a hiredlock\\.Client or None", NONE),
    ("type", "acquire(wait=1)", lambda x: nowhere().lock("n").acquire(wait=1),
     "TypeError", "acquire() got an unexpected keyword argument 'wait'", NONE),
    ("type", "acquire(True, 1, 2)", lambda x: nowhere().lock("n").acquire(True, 1, 2),
     "TypeError", "acquire() takes at most 2 positional", NONE),
    ("type", "acquire(True, blocking=True)",
     lambda x: nowhere().lock("n").acquire(True, blocking=True), "TypeError",
     "acquire() got multiple values for argument 'blocking'", NONE),
    ("type", "extend(seconds=1)", lambda x: nowhere().lock("n").extend(seconds=1),
     "TypeError", "extend() got an unexpected keyword argument 'seconds'", NONE),
    ("type", "release(1)", lambda x: nowhere().lock("n").release(1), "TypeError",
     "release", NONE),
    ("type", 'lock("n", ttl_ms=5)', lambda x: nowhere().lock("n", ttl_ms=5),
     "TypeError", "'ttl_ms'", NONE),
    ("type", "Client(retries=3)", lambda x: client(retries=3), "TypeError",
     "'retries'", NONE),
    ("type", 'Lock(client, "n", ttl_ms=5)',
     lambda x: lock_class(nowhere(), "n", ttl_ms=5), "TypeError", "'ttl_ms'", NONE),
    ("type", 'synchronized("n", ttl_ms=5)',
     lambda x: nowhere().synchronized("n", ttl_ms=5), "TypeError", "'ttl_ms'", NONE),
    ("type", "Client(auto_renew=1)", lambda x: client(auto_renew=1), "TypeError",
     "^auto_renew must be a bool, not int$", NONE),
    ("timeout", 'lock("n", max_hold=-1)',
     lambda x: nowhere().lock("n", auto_renew=True, max_hold=-1), "ValueError",
     INVALID + "max_hold must be between 0\\.000 and", NONE),
    ("timeout", 'lock("n", max_hold=0.003)',
     lambda x: nowhere().lock("n", auto_renew=True, max_hold=0.003), "ValueError",
     INVALID + "max_hold must be 0 \\(no cap\\) or at least the smallest TTL, "
     "5 ms; got 3 ms$", NONE),
    ("type", 'lock("n", on_lost=3)',
     lambda x: nowhere().lock("n", auto_renew=True, on_lost=3), "TypeError",
     "^on_lost must be callable or None, not int$", NONE),
    ("config", 'lock("n", on_lost=print) without auto_renew',
     lambda x: nowhere().lock("n", on_lost=print), "ValueError",
     INVALID + "on_lost needs auto_renew=True", NONE),
]  # fmt: skip
