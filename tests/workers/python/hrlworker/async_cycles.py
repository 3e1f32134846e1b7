"""The benchmark's asyncio cases: back-to-back uncontended acquire+release
cycles of hiredlock.asyncio (asyncio's own loop and uvloop) and of
redis.asyncio's Lock (with the hiredis parser when it is installed), by one
task or by 100 tasks at once, each on a lock of its own; and the asyncio
floor (raw.py: the cycle's two round trips over a Protocol). Each run is one
event loop; the results have the shape of cycles.run_case's.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable
from typing import Callable

# The same settings as the sync cases (cycles.py), which imports this module.
TTL = 30.0
SLOW_TIMEOUT = 1.0

Cycle = Callable[[], Awaitable[bool]]


async def _hiredlock(urls: list[str], n: int, tasks: int) -> list[Cycle]:
    import hiredlock.asyncio as hla

    client = hla.Client(urls[:n], connect_timeout=SLOW_TIMEOUT, timeout=SLOW_TIMEOUT)
    cycles = []
    for k in range(tasks):
        lk = client.lock(f"bench:async-n{n}:{k}", ttl=TTL)

        async def cycle(lk=lk) -> bool:
            if not await lk.acquire(blocking=False):
                return False
            await lk.release()
            return True

        cycles.append(cycle)
    return cycles


async def _raw(urls: list[str], n: int, tasks: int) -> list[Cycle]:
    from . import raw

    return [await raw.async_case(urls[0], buffered=True) for _ in range(tasks)]


async def _raw_proto(urls: list[str], n: int, tasks: int) -> list[Cycle]:
    from . import raw

    return [await raw.async_case(urls[0], buffered=False) for _ in range(tasks)]


async def _redis_asyncio(urls: list[str], n: int, tasks: int) -> list[Cycle]:
    import redis.asyncio as aioredis

    # Generous timeouts: 100 tasks opening their connections at once on
    # the benchmark's one pinned CPU must not fail the peer's run.
    conn = aioredis.Redis.from_url(
        urls[0],
        socket_timeout=SLOW_TIMEOUT,
        socket_connect_timeout=SLOW_TIMEOUT,
        max_connections=tasks + 1,
    )
    cycles = []
    for k in range(tasks):
        lk = conn.lock(f"bench:redis-asyncio:{k}", timeout=TTL)

        async def cycle(lk=lk) -> bool:
            if not await lk.acquire(blocking=False):
                return False
            await lk.release()
            return True

        cycles.append(cycle)
    return cycles


# case -> (library setup, masters, tasks, event loop)
CASES = {
    "py-async-n1": (_hiredlock, 1, 1, "asyncio"),
    "py-async-uv-n1": (_hiredlock, 1, 1, "uvloop"),
    "py-async-n5": (_hiredlock, 5, 1, "asyncio"),
    "py-async-c100-n1": (_hiredlock, 1, 100, "asyncio"),
    "py-async-uv-c100-n1": (_hiredlock, 1, 100, "uvloop"),
    "py-async-raw": (_raw, 1, 1, "asyncio"),  # the asyncio floor
    "py-async-raw-proto": (_raw_proto, 1, 1, "asyncio"),
    "redis-asyncio": (_redis_asyncio, 1, 1, "asyncio"),
    "redis-asyncio-c100": (_redis_asyncio, 1, 100, "asyncio"),
}


async def _run(urls: list[str], case: str, seconds: float, counted: int) -> dict:
    setup, n, tasks, _ = CASES[case]
    cycles = await setup(urls, n, tasks)
    await asyncio.gather(*(c() for c in cycles))  # connections opened first
    now_ns = time.perf_counter_ns
    lat: list[float] = []
    failed = 0
    cpu0 = time.process_time()
    start = now_ns()
    end = start + int(seconds * 1e9)

    async def loop(cycle: Cycle) -> None:
        nonlocal failed
        while (now_ns() < end or not lat) if counted == 0 else len(lat) < counted:
            t0 = now_ns()
            if not await cycle():
                failed += 1
            lat.append((now_ns() - t0) / 1000)

    await asyncio.gather(*(loop(c) for c in cycles))
    t = now_ns()
    return {
        "cycles": len(lat) - failed,
        "failed": failed,
        "elapsed": (t - start) / 1e9,
        "cpu_us": (time.process_time() - cpu0) * 1e6,
        # Per task, a cycle's time; with 100 tasks the rate is the figure.
        "lat": [round(x, 1) for x in lat],
        "tasks": tasks,
    }


def _loop_runner(kind: str):
    if kind == "uvloop":
        import uvloop

        return uvloop.run
    return asyncio.run


def run(urls: list[str], case: str, seconds: float) -> dict:
    """`run CASE SECONDS` for an asyncio case: one event loop per run."""
    return _loop_runner(CASES[case][3])(_run(urls, case, seconds, 0))


def count(urls: list[str], case: str, k: int) -> dict:
    """`count CASE K`: exactly k cycles (the profile phase)."""
    result = _loop_runner(CASES[case][3])(_run(urls, case, 0.0, k))
    return {"cycles": result["cycles"]}
