"""The Python suite's own fixtures; the Redis ones (servers1, servers5,
servers, fresh5, name, TOLERANT) come from tests/fixtures/pytest_redis.py,
shared with tests/interop and tests/nginx.

Every Redis server these tests touch is started by the shared launcher
(with --owner, so a crashed pytest still has its servers reaped); there is
no second way to start Redis. Servers inspects them through their unix
sockets with redis-py, independently of the code under test.
"""

from __future__ import annotations

import asyncio
import signal
import subprocess
import sys
from pathlib import Path

import pytest
import uvloop

# Ctrl-C is part of what these tests test (KeyboardInterrupt in this process
# and in the Pythons they start). A process started in the background by a
# non-interactive shell inherits SIGINT ignored, and Python then installs no
# handler of its own, in itself or in its children: install it here, so the
# children start with SIGINT at its default and Python's handler in them.
signal.signal(signal.SIGINT, signal.default_int_handler)

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests" / "fixtures"))

# servers1, servers5, servers, fresh5, name: the fixtures every suite shares.
pytest_plugins = ["pytest_redis"]


def pytest_asyncio_loop_factories(config, item):
    """Every async test runs under asyncio's own event loop and under
    uvloop (pytest-asyncio's hook)."""
    return {"asyncio": asyncio.new_event_loop, "uvloop": uvloop.new_event_loop}


@pytest.fixture
def client(servers):
    from pytest_redis import TOLERANT  # loaded by pytest_plugins above

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
