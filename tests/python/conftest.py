"""pytest fixtures over the shared Redis launcher, tests/fixtures/redis-fixture.

Every Redis server these tests touch is started by that launcher (with
--owner, so a crashed pytest still has its servers reaped); there is no
second way to start Redis. Servers (tests/fixtures/redis_fixture.py, shared
with the other Python suites) inspects them through their unix sockets with
redis-py, independently of the code under test.
"""

from __future__ import annotations

import subprocess
import sys
import uuid
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests" / "fixtures"))

from redis_fixture import Servers  # noqa: E402  (the path above)


# Per-master deadlines for tests that are not about deadlines: 5 servers, 8
# processes or 16 threads share 2 cores here, and a starved server can miss
# the default 50 ms (which then fails the call at once, by design).
TOLERANT = {
    "connect_timeout": 1.0,
    "timeout": 0.5,
    "retry_delay": 0.01,
    "retry_jitter": 0.005,
}


@pytest.fixture(scope="session")
def servers1():
    s = Servers(1)
    yield s
    s.stop()


@pytest.fixture(scope="session")
def servers5():
    s = Servers(5)
    yield s
    s.stop()


@pytest.fixture(params=[1, 5], ids=["n1", "n5"])
def servers(request):
    """The shared 1-master and 5-master sets: tests run on both."""
    return request.getfixturevalue(f"servers{request.param}")


@pytest.fixture
def fresh5():
    """Five masters of its own, for a test that kills or pauses some."""
    s = Servers(5)
    yield s
    s.stop()


@pytest.fixture
def name(request) -> str:
    """A lock name no other test uses."""
    return f"t:{request.node.name}:{uuid.uuid4().hex[:8]}"


@pytest.fixture
def client(servers):
    import hiredlock

    return hiredlock.Client(servers.urls, **TOLERANT)


def run_python(
    code: str, *args: str, timeout: float = 60
) -> subprocess.CompletedProcess:
    """Runs code in a fresh interpreter (the installed hiredlock)."""
    return subprocess.run(
        [sys.executable, "-c", code, *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd="/",
    )
