"""pytest fixtures over the shared Redis launcher, tests/fixtures/redis-fixture.

Every Redis server these tests touch is started by that launcher (with
--owner, so a crashed pytest still has its servers reaped); there is no
second way to start Redis. Servers are inspected through their unix sockets
with redis-py, independently of the code under test.
"""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
import redis

REPO = Path(__file__).resolve().parents[2]
LAUNCHER = os.environ.get("HRL_FIXTURE") or str(
    REPO / "tests" / "fixtures" / "redis-fixture"
)


# Per-master deadlines for tests that are not about deadlines: 5 servers, 8
# processes or 16 threads share 2 cores here, and a starved server can miss
# the default 50 ms (which then fails the call at once, by design).
TOLERANT = {
    "connect_timeout": 1.0,
    "timeout": 0.5,
    "retry_delay": 0.01,
    "retry_jitter": 0.005,
}


class Servers:
    """N Redis masters from the launcher, with fault injection and
    inspection helpers. Nodes are numbered from 1, as the launcher does."""

    def __init__(self, n: int, *options: str) -> None:
        out = subprocess.run(
            [LAUNCHER, "start", "-n", str(n), "--owner", str(os.getpid()), *options],
            check=True,
            capture_output=True,
            text=True,
        ).stdout
        env = {}
        for line in out.splitlines():
            key, _, value = line.partition("=")
            env[key] = value.strip("\"'")
        self.n = n
        self.dir = env["HRL_FIXTURE_DIR"]
        self.urls = env["HRL_FIXTURE_URLS"].split(",")
        self.unix_urls = env["HRL_FIXTURE_UNIX_URLS"].split(",")
        self.ports = [int(p) for p in env["HRL_FIXTURE_PORTS"].split()]
        self.password = None
        if "--password" in options:
            self.password = options[options.index("--password") + 1]
        self._conns: dict[int, redis.Redis] = {}

    def _ctl(self, verb: str, i: int, *extra: str) -> None:
        self._conns.pop(i, None)
        subprocess.run([LAUNCHER, verb, self.dir, str(i), *extra], check=True)

    def kill(self, i: int) -> None:
        self._ctl("kill", i)

    def pause(self, i: int) -> None:
        self._ctl("pause", i)

    def resume(self, i: int) -> None:
        self._ctl("resume", i)

    def restart(self, i: int) -> None:
        self._ctl("restart", i)

    def redis(self, i: int) -> redis.Redis:
        """An inspection connection to node i (unix socket)."""
        if i not in self._conns:
            self._conns[i] = redis.Redis(
                unix_socket_path=self.unix_urls[i - 1][len("unix://") :],
                password=self.password,
                socket_timeout=5,
            )
        return self._conns[i]

    def get(self, i: int, key: str | bytes) -> bytes | None:
        return self.redis(i).get(key)

    def values(self, key: str | bytes) -> list[bytes | None]:
        """The key's value on every node, in node order."""
        return [self.get(i, key) for i in range(1, self.n + 1)]

    def count(self, key: str | bytes, alive: list[int] | None = None) -> int:
        """On how many nodes (of `alive`, default all) the key exists."""
        nodes = alive or range(1, self.n + 1)
        return sum(self.redis(i).exists(key) for i in nodes)

    def stop(self) -> None:
        for conn in self._conns.values():
            conn.close()
        self._conns.clear()
        subprocess.run([LAUNCHER, "stop", self.dir], check=True)


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
