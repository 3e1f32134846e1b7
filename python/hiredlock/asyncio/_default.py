"""The default asyncio client, made from the environment on first use in
each event loop (its connections belong to that loop), and closed when
that loop shuts down; or one the caller set for the running loop
(set_default_client), which the caller owns and closes."""

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

# Per loop: its default client, and the async generators that close the
# clients made here from the environment when the loop shuts down its async
# generators (asyncio.run, uvloop.run, and loop.shutdown_asyncgens(), which
# every runner calls before closing a loop): one per client made, as one
# replaced by set_default_client() may still serve locks until then. Weak
# keys: a loop that is gone takes its entries with it.
_clients: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, Client] = (
    weakref.WeakKeyDictionary()
)
_closers: weakref.WeakKeyDictionary[
    asyncio.AbstractEventLoop, list[AsyncGenerator[None, None]]
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
        _closers.pop(loop, None)  # shutdown closes them all at once
        await client.close()


def _watch(loop: asyncio.AbstractEventLoop, client: Client) -> None:
    """Starts the closer in the running loop: its first step (to the
    yield) runs now, which registers it with the loop's async generator
    hooks; it needs no task."""
    closer = _close_at_shutdown(loop, client)
    step = closer.asend(None)
    with contextlib.suppress(StopIteration):  # suspended at its yield
        step.send(None)
    _closers.setdefault(loop, []).append(closer)


def default_client() -> Client:
    """The running loop's default client: ``HIREDLOCK_URLS`` (comma
    separated), else ``HIREDLOCK_URL``, else ``redis://127.0.0.1:6379``, as
    for :func:`hiredlock.default_client`. It is closed when the loop shuts
    down (at the end of ``asyncio.run``). :func:`set_default_client` sets
    another one for the running loop."""
    loop = asyncio.get_running_loop()
    client = _clients.get(loop)
    if client is None:
        client = _clients[loop] = Client(urls_from_env())
        _watch(loop, client)
    return client


def set_default_client(client: Client | None) -> None:
    """Replace the running loop's default client (a client with options of
    its own: ``timeout``, ``connect_timeout``, ...), as
    :func:`hiredlock.set_default_client` does for the sync API; ``None``
    reads the environment again on next use. Only the running loop's: a
    client's connections belong to one loop, so one bound to another loop
    raises the second-event-loop ``RuntimeError`` here. The caller owns the
    client it sets (it is not closed with the loop); one replaced that was
    made from the environment is still closed when the loop shuts down."""
    if client is not None and not isinstance(client, Client):
        raise TypeError(
            "client must be a hiredlock.asyncio.Client or None, "
            f"not {type(client).__name__}"
        )
    loop = asyncio.get_running_loop()
    if client is None:
        _clients.pop(loop, None)
        return
    client._driver.bind()  # this loop's from now on, or refused
    _clients[loop] = client


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
