"""hiredlock for asyncio: the same core, algorithm, messages and wire format
as :mod:`hiredlock`, driven over asyncio transports (no threads, no
executor, nothing that blocks the event loop)::

    import hiredlock.asyncio

    async with hiredlock.asyncio.lock("reports:nightly", ttl=30):
        ...

    client = hiredlock.asyncio.Client(["redis://a:6379", "redis://b:6379",
                                       "redis://c:6379"])
    lk = client.lock("res", ttl=10)
    if await lk.acquire(timeout=5):
        try:
            ...
        finally:
            await lk.release()

Exceptions are :mod:`hiredlock`'s own.
"""

from .._core import (
    ConnectionError,
    LockError,
    LockLost,
    NotAcquired,
    NotOwned,
    PermissionDenied,
)
from ._client import Client
from ._default import default_client, lock
from ._lock import Lock

__all__ = [
    "Client",
    "ConnectionError",
    "Lock",
    "LockError",
    "LockLost",
    "NotAcquired",
    "NotOwned",
    "PermissionDenied",
    "default_client",
    "lock",
]
