"""The Python bad-input table, part 1: lock names, TTLs and timeouts (rows
as described in __init__.py)."""

from __future__ import annotations

import math

from . import NONE, NOWHERE, OK


def nowhere():
    """A client on a URL nothing answers: these calls must fail first."""
    import hiredlock

    return hiredlock.Client(NOWHERE)


def name_stored(x, name):
    lk = x.lock(name, ttl=5)
    ok = lk.acquire(blocking=False)
    there = x.inspect().exists(lk.key)
    lk.release()
    return f"acquired={ok}, key of {len(lk.key)} bytes stored={bool(there)}"


def sibling_name(name):
    """A lock whose key is another lock's sibling (key_prefix "doc:")."""
    import hiredlock

    return hiredlock.Client(NOWHERE, key_prefix="doc:").lock(name)


def extend_unheld(ttl):
    return nowhere().lock("n").extend(ttl)


SIZE = "^invalid argument: name must be 1 to 512 bytes, got {}$"
TTL_RANGE = (
    "^invalid argument: ttl must be between 0\\.005 and 2147483\\.647 seconds, {}$"
)
TTL_NAN = "^invalid argument: ttl must be a number of seconds, got nan$"
TTL_TYPE = "^ttl must be a number of seconds \\(int or float\\), not "
TIMEOUT = "^invalid argument: timeout must be "
NOT_WITH_BLOCKING = "^invalid argument: timeout cannot be given with blocking=False"

ROWS: list[tuple] = []
for bad in [None, 42, ["a"], 1.5, bytearray(b"x"), 5]:
    ROWS.append(
        (
            "name",
            f"name {bad!r}",
            lambda x, b=bad: nowhere().lock(b),
            "TypeError",
            "^name must be str or bytes, not ",
            NONE,
        )
    )
for bad, size, label in [
    ("", 0, 'name ""'),
    (b"", 0, 'name b""'),
    ("x" * 513, 513, "name of 513 chars"),
    (b"x" * 513, 513, "name of 513 bytes"),
    ("é" * 257, 514, "name of 257 x 'é' (514 UTF-8 bytes)"),
]:
    ROWS.append(
        ("name", label, lambda x, b=bad: nowhere().lock(b), "ValueError",
         SIZE.format(size), NONE)
    )  # fmt: skip
ROWS += [
    ("name", "name of 512 chars is kept whole",
     lambda x: nowhere().lock("x" * 512).name == "x" * 512, "returns", "True", NONE),
    ("name", "name of 256 x 'é' (512 bytes) is its key",
     lambda x: nowhere().lock("é" * 256).key == ("é" * 256).encode(), "returns",
     "True", NONE),
    ("name", "name with a prefix: 512 + prefix of 10",
     lambda x: x.client(key_prefix="p" * 10).lock("x" * 512), "ok", "", OK),
    ("name", 'name "a\\0b" (embedded NUL)', lambda x: name_stored(x, "bad:a\0b"),
     "returns", "acquired=True, key of 7 bytes stored=True", OK),
    ("name", "name b'\\xff\\xfe' (invalid UTF-8)",
     lambda x: name_stored(x, b"bad:\xff\xfe"), "returns", "acquired=True", OK),
    ("name", 'name "a{doc:a}:queue", key_prefix "doc:" (a\'s queue key)',
     lambda x: sibling_name("a{doc:a}:queue"), "ValueError",
     "^invalid argument: name must not make another lock's queue key \\(key_prefix "
     "\\+ name is a sibling key: docs/DESIGN\\.md, section 3\\)$", NONE),
    ("name", 'name b"b{doc:b}:fence", key_prefix "doc:" (b\'s counter)',
     lambda x: sibling_name(b"b{doc:b}:fence"), "ValueError",
     "another lock's fence key", NONE),
    ("name", "name '\\ud800' (lone surrogate)", lambda x: x.lock("\ud800"),
     "UnicodeEncodeError", "surrogates not allowed", OK),
    ("name", "name '\\udcff' (lone surrogate)", lambda x: nowhere().lock("\udcff"),
     "UnicodeEncodeError", "", NONE),
]  # fmt: skip

# TTLs out of range, for lock(ttl=) and for extend(ttl) (one message).
for bad, got in [
    (-1, "got -1"),
    (0, "got 0"),
    (0.0004, "got 0\\.0004"),
    (0.002, "got 0\\.002"),  # no room for a round: under the smallest, 5 ms
    (math.nan, None),
    (math.inf, "got inf"),
    (-math.inf, "got -inf"),
    (2147484, "got 2\\.14748e\\+06"),
    (10**400, "got inf"),
]:
    message = TTL_NAN if got is None else TTL_RANGE.format(got)
    ROWS += [
        ("ttl", f"lock(ttl={bad!r:.12})", lambda x, b=bad: nowhere().lock("n", ttl=b),
         "ValueError", message, NONE),
        ("ttl", f"extend({bad!r:.12}), not held", lambda x, b=bad: extend_unheld(b),
         "ValueError", message, NONE),
    ]  # fmt: skip
ROWS += [
    ("ttl", "ttl=1e12 (overflow)", lambda x: x.lock(ttl=1e12), "ValueError",
     "2147483.647", OK),
    ("ttl", "ttl=2**64", lambda x: x.lock(ttl=2**64), "ValueError", "ttl", OK),
]  # fmt: skip
for bad in ["10", True, [1], b"1"]:
    ROWS.append(
        ("ttl", f"lock(ttl={bad!r})", lambda x, b=bad: nowhere().lock("n", ttl=b),
         "TypeError", TTL_TYPE + type(bad).__name__, NONE)
    )  # fmt: skip
for bad in ["10", True, [1], b"1", "x"]:
    ROWS.append(
        ("ttl", f"extend(ttl={bad!r})", lambda x, b=bad: extend_unheld(b),
         "TypeError", TTL_TYPE, NONE)
    )  # fmt: skip
ROWS += [
    ("ttl", "ttl=None", lambda x: x.lock(ttl=None), "TypeError", "not NoneType", OK),
]  # fmt: skip

# Timeouts out of range, for acquire(timeout=) and lock(timeout=).
for bad in [-2, -0.5, math.nan, math.inf, 10**12, 10**400, -(10**400)]:
    ROWS += [
        ("timeout", f"acquire(timeout={bad!r:.12})",
         lambda x, b=bad: nowhere().lock("n").acquire(timeout=b), "ValueError",
         TIMEOUT, NONE),
        ("timeout", f"lock(timeout={bad!r:.12})",
         lambda x, b=bad: nowhere().lock("n", timeout=b), "ValueError", TIMEOUT,
         NONE),
    ]  # fmt: skip
for bad in ["1", None, True, [1]]:
    ROWS.append(
        ("timeout", f"acquire(True, {bad!r})",
         lambda x, b=bad: nowhere().lock("n").acquire(True, b), "TypeError",
         "^timeout must be a number of seconds", NONE)
    )  # fmt: skip
ROWS += [
    ("timeout", "acquire(timeout=1e10)", lambda x: x.lock().acquire(timeout=1e10),
     "ValueError", "2147483.647", OK),
    ("timeout", 'acquire(timeout="1")', lambda x: x.lock().acquire(timeout="1"),
     "TypeError", "timeout", OK),
    ("timeout", "acquire(blocking=False, timeout=1)",
     lambda x: nowhere().lock("n").acquire(blocking=False, timeout=1), "ValueError",
     NOT_WITH_BLOCKING, NONE),
    ("timeout", "acquire(False, 0)", lambda x: nowhere().lock("n").acquire(False, 0),
     "ValueError", NOT_WITH_BLOCKING, NONE),
    ("timeout", "lock(blocking=False, timeout=5)",
     lambda x: nowhere().lock("n", blocking=False, timeout=5), "ValueError",
     NOT_WITH_BLOCKING, NONE),
    # threading.Lock accepts the default -1 with blocking=False: it gets as
    # far as connecting.
    ("timeout", "acquire(blocking=False, timeout=-1)",
     lambda x: nowhere().lock("n").acquire(blocking=False, timeout=-1),
     "ConnectionError", "", NONE),
]  # fmt: skip
