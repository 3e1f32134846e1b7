"""A pytest plugin for redis-py's own lock tests run against
hiredlock.redis_py (tests/redis_py/run.sh): it checks that the tests run
against the redis-py they come with, and marks the tests hiredlock fails
on purpose as strict expected failures, each with why and with the
exception it must fail with, so any other failure, and any of these that
starts to pass, fails the suite. docs/MIGRATING.md lists the same tests.
"""

from __future__ import annotations

import os

import pytest

NO_TTL = (
    "pins a lock without a TTL (r.ttl() == -1): hiredlock makes timeout=None "
    "a managed lease, a TTL renewed while held, so a crashed holder's lock "
    "expires instead of lasting forever"
)
TOKEN = (
    "acquires with token='test': hiredlock refuses a caller's token (every "
    "hold gets a fresh random one; two holders sharing one would both be "
    "handed the lock from the waiting queue); the test pins no TTL as well"
)
CLOCK = (
    "pins redis-py's polling schedule on a patched clock (redis.lock's "
    "mod_time, redis.asyncio.lock's asyncio): hiredlock's waiter does not "
    "poll every `sleep` seconds, it is woken by the release, on its own clock"
)

# test (its node id without parameters) -> (why, the exception it fails with)
EXPECTED = {
    "tests/test_lock.py::TestLock::test_lock": (NO_TTL, AssertionError),
    "tests/test_lock.py::TestLock::test_lock_token": (TOKEN, "LockError"),
    "tests/test_lock.py::TestLock::test_lock_token_thread_local_false": (
        TOKEN,
        "LockError",
    ),
    "tests/test_lock.py::TestLock::test_blocking_timeout": (CLOCK, AssertionError),
    "tests/test_lock.py::TestLock::test_context_manager_blocking_timeout": (
        CLOCK,
        AssertionError,
    ),
    "tests/test_asyncio/test_lock.py::TestLock::test_lock": (NO_TTL, AssertionError),
    "tests/test_asyncio/test_lock.py::TestLock::test_lock_token": (TOKEN, "LockError"),
    "tests/test_asyncio/test_lock.py::TestLock::test_lock_token_thread_local_false": (
        TOKEN,
        "LockError",
    ),
    "tests/test_asyncio/test_lock.py::TestLock::test_blocking_timeout": (
        CLOCK,
        AssertionError,
    ),
}


def pytest_configure(config):
    import redis

    want = os.environ["HRL_REDIS_PY_VERSION"]
    here = os.path.realpath(os.path.join(str(config.rootpath), "redis"))
    if redis.__version__ != want or not os.path.realpath(redis.__file__).startswith(
        here
    ):
        raise pytest.UsageError(
            f"redis-py {redis.__version__} from {redis.__file__} is imported, "
            f"not the sdist's {want} (from {here})"
        )
    # Deadlines for a loaded machine (those of tests/fixtures' TOLERANT):
    # these tests judge redis-py's Lock semantics, not per-master deadlines,
    # and hiredlock's 50 ms default, which their clients' settings leave in
    # place, missed under load (the asyncio ones through AsyncLock).
    import hiredlock.redis_py

    hiredlock.redis_py.configure(connect_timeout=1.0, timeout=0.5)


def pytest_collection_modifyitems(config, items):
    from redis.exceptions import LockError

    kinds = {"LockError": LockError}
    seen = set()
    for item in items:
        test = item.nodeid.split("[")[0]
        if test in EXPECTED:
            why, raises = EXPECTED[test]
            raises = kinds.get(raises, raises)
            item.add_marker(pytest.mark.xfail(reason=why, strict=True, raises=raises))
            seen.add(test)
    missing = set(EXPECTED) - seen
    if missing:
        raise pytest.UsageError(f"expected failures not collected: {sorted(missing)}")
