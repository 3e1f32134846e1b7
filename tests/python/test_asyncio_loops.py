"""hiredlock.asyncio across event loops: the default client of a loop is
closed with it (no file descriptors or "unclosed transport" left per
asyncio.run), a lease nobody refers to any more stops being renewed (as a
sync one does), and a Client used from a second event loop says so instead
of timing out."""

from __future__ import annotations

import asyncio
import gc
import os
import threading
import time
import warnings

import pytest
from pytest_redis import TOLERANT

import hiredlock
import hiredlock.asyncio as hla


def open_fds() -> int:
    return len(os.listdir("/proc/self/fd"))


def test_the_default_client_is_closed_with_its_loop(servers1, name, monkeypatch):
    monkeypatch.setenv("HIREDLOCK_URL", servers1.urls[0])
    monkeypatch.delenv("HIREDLOCK_URLS", raising=False)

    # A wait, not timeout=0: the default client made from the environment
    # has the default per-master timeout (50 ms; set_default_client() gives
    # a loop one with its own), and a loaded machine's Redis missed it,
    # failing the single attempt. What this
    # counts is what each loop leaves open, not how fast a round is; a
    # wait that subscribes leaves its subscriber connection to be closed too.
    async def once() -> None:
        async with hla.lock(name, 5, timeout=10):
            pass

    asyncio.run(once())  # the first run may open what stays (imports...)
    gc.collect()
    before = open_fds()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for _ in range(20):
            asyncio.run(once())
        gc.collect()
    assert open_fds() - before <= 1, f"{open_fds() - before} descriptors left"
    unclosed = [str(w.message) for w in caught if "unclosed" in str(w.message)]
    assert unclosed == []


def test_a_dropped_lease_is_not_renewed(servers1, name):
    async def main() -> None:
        client = hla.Client(servers1.urls, **TOLERANT)
        lk = client.lock(name, 0.6, auto_renew=True)
        assert await lk.acquire(blocking=False)
        del lk
        gc.collect()
        await asyncio.sleep(1.2)  # two TTLs: renewed, it would still be there
        assert servers1.count(name) == 0
        # A lease still referred to is renewed all along.
        kept = client.lock(name, 0.6, auto_renew=True)
        assert await kept.acquire(blocking=False)
        await asyncio.sleep(1.2)
        assert servers1.count(name) == 1 and kept.locked()
        await kept.release()
        await client.close()

    asyncio.run(main())


def test_a_client_from_a_second_loop_says_so(servers1, name):
    client = hla.Client(servers1.urls, **TOLERANT)

    async def use() -> None:
        async with client.lock(name, 5, timeout=0):
            pass

    asyncio.run(use())
    start = time.monotonic()
    with pytest.raises(RuntimeError, match=r"second event loop") as caught:
        asyncio.run(use())
    # At once, not after a per-master timeout: under half of one. (It was
    # 0.05 s, which a loaded machine's asyncio.run() start-up could pass.)
    assert time.monotonic() - start < TOLERANT["timeout"] / 2
    assert "close()" in str(caught.value)
    assert servers1.count(name) == 0

    # Closed in the first loop, it serves the next.
    async def use_and_close() -> None:
        await use()
        await client.close()

    other = hla.Client(servers1.urls, **TOLERANT)
    client = other
    asyncio.run(use_and_close())
    asyncio.run(use_and_close())


def test_inspect_from_a_second_loop_says_so_as_the_locks_do(servers1, name):
    """inspect() runs a round over the client's connections as the locks'
    operations do, so from a second loop it gets their error, not a round
    on transports whose loop is gone."""
    client = hla.Client(servers1.urls, **TOLERANT)

    async def use() -> None:
        async with client.lock(name, 5, timeout=0):
            pass

    async def inspect() -> None:
        await client.inspect(name)

    asyncio.run(use())
    errors = []
    for second in (use, inspect):
        with pytest.raises(RuntimeError, match=r"second event loop") as caught:
            asyncio.run(second())
        errors.append(str(caught.value))
    assert errors[1] == errors[0]
    assert servers1.count(name) == 0


def test_set_default_client_configures_the_running_loops_default(
    servers1, name, monkeypatch
):
    """hiredlock.asyncio.lock(..., timeout=0) through a default client of
    one's own (a longer per-master timeout than the 50 ms a default made
    from the environment has): it rides out a master paused for 0.3 s, and
    the environment's default comes back with None and in the next loop."""
    monkeypatch.setenv("HIREDLOCK_URL", "redis://127.0.0.1:1")
    monkeypatch.delenv("HIREDLOCK_URLS", raising=False)
    mine = hla.Client(servers1.urls, timeout=2, connect_timeout=2)

    async def main() -> None:
        hla.set_default_client(mine)
        assert hla.default_client() is mine
        async with hla.lock(name, 5, timeout=0) as lk:  # connects
            assert lk.client is mine
            assert servers1.get(1, name) == lk.token.encode()
        servers1.pause(1)
        resume = threading.Timer(0.3, servers1.resume, (1,))
        resume.start()
        try:
            async with hla.lock(name, 5, timeout=0) as lk:
                assert servers1.get(1, name) == lk.token.encode()
        finally:
            resume.join()

        @hla.synchronized(name, 5, timeout=0)
        async def job() -> int:
            return servers1.count(name)

        assert await job() == 1
        hla.set_default_client(None)  # the environment's again
        assert hla.default_client() is not mine
        assert hla.default_client().masters == ("127.0.0.1:1",)
        await mine.close()

    asyncio.run(main())
    assert servers1.count(name) == 0

    async def next_loop() -> tuple[str, ...]:
        return hla.default_client().masters

    assert asyncio.run(next_loop()) == ("127.0.0.1:1",)


def test_set_default_client_refuses_what_it_cannot_use(servers1):
    """The sync set_default_client's checks and words, plus the asyncio
    client's own: one running loop, the client's."""

    async def set_to(client) -> None:
        hla.set_default_client(client)

    with pytest.raises(
        TypeError,
        match=r"^client must be a hiredlock\.asyncio\.Client or None, not str$",
    ):
        asyncio.run(set_to("redis://x"))
    sync = hiredlock.Client(servers1.urls)
    with pytest.raises(TypeError, match=r"or None, not Client$"):
        asyncio.run(set_to(sync))
    with pytest.raises(RuntimeError, match="no running event loop"):
        hla.set_default_client(hla.Client(servers1.urls))
    used = hla.Client(servers1.urls, **TOLERANT)

    async def use() -> None:
        async with used.lock("set-default-refused", 5, timeout=0):
            pass

    asyncio.run(use())
    with pytest.raises(RuntimeError, match=r"second event loop"):
        asyncio.run(set_to(used))  # bound to the first loop: said at once


def test_a_forked_child_does_not_use_its_parents_loop(servers1, name):
    """The driver's check of the running loop (no asyncio call while the
    bound loop runs in this thread) still sees a fork: in the child, the
    parent's loop is not running (asyncio says so), and a lock's operation
    raises at once instead of writing on the parent's connections."""

    async def main() -> None:
        client = hla.Client(servers1.urls, **TOLERANT)
        lk = client.lock(name, 5)
        assert await lk.acquire(blocking=False)  # binds the loop, connects
        await lk.release()
        pid = os.fork()
        if pid == 0:  # the child: nothing of the parent's may run here
            code = 3
            try:
                await lk.acquire(blocking=False)
                code = 1
            except RuntimeError as err:
                code = 0 if "no running event loop" in str(err) else 2
            finally:
                os._exit(code)
        _, status = os.waitpid(pid, 0)
        assert os.waitstatus_to_exitcode(status) == 0
        assert servers1.count(name) == 0
        assert await lk.acquire(blocking=False)  # the parent's still work
        await lk.release()
        await client.close()

    asyncio.run(main())
