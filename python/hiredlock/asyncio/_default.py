"""The default asyncio client, made from the environment on first use in
each event loop (its connections belong to that loop)."""

from __future__ import annotations

import asyncio
import weakref
from typing import Any

from .._client import DEFAULT_TTL, Name
from .._default import urls_from_env
from ._client import Client
from ._lock import Lock

_clients: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, Client] = (
    weakref.WeakKeyDictionary()
)


def default_client() -> Client:
    """The running loop's default client: ``HIREDLOCK_URLS`` (comma
    separated), else ``HIREDLOCK_URL``, else ``redis://127.0.0.1:6379``, as
    for :func:`hiredlock.default_client`."""
    loop = asyncio.get_running_loop()
    client = _clients.get(loop)
    if client is None:
        client = _clients[loop] = Client(urls_from_env())
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
