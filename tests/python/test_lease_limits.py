"""A lease's limits, kept in time: a loss is signalled before another
client can take the lock (no renewal round outlasts the validity it is
meant to keep), and max_hold bounds the hold even when it is shorter than
the TTL; in the sync API, asyncio (on_lost and cancel_on_lost) and
``hiredlock run``.

The holder reaches its master through a proxy (tests/reliability's) that
is blackholed right after the acquire, while another client, connected
directly, tries to take the lock every half millisecond. With TTL 3 s and
a per-master timeout of 0.3 s the renewals time out at due, +0.6 s, +1.2 s
and +1.8 s, the last one 0.2 s before the validity ends: left its full
timeout, it would end 0.1 s past the validity, after the keys (which live
drift_factor x TTL + 2 ms = 62 ms longer) expired and the other client
took the lock.
"""

from __future__ import annotations

import asyncio
import sys
import threading
import time
from pathlib import Path

import pytest

import hiredlock
import hiredlock.asyncio as hla

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "reliability"))
from hrlrel.proxy import Proxy

CUT_OFF = {"timeout": 0.3, "drift_factor": 0.02, "connect_timeout": 1.0}
TTL = 3.0


@pytest.fixture
def proxy(servers1, tmp_path):
    p = Proxy([("127.0.0.1", servers1.ports[0])], str(tmp_path))
    yield p
    p.stop()


def first_acquire(url: str, name: str, stop: threading.Event) -> float | None:
    """When another client (direct) first got the lock, polling."""
    lk = hiredlock.Client(url, **CUT_OFF).lock(name, 5)
    while not stop.is_set():
        if lk.acquire(blocking=False):
            when = time.monotonic()
            lk.release()
            return when
        time.sleep(0.0005)
    return None


class Other(threading.Thread):
    """Polls in a thread of its own; .at is when it got the lock."""

    def __init__(self, url: str, name: str) -> None:
        super().__init__(daemon=True)
        self.url, self.name = url, name
        self.stop = threading.Event()
        self.at: float | None = None

    def run(self) -> None:
        self.at = first_acquire(self.url, self.name, self.stop)


def test_on_lost_comes_before_another_client_acquires(servers1, proxy, name):
    lost_at: list[float] = []
    done = threading.Event()

    def on_lost(lock):
        lost_at.append(time.monotonic())
        done.set()

    client = hiredlock.Client(proxy.urls[0], **CUT_OFF)
    lk = client.lock(name, TTL, auto_renew=True, on_lost=on_lost)
    assert lk.acquire(blocking=False)
    proxy.set(1, "blackhole")
    until = time.monotonic() + lk.validity
    other = Other(servers1.urls[0], name)
    other.start()
    other.join(10)
    assert done.wait(5)
    assert other.at is not None
    assert lost_at[0] < other.at, (
        f"on_lost at +{(lost_at[0] - until) * 1000:.1f} ms, another client "
        f"acquired at +{(other.at - until) * 1000:.1f} ms (validity end = 0)"
    )
    assert lk.lost and not lk.locked()


@pytest.mark.parametrize("cancel", [False, True], ids=["on_lost", "cancel_on_lost"])
def test_asyncio_loss_comes_before_another_client_acquires(
    servers1, proxy, name, cancel
):
    async def main() -> tuple[float, float | None]:
        lost_at: list[float] = []
        client = hla.Client(proxy.urls[0], **CUT_OFF)
        lk = client.lock(
            name,
            TTL,
            auto_renew=True,
            on_lost=None if cancel else (lambda lock: lost_at.append(time.monotonic())),
            cancel_on_lost=cancel,
        )
        ready = asyncio.Event()

        async def holder():
            assert await lk.acquire(blocking=False)
            proxy.set(1, "blackhole")
            ready.set()
            try:
                await asyncio.sleep(10)
            except asyncio.CancelledError:
                lost_at.append(time.monotonic())
                raise

        task = asyncio.create_task(holder())
        await ready.wait()
        other = Other(servers1.urls[0], name)
        other.start()
        await asyncio.wait({task}, timeout=10)
        await asyncio.get_running_loop().run_in_executor(None, other.join, 10)
        task.cancel()
        await client.close()
        return lost_at[0], other.at

    lost, other_at = asyncio.run(main())
    assert other_at is not None
    assert lost < other_at


def test_max_hold_shorter_than_ttl_bounds_the_hold(servers1, name):
    client = hiredlock.Client(servers1.urls, timeout=0.5)
    lost = threading.Event()
    lk = client.lock(name, 4, auto_renew=True, max_hold=1, on_lost=lambda _: lost.set())
    start = time.monotonic()
    assert lk.acquire(blocking=False)
    assert 0 < servers1.redis(1).pttl(name) <= 1000  # SET ... PX 1000
    assert lk.ttl == 4 and lk.validity <= 1
    assert lost.wait(3)
    assert time.monotonic() - start < 1.3
    with pytest.raises(hiredlock.LockLost, match=r"^lost: max_hold reached$"):
        lk.check()
    time.sleep(0.1)
    assert servers1.count(name) == 0  # the keys expired at max_hold


def test_max_hold_below_the_smallest_ttl_is_refused(servers1, name):
    client = hiredlock.Client(servers1.urls)
    with pytest.raises(
        ValueError,
        match=r"^invalid argument: max_hold must be 0 \(no cap\) or at least the "
        r"smallest TTL, 5 ms; got 3 ms$",
    ):
        client.lock(name, 4, auto_renew=True, max_hold=0.003)


def test_asyncio_max_hold_shorter_than_ttl_bounds_the_hold(servers1, name):
    async def main() -> float:
        client = hla.Client(servers1.urls, timeout=0.5)
        lk = client.lock(name, 4, auto_renew=True, max_hold=1, cancel_on_lost=True)
        start = time.monotonic()

        async def holder():
            async with lk:
                assert 0 < servers1.redis(1).pttl(name) <= 1000
                await asyncio.sleep(5)

        with pytest.raises(asyncio.CancelledError):
            await asyncio.create_task(holder())
        took = time.monotonic() - start
        await client.close()
        return took

    assert asyncio.run(main()) < 1.3


def test_max_hold_caps_an_explicit_extend(servers1, name):
    # max_hold is the longest the lease holds the lock, from its acquire:
    # the holder's own extend is cut to what it leaves, as a renewal is
    # (it used to extend to the full 3 s and report the loss late).
    client = hiredlock.Client(servers1.urls, timeout=0.5)
    lost = threading.Event()
    lk = client.lock(
        name, 1, auto_renew=True, max_hold=1.5, on_lost=lambda _: lost.set()
    )
    assert lk.acquire(blocking=False)
    lk.extend(3)
    assert 0 < servers1.redis(1).pttl(name) <= 1500
    assert 0 < lk.validity <= 1.5
    assert lk.ttl == 3  # the TTL it was asked for stays the lock's
    assert lost.wait(3)
    with pytest.raises(hiredlock.LockLost, match=r"^lost: max_hold reached$"):
        lk.check()
    with pytest.raises(hiredlock.LockLost, match=r"^lost: max_hold reached$"):
        lk.extend()


@pytest.mark.asyncio
async def test_max_hold_caps_an_explicit_extend_asyncio(servers1, name):
    client = hla.Client(servers1.urls, timeout=0.5)
    lk = client.lock(name, ttl=1, auto_renew=True, max_hold=1.5)
    assert await lk.acquire(blocking=False)
    await lk.extend(3)
    assert 0 < servers1.redis(1).pttl(name) <= 1500
    assert 0 < lk.validity <= 1.5
    await asyncio.sleep(lk.validity + 0.1)
    assert lk.lost
    with pytest.raises(hiredlock.LockLost, match=r"^lost: max_hold reached$"):
        lk.check()
    await client.close()
