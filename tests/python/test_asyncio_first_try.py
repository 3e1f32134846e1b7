"""A burst of tasks acquiring one name in one event loop: the first try goes
alone, and the others send theirs once it is over (Driver._first_try, the
rule of the cosocket driver's first_try.lua), so the winner's reply is read
before the loop runs everyone else's try. Counted in commands the master
ran before the first acquire returned, not timed: without the rule every
task's try is out before the loop reads the first reply."""

from __future__ import annotations

import asyncio

import pytest

import hiredlock.asyncio as hla

N = 10


def commands(r) -> int:
    """Commands the master ran so far, the INFO asking not counted."""
    return sum(
        v["calls"] for k, v in r.info("commandstats").items() if k != "cmdstat_info"
    )


async def burst(fresh3, name: str, **acquire) -> tuple[int, list[bool]]:
    """N tasks of one client acquire name at once, each releasing what it
    got: (commands the master ran when the first acquire returned, what
    each acquire returned)."""
    r = fresh3.redis(1)
    client = hla.Client(fresh3.urls[:1], connect_timeout=2.0, timeout=2.0)
    before = commands(r)
    seen: list[int] = []

    async def one() -> bool:
        lk = client.lock(name, ttl=30)
        ok = await lk.acquire(**acquire)
        if not seen:
            seen.append(commands(r) - before)  # blocks the loop: exact
        if ok:
            await lk.release()
        return ok

    try:
        got = await asyncio.gather(*(one() for _ in range(N)))
    finally:
        await client.close()
    return seen[0], got


@pytest.mark.asyncio
async def test_the_first_try_of_a_burst_is_answered_before_the_others_go(fresh3, name):
    ran, got = await burst(fresh3, name, timeout=10)
    assert got == [True] * N
    # the first try's connection and command; N and more when every
    # task's try went out first
    assert 1 <= ran < N


@pytest.mark.asyncio
async def test_acquires_without_a_wait_go_at_once(fresh3, name):
    ran, got = await burst(fresh3, name, blocking=False)
    assert got.count(True) >= 1
    assert ran >= N


@pytest.mark.asyncio
async def test_a_parked_waiter_cancelled_leaves_no_key_and_the_others_go_on(
    fresh3, name
):
    """The first try hangs on a paused master; a waiter parked behind it is
    cancelled: it still ends as a cancelled acquire does (its own round, at
    most, then CancelledError), and the first try and another waiter get
    the lock in turn once the master is back."""
    client = hla.Client(fresh3.urls[:1], connect_timeout=2.0, timeout=2.0)
    first, parked, other = (client.lock(name, ttl=30) for _ in range(3))
    assert await first.acquire(blocking=False)  # a connection, idle now
    await first.release()
    fresh3.pause(1)
    try:
        t_first = asyncio.create_task(first.acquire(timeout=10))
        await asyncio.sleep(0.05)  # its try is out, unanswered
        t_parked = asyncio.create_task(parked.acquire(timeout=10))
        t_other = asyncio.create_task(other.acquire(timeout=10))
        await asyncio.sleep(0.1)
        assert not t_parked.done() and not t_other.done()
        t_parked.cancel()
    finally:
        fresh3.resume(1)
    with pytest.raises(asyncio.CancelledError):
        await t_parked
    assert not parked.locked()
    assert await t_first
    await first.release()
    assert await t_other
    await other.release()
    await client.close()
    assert fresh3.count(name) == 0


@pytest.mark.asyncio
async def test_a_parked_waiter_waits_no_longer_than_its_wait_or_a_round(fresh3, name):
    """A first try that never says it is over (planted: an operation's own
    always does, in its finally) holds a waiter back no longer than the
    waiter's own wait, nor than a round can last (connect_timeout +
    timeout); then it tries, and gets the free lock."""
    client = hla.Client(fresh3.urls[:1], connect_timeout=0.2, timeout=0.2)
    loop = asyncio.get_running_loop()
    for wait, parks in ((0.3, 0.3), (-1, 0.4)):
        client._driver._first_tries[name] = loop.create_future()
        lk = client.lock(name, ttl=30)
        began = loop.time()
        # parked for good, it would never return: 10 s says so
        assert await asyncio.wait_for(lk.acquire(timeout=wait), 10)
        took = loop.time() - began
        await lk.release()
        # Less a millisecond: uvloop's timers run on its millisecond clock,
        # and the difference of two loop.time() readings can come out a
        # rounding error short (0.39999999999417923 for 0.4).
        assert took >= parks - 0.001, (wait, took)
        client._driver._first_tries.clear()
    await client.close()
