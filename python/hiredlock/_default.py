"""The default client, made on first use from the environment."""

from __future__ import annotations

import os
import threading
from typing import Callable, TypeVar

from ._client import DEFAULT_TTL, Client, Name, OnLost
from ._lock import Lock, synchronized_by

F = TypeVar("F", bound=Callable[..., object])

DEFAULT_URL = "redis://127.0.0.1:6379"

_lock = threading.Lock()
_client: Client | None = None


def urls_from_env() -> list[str]:
    """The masters of a default client: HIREDLOCK_URLS, HIREDLOCK_URL, or
    the local default."""
    for var in ("HIREDLOCK_URLS", "HIREDLOCK_URL"):
        value = os.environ.get(var, "")
        urls = [url.strip() for url in value.split(",") if url.strip()]
        if urls:
            return urls
    return [DEFAULT_URL]


def default_client() -> Client:
    """The client :func:`lock` and :func:`synchronized` use.

    Made on first use from ``HIREDLOCK_URLS`` (comma separated), else
    ``HIREDLOCK_URL``, else ``redis://127.0.0.1:6379``.
    """
    global _client
    with _lock:
        if _client is None:
            _client = Client(urls_from_env())
        return _client


def set_default_client(client: Client | None) -> None:
    """Replace the default client; ``None`` reads the environment again on
    next use."""
    global _client
    if client is not None and not isinstance(client, Client):
        raise TypeError(
            f"client must be a hiredlock.Client or None, not {type(client).__name__}"
        )
    with _lock:
        _client = client


def lock(
    name: Name,
    ttl: float = DEFAULT_TTL,
    *,
    timeout: float = -1,
    blocking: bool = True,
    auto_renew: bool | None = None,
    max_hold: float | None = None,
    on_lost: OnLost = None,
    fenced: bool | None = None,
    sync_replicas: int | None = None,
    sync_aof: bool | None = None,
) -> Lock:
    """A :class:`Lock` on the default client; see :meth:`Client.lock`."""
    return default_client().lock(
        name,
        ttl,
        timeout=timeout,
        blocking=blocking,
        auto_renew=auto_renew,
        max_hold=max_hold,
        on_lost=on_lost,
        fenced=fenced,
        sync_replicas=sync_replicas,
        sync_aof=sync_aof,
    )


def synchronized(
    name: Name,
    ttl: float = DEFAULT_TTL,
    *,
    timeout: float = -1,
    blocking: bool = True,
    auto_renew: bool | None = None,
    max_hold: float | None = None,
    fenced: bool | None = None,
    sync_replicas: int | None = None,
    sync_aof: bool | None = None,
) -> Callable[[F], F]:
    """Decorator running every call under ``name`` on the default client.

    The client is looked up at each call, so the environment may be set up
    after the decorated function is defined.
    """
    return synchronized_by(
        lambda: lock(
            name,
            ttl,
            timeout=timeout,
            blocking=blocking,
            auto_renew=auto_renew,
            max_hold=max_hold,
            fenced=fenced,
            sync_replicas=sync_replicas,
            sync_aof=sync_aof,
        )
    )
