"""hiredlock.asyncio's pool of connections and the replies a connection owes
(docs/DESIGN.md, "Owed replies"): a connection that missed a deadline serves
the next round of the lock whose replies it owes, so a master runs a lock's
commands in the order they were sent, as over the C driver's one connection
per master. Issue 32: given to any lock, a waiter's late step aside could
run after its own next try made on a faster connection, and hand the key
that try won to another waiter (tests/sim/regress/known-shared-pool-reorder.txt).
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import socket
import threading
import time

import pytest
from pytest_redis import TOLERANT

import hiredlock
import hiredlock.asyncio as hla

LINE = re.compile(rb"^\+\d+\.\d+ \[\d+ ([^\]]+)\] (.*)$")


class Monitor:
    """MONITOR on one master, read by a thread: the commands in the order
    the master ran them, each with the client address it came from."""

    def __init__(self, port: int) -> None:
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=10)
        self.sock.sendall(b"MONITOR\r\n")
        self.data = bytearray()
        while b"\r\n" not in self.data:  # +OK: it is on
            self.data += self.sock.recv(4096)
        self.sock.settimeout(None)
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    def _read(self) -> None:
        with contextlib.suppress(OSError):
            while chunk := self.sock.recv(65536):
                self.data += chunk

    def commands_with(self, word: str) -> list[tuple[bytes, bytes]]:
        """(client address, command) of every command naming word."""
        found = []
        for line in bytes(self.data).split(b"\r\n"):
            m = LINE.match(line)
            # (a script's own calls come from "lua": not a connection)
            if m and m.group(1) != b"lua" and f'"{word}"'.encode() in m.group(2):
                found.append((m.group(1), m.group(2)))
        return found

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self.sock.shutdown(socket.SHUT_RDWR)
        self.sock.close()
        self.thread.join(5)


async def _until(check, seconds: float = 10.0) -> None:
    deadline = time.monotonic() + seconds
    while not check():
        assert time.monotonic() < deadline, "timed out"
        await asyncio.sleep(0.01)


@pytest.mark.asyncio
async def test_a_waiters_next_try_follows_its_late_step_aside(fresh3, name):
    """A paused master makes a waiter's first try miss its deadline (its
    step aside goes behind it on that connection), and then another lock's
    round on the same client; the waiter's second try must go on the
    connection that owes its replies, not on the one the other lock left
    (the newest idle one, which it got before)."""
    url, port = fresh3.urls[0], fresh3.ports[0]
    holder = hiredlock.Client([url], **TOLERANT).lock(name, ttl=30)
    assert holder.acquire(blocking=False)
    client = hla.Client(
        [url], connect_timeout=1.0, timeout=0.2, retry_delay=0.3, retry_jitter=0.01
    )
    # Two connections in the pool: two rounds at once.
    a, b = client.lock(f"{name}:a"), client.lock(f"{name}:b")
    assert all(await asyncio.gather(a.acquire(False), b.acquire(False)))
    await asyncio.gather(a.release(), b.release())
    unreachable = lambda: client.stats()["masters"][0]["unreachable"]  # noqa: E731
    monitor = Monitor(port)
    waiter, other = client.lock(name, ttl=10), client.lock(f"{name}:other")
    fresh3.pause(1)
    try:
        waiting = asyncio.create_task(waiter.acquire(timeout=30))
        await asyncio.sleep(0.05)  # its first try is out, on one connection
        with contextlib.suppress(hiredlock.LockError):
            await other.acquire(blocking=False)  # out on the other one
        # The waiter's second try timed out too, still paused.
        missed = unreachable()
        await _until(lambda: unreachable() > missed)
    finally:
        fresh3.resume(1)
    holder.release()
    assert await asyncio.wait_for(waiting, 20)
    token = waiter.token
    await waiter.release()
    await client.close()
    await _until(lambda: len(monitor.commands_with(token)) >= 4)
    monitor.close()
    # The first try (SET NX), its late step aside ("a", the script in full)
    # and the second try ("t"): one connection.
    first = monitor.commands_with(token)[:3]
    assert first[0][1].startswith(b'"SET" '), first
    assert b' "a" ' in first[1][1] and b' "t" ' in first[2][1], first
    assert len({addr for addr, _ in first}) == 1, first
