"""The default client, made on first use from the environment."""

from __future__ import annotations

import os
import re
import threading
from typing import Callable, TypeVar

from ._client import DEFAULT_TTL, Client, Name, OnLost
from ._lock import Lock, synchronized_by

F = TypeVar("F", bound=Callable[..., object])

DEFAULT_URL = "redis://127.0.0.1:6379"

_lock = threading.Lock()
_client: Client | None = None


# A comma followed by a URL's scheme (RFC 3986: a letter, then letters,
# digits, "+", "-" or ".") and "://": where the next URL of a list begins.
_NEXT_URL = re.compile(r",(?=\s*[A-Za-z][A-Za-z0-9+.-]*://)")


def split_urls(text: str) -> list[str]:
    """The URLs of a comma-separated list, split only where a URL begins: a
    comma inside a URL (the seeds of redis+cluster://a,b,c and
    redis+sentinel://s1,s2/service, a password) stays in it."""
    urls = (url.strip().strip(",").strip() for url in _NEXT_URL.split(text))
    return [url for url in urls if url]


def urls_from_env() -> list[str]:
    """The masters of a default client: HIREDLOCK_URLS, HIREDLOCK_URL, or
    the local default."""
    for var in ("HIREDLOCK_URLS", "HIREDLOCK_URL"):
        urls = split_urls(os.environ.get(var, ""))
        if urls:
            return urls
    return [DEFAULT_URL]


def default_client() -> Client:
    """The client :func:`lock` and :func:`synchronized` use.

    Made on first use from ``HIREDLOCK_URLS`` (comma separated; a URL
    listing several addresses, ``redis+cluster://a,b,c``, stays one), else
    ``HIREDLOCK_URL``, else ``redis://127.0.0.1:6379``.
    """
    global _client
    client = _client  # set once; the lock only keeps two threads from both
    if client is not None:  # making it (a read of a global is atomic)
        return client
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
    owner: str | bool | None = None,
) -> Lock:
    """A :class:`Lock` on the default client; see :meth:`Client.lock`."""
    client = _client if _client is not None else default_client()
    if type(client) is not Client:  # a subclass may have its own lock()
        return client.lock(
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
            owner=owner,
        )
    # Client.lock's own call, without its frame (a Lock per `with` block).
    return Lock._make(
        client,
        name,
        ttl,
        timeout,
        blocking,
        on_lost,
        auto_renew,
        max_hold,
        sync_replicas,
        sync_aof,
        fenced,
        owner,
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
    owner: str | bool | None = None,
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
            owner=owner,
        )
    )
