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

Exceptions are :mod:`hiredlock`'s own. Fencing with an asyncio store::

    await hiredlock.asyncio.fenced_write(store, "orders:42:fence", lk.fence,
                                         "SET", "orders:42", "paid")
"""

from .._core import (
    ConnectionError,
    LockError,
    LockLost,
    NotAcquired,
    NotOwned,
    PermissionDenied,
)
from .._fencing import FENCED_WRITE_SCRIPT, StaleFence
from ._client import Client
from ._default import default_client, lock, set_default_client, synchronized
from ._fencing import fenced_write
from ._lock import Lock

__all__ = [
    "FENCED_WRITE_SCRIPT",
    "Client",
    "ConnectionError",
    "Lock",
    "LockError",
    "LockLost",
    "NotAcquired",
    "NotOwned",
    "PermissionDenied",
    "StaleFence",
    "default_client",
    "fenced_write",
    "lock",
    "set_default_client",
    "synchronized",
]
