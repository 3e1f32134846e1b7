"""The default asyncio client, made from the environment on first use in
each event loop (its connections belong to that loop), and closed when
that loop shuts down."""

from __future__ import annotations

import asyncio
import contextlib
import weakref
from collections.abc import AsyncGenerator
from typing import Any, Callable

from .._client import DEFAULT_TTL, Name
from .._default import urls_from_env
from ._client import Client
from ._lock import A, Lock, synchronized_by

# Per loop: its default client, and the async generator that closes it when
# the loop shuts down its async generators (asyncio.run, uvloop.run, and
# loop.shutdown_asyncgens(), which every runner calls before closing a
# loop). Weak keys: a loop that is gone takes its entry with it.
_clients: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, Client] = (
    weakref.WeakKeyDictionary()
)
_closers: weakref.WeakKeyDictionary[
    asyncio.AbstractEventLoop, AsyncGenerator[None, None]
] = weakref.WeakKeyDictionary()


async def _close_at_shutdown(
    loop: asyncio.AbstractEventLoop, client: Client
) -> AsyncGenerator[None, None]:
    """Suspended at its yield for the life of the loop; the loop's
    shutdown_asyncgens() closes it, and with it the client (its renewer
    task and every connection), so nothing is left open per loop."""
    try:
        yield
    finally:
        if _clients.get(loop) is client:
            del _clients[loop]
        _closers.pop(loop, None)
        await client.close()


def _watch(loop: asyncio.AbstractEventLoop, client: Client) -> None:
    """Starts the closer in the running loop: its first step (to the
    yield) runs now, which registers it with the loop's async generator
    hooks; it needs no task."""
    closer = _close_at_shutdown(loop, client)
    step = closer.asend(None)
    with contextlib.suppress(StopIteration):  # suspended at its yield
        step.send(None)
    _closers[loop] = closer


def default_client() -> Client:
    """The running loop's default client: ``HIREDLOCK_URLS`` (comma
    separated), else ``HIREDLOCK_URL``, else ``redis://127.0.0.1:6379``, as
    for :func:`hiredlock.default_client`. It is closed when the loop shuts
    down (at the end of ``asyncio.run``)."""
    loop = asyncio.get_running_loop()
    client = _clients.get(loop)
    if client is None:
        client = _clients[loop] = Client(urls_from_env())
        _watch(loop, client)
    return client


def lock(
    name: Name,
    ttl: float = DEFAULT_TTL,
    *,
    timeout: float = -1,
    blocking: bool = True,
    **options: Any,
) -> Lock:
    """A :class:`Lock` on the running loop's default client."""
    return default_client().lock(
        name, ttl, timeout=timeout, blocking=blocking, **options
    )


def synchronized(
    name: Name,
    ttl: float = DEFAULT_TTL,
    *,
    timeout: float = -1,
    blocking: bool = True,
    **options: Any,
) -> Callable[[A], A]:
    """Decorator for an async function: every call's body runs under
    ``name`` on the running loop's default client (looked up at each call,
    so the environment may be set up after the function is defined)."""
    return synchronized_by(
        lambda: lock(name, ttl, timeout=timeout, blocking=blocking, **options)
    )
