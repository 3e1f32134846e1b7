"""Bad inputs, Python: one table, one row per bad input, each checked for
the error it must give; the observed errors are written out for the table
in docs/RELIABILITY.md.

  python3 bad_inputs.py OUT.json     (needs the HRL_BAD_* servers, see
                                      hrlrel/badenv.py; run by run_bad.py)
Exits non-zero when a row does not give what it should.
"""

import json
import math
import os
import sys

import redis

import hiredlock

E = os.environ
OK = E["HRL_BAD_OK"]
FAST = dict(timeout=0.5, connect_timeout=0.5)


def client(url=OK, **kw):
    return hiredlock.Client(url, **dict(FAST, **kw))


def lock(name="bad:x", url=OK, **kw):
    return client(url).lock(name, **kw)


def acquire_on(url, name="bad:srv"):
    return client(url).lock(name, ttl=5).acquire(timeout=0.2)


def inspect():
    return redis.Redis(unix_socket_path=E["HRL_BAD_OK_SOCK"])


def held_then(action, name):
    lk = lock(name, ttl=5)
    assert lk.acquire(blocking=False)
    return action(lk)


def released_then(action):
    lk = lock("bad:rel", ttl=5)
    assert lk.acquire(blocking=False)
    lk.release()
    return action(lk)


def name_stored(name):
    lk = lock(name, ttl=5)
    ok = lk.acquire(blocking=False)
    there = inspect().exists(lk.key)
    lk.release()
    return f"acquired={ok}, key of {len(lk.key)} bytes stored={bool(there)}"


def wrongtype_acquire():
    inspect().delete("bad:list")
    inspect().lpush("bad:list", "x")
    return lock("bad:list", ttl=5).acquire(blocking=False)


def wrongtype_release():
    inspect().delete("bad:list2")
    lk = lock("bad:list2", ttl=5)
    assert lk.acquire(blocking=False)
    r = inspect()
    r.delete("bad:list2")
    r.lpush("bad:list2", "x")
    return lk.release()


def after_fork():
    c = client()
    lk = c.lock("bad:fork", ttl=5)
    assert lk.acquire(blocking=False)
    lk.release()
    pid = os.fork()
    if pid == 0:  # the child: the inherited client opens its own connections
        code = 0
        try:
            lk2 = c.lock("bad:fork", ttl=5)
            code = 0 if lk2.acquire(blocking=False) else 1
            lk2.release()
        except BaseException:
            code = 2
        os._exit(code)
    _, status = os.waitpid(pid, 0)
    return f"child acquired and released: {os.waitstatus_to_exitcode(status) == 0}"


def held_after_fork():
    lk = lock("bad:fork2", ttl=5)
    assert lk.acquire(blocking=False)
    pid = os.fork()
    if pid == 0:
        try:
            lk.release()  # the child releases the lock it inherited
            os._exit(0)
        except BaseException:
            os._exit(1)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    return lk.release()  # ... so the parent's release finds it gone


X = "x"
ROWS = [
    # category, input, call, expected kind, message fragment
    (
        "name",
        'name ""',
        lambda: lock(""),
        "ValueError",
        "name must be 1 to 512 bytes, got 0",
    ),
    ("name", 'name b""', lambda: lock(b""), "ValueError", "got 0"),
    ("name", "name of 513 chars", lambda: lock(X * 513), "ValueError", "got 513"),
    ("name", "name of 513 bytes", lambda: lock(b"x" * 513), "ValueError", "got 513"),
    (
        "name",
        "name of 257 x 'é' (514 UTF-8 bytes)",
        lambda: lock("é" * 257),
        "ValueError",
        "got 514",
    ),
    (
        "name",
        "name with a prefix: 512 + prefix of 10",
        lambda: client(key_prefix="p" * 10).lock(X * 512),
        "ok",
        "",
    ),
    (
        "name",
        'name "a\\0b" (embedded NUL)',
        lambda: name_stored("bad:a\0b"),
        "returns",
        "acquired=True, key of 7 bytes stored=True",
    ),
    (
        "name",
        "name b'\\xff\\xfe' (invalid UTF-8)",
        lambda: name_stored(b"bad:\xff\xfe"),
        "returns",
        "acquired=True",
    ),
    (
        "name",
        "name '\\ud800' (lone surrogate)",
        lambda: lock("\ud800"),
        "UnicodeEncodeError",
        "surrogates not allowed",
    ),
    ("name", "name None", lambda: lock(None), "TypeError", "name must be str or bytes"),
    ("name", "name 5", lambda: lock(5), "TypeError", "name must be str or bytes"),
    ("name", "name bytearray", lambda: lock(bytearray(b"x")), "TypeError", "bytearray"),
    ("ttl", "ttl=0", lambda: lock(ttl=0), "ValueError", "ttl must be between 0.005"),
    ("ttl", "ttl=-1", lambda: lock(ttl=-1), "ValueError", "got -1"),
    ("ttl", "ttl=nan", lambda: lock(ttl=math.nan), "ValueError", "got nan"),
    ("ttl", "ttl=inf", lambda: lock(ttl=math.inf), "ValueError", "got inf"),
    ("ttl", "ttl=-inf", lambda: lock(ttl=-math.inf), "ValueError", "got -inf"),
    ("ttl", "ttl=1e12 (overflow)", lambda: lock(ttl=1e12), "ValueError", "2147483.647"),
    ("ttl", "ttl=2**64", lambda: lock(ttl=2**64), "ValueError", "ttl"),
    (
        "ttl",
        "ttl=0.0004 (sub-millisecond)",
        lambda: lock(ttl=0.0004),
        "ValueError",
        "got 0.0004",
    ),
    ("ttl", 'ttl="10"', lambda: lock(ttl="10"), "TypeError", "not str"),
    ("ttl", "ttl=True", lambda: lock(ttl=True), "TypeError", "not bool"),
    ("ttl", "ttl=None", lambda: lock(ttl=None), "TypeError", "not NoneType"),
    ("ttl", "extend(ttl=0)", lambda: lock().extend(ttl=0), "ValueError", "got 0"),
    (
        "timeout",
        "acquire(timeout=-2)",
        lambda: lock().acquire(timeout=-2),
        "ValueError",
        "timeout",
    ),
    (
        "timeout",
        "acquire(timeout=nan)",
        lambda: lock().acquire(timeout=math.nan),
        "ValueError",
        "nan",
    ),
    (
        "timeout",
        "acquire(timeout=inf)",
        lambda: lock().acquire(timeout=math.inf),
        "ValueError",
        "got inf",
    ),
    (
        "timeout",
        "acquire(timeout=1e10)",
        lambda: lock().acquire(timeout=1e10),
        "ValueError",
        "2147483.647",
    ),
    (
        "timeout",
        "acquire(blocking=False, timeout=1)",
        lambda: lock().acquire(blocking=False, timeout=1),
        "ValueError",
        "blocking",
    ),
    (
        "timeout",
        'acquire(timeout="1")',
        lambda: lock().acquire(timeout="1"),
        "TypeError",
        "timeout",
    ),
    (
        "timeout",
        "Client(timeout=0)",
        lambda: client(timeout=0),
        "ValueError",
        "timeout",
    ),
    (
        "timeout",
        "Client(connect_timeout=-1)",
        lambda: client(connect_timeout=-1),
        "ValueError",
        "connect_timeout",
    ),
    (
        "timeout",
        "Client(retry_delay=-1)",
        lambda: client(retry_delay=-1),
        "ValueError",
        "retry_delay",
    ),
    (
        "timeout",
        "Client(timeout=0.0001)",
        lambda: client(timeout=0.0001),
        "ValueError",
        "got 0.0001",
    ),
    (
        "config",
        "Client([]) (N = 0)",
        lambda: hiredlock.Client([]),
        "ValueError",
        "1 to 63 masters, got 0",
    ),
    (
        "config",
        "64 masters",
        lambda: hiredlock.Client([f"redis://127.0.0.1:{p}" for p in range(1000, 1064)]),
        "ValueError",
        "got 64",
    ),
    (
        "config",
        "the same master twice",
        lambda: hiredlock.Client([OK, OK]),
        "ValueError",
        "listed twice",
    ),
    (
        "config",
        "the same master as 127.0.0.1 and localhost",
        lambda: hiredlock.Client([OK, E["HRL_BAD_DUP"]]),
        "ok",
        "",
    ),
    (
        "config",
        "drift_factor=0.5",
        lambda: client(drift_factor=0.5),
        "ValueError",
        "drift_factor must be in [0, 0.5)",
    ),
    (
        "config",
        "drift_factor=-0.1",
        lambda: client(drift_factor=-0.1),
        "ValueError",
        "drift_factor",
    ),
    (
        "config",
        "drift_factor=nan",
        lambda: client(drift_factor=math.nan),
        "ValueError",
        "drift_factor",
    ),
    (
        "config",
        "key_prefix of 513 bytes",
        lambda: client(key_prefix="p" * 513),
        "ValueError",
        "key_prefix",
    ),
    (
        "config",
        "unknown keyword tiemout=1",
        lambda: client(tiemout=1),
        "TypeError",
        "tiemout",
    ),
    ("url", 'url ""', lambda: hiredlock.Client(""), "ValueError", "url"),
    (
        "url",
        'url "http://x"',
        lambda: hiredlock.Client("http://x"),
        "ValueError",
        "scheme must be redis:// or unix://",
    ),
    (
        "url",
        'url "redis://h:99999"',
        lambda: hiredlock.Client("redis://h:99999"),
        "ValueError",
        "port",
    ),
    (
        "url",
        'url "redis://h:abc"',
        lambda: hiredlock.Client("redis://h:abc"),
        "ValueError",
        "port",
    ),
    (
        "url",
        'url "redis://:@h"',
        lambda: hiredlock.Client("redis://:@h"),
        "ValueError",
        "empty password",
    ),
    (
        "url",
        'url "redis://h/x"',
        lambda: hiredlock.Client("redis://h/x"),
        "ValueError",
        "database",
    ),
    (
        "url",
        'url "unix://"',
        lambda: hiredlock.Client("unix://"),
        "ValueError",
        "absolute",
    ),
    (
        "url",
        'url "redis://[::1"',
        lambda: hiredlock.Client("redis://[::1"),
        "ValueError",
        "url",
    ),
    (
        "url",
        'url "redis://a\\0b"',
        lambda: hiredlock.Client("redis://a\0b"),
        "ValueError",
        "NUL",
    ),
    (
        "url",
        'url "redis://h:6379/0%"',
        lambda: hiredlock.Client("redis://h:6379/0%"),
        "ValueError",
        "url",
    ),
    ("type", "urls=5", lambda: hiredlock.Client(5), "TypeError", "urls"),
    ("type", "urls=[5]", lambda: hiredlock.Client([5]), "TypeError", "urls"),
    (
        "type",
        "urls=b'redis://h'",
        lambda: hiredlock.Client(b"redis://h"),
        "TypeError",
        "urls",
    ),
    ("type", "key_prefix=5", lambda: client(key_prefix=5), "TypeError", "key_prefix"),
    (
        "type",
        "Lock(client=None)",
        lambda: hiredlock.Lock(None, "x"),
        "TypeError",
        "client",
    ),
    (
        "state",
        "release() without acquire",
        lambda: lock().release(),
        "NotOwned",
        "not held",
    ),
    (
        "state",
        "release() twice",
        lambda: released_then(lambda lk: lk.release()),
        "NotOwned",
        "not held",
    ),
    (
        "state",
        "extend() after release",
        lambda: released_then(lambda lk: lk.extend()),
        "NotOwned",
        "not held",
    ),
    (
        "state",
        "acquire(blocking=False) on a held object",
        lambda: held_then(
            lambda lk: (lk.acquire(blocking=False), lk.release())[0], "bad:h"
        ),
        "returns",
        "False",
    ),
    (
        "state",
        "calls in a fork() child (inherited client)",
        after_fork,
        "returns",
        "child acquired and released: True",
    ),
    (
        "state",
        "release after the fork() child released it",
        held_after_fork,
        "NotOwned",
        "not owned",
    ),
    (
        "server",
        "OOM (maxmemory 1)",
        lambda: acquire_on(E["HRL_BAD_OOM"]),
        "LockError",
        "server error: 0 of 1 masters answered (1 needed)",
    ),
    (
        "server",
        "READONLY (a replica)",
        lambda: acquire_on(E["HRL_BAD_RO"]),
        "LockError",
        "READONLY",
    ),
    (
        "server",
        "BUSY (a script runs)",
        lambda: acquire_on(E["HRL_BAD_BUSY"]),
        "LockError",
        "BUSY",
    ),
    (
        "server",
        "LOADING (scripted reply)",
        lambda: acquire_on(E["HRL_BAD_LOADING"]),
        "LockError",
        "LOADING",
    ),
    (
        "server",
        "NOAUTH (no password given)",
        lambda: acquire_on(E["HRL_BAD_NOAUTH"]),
        "ConnectionError",
        "authentication failed",
    ),
    (
        "server",
        "WRONGPASS",
        lambda: acquire_on(E["HRL_BAD_WRONGPASS"]),
        "ConnectionError",
        "WRONGPASS",
    ),
    (
        "server",
        "WRONGTYPE: the name holds a list (acquire)",
        wrongtype_acquire,
        "returns",
        "False",
    ),
    (
        "server",
        "WRONGTYPE: the key became a list (release)",
        wrongtype_release,
        "NotOwned",
        "not owned",
    ),
    (
        "network",
        "connection refused",
        lambda: acquire_on(E["HRL_BAD_REFUSED"]),
        "ConnectionError",
        "connection refused",
    ),
    (
        "network",
        "connection reset",
        lambda: acquire_on(E["HRL_BAD_RESET"]),
        "ConnectionError",
        "reset",
    ),
    (
        "network",
        "unix socket that does not exist",
        lambda: acquire_on(E["HRL_BAD_MISSING_SOCK"]),
        "ConnectionError",
        "no such file or directory",
    ),
]


def run(row):
    category, label, fn, kind, frag = row
    try:
        value = fn()
        # "ok": accepted (the value does not matter); "returns": its value does.
        got_kind = "returns" if kind == "returns" else "ok"
        text = value if isinstance(value, str) else repr(value)
    except BaseException as e:  # every outcome is recorded
        got_kind, text = type(e).__name__, str(e)
    return {
        "category": category,
        "input": label,
        "expected": kind + (f": {frag}" if frag else ""),
        "got": "accepted" if got_kind == "ok" else f"{got_kind}: {text}",
        "as_expected": got_kind == kind and frag in text,
    }


def main():
    rows = [run(r) for r in ROWS]
    bad = [r for r in rows if not r["as_expected"]]
    for r in bad:
        print(
            f"bad inputs (python): NOT as expected: {r['input']}: "
            f"want {r['expected']}, got {r['got']}"
        )
    with open(sys.argv[1], "w") as f:
        json.dump({"runtime": "python", "rows": rows}, f, indent=1)
    print(f"bad inputs (python): {len(rows) - len(bad)} of {len(rows)} as expected")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
