"""hiredlock: distributed locks on Redis (Redlock), one C core for every runtime.

::

    import hiredlock

    with hiredlock.lock("reports:nightly", ttl=30):  # HIREDLOCK_URL(S)
        ...

    client = hiredlock.Client(["redis://a:6379", "redis://b:6379",
                               "redis://c:6379"])
    lk = client.lock("res", ttl=10)
    if lk.acquire(timeout=5):
        try:
            ...
        finally:
            lk.release()

Exceptions: :class:`LockError` is the base of every runtime failure;
:class:`NotAcquired` (also a :class:`TimeoutError`) when a ``with`` block or
a synchronized function cannot acquire in time; :class:`NotOwned` when
``release()``/``extend()`` find the lock no longer ours;
:class:`ConnectionError` (also the built-in one) when no quorum of masters
can be reached. Bad arguments raise :class:`TypeError` / :class:`ValueError`
naming the argument.
"""

from ._client import Client
from ._core import (
    MASTERS_MAX,
    NAME_MAX,
    OPTIONS,
    ConnectionError,  # shadows the built-in on purpose: a subclass of it
    LockError,
    NotAcquired,
    NotOwned,
    __version__,
)
from ._default import default_client, lock, set_default_client, synchronized
from ._lock import Lock

__all__ = [
    "MASTERS_MAX",
    "NAME_MAX",
    "OPTIONS",
    "Client",
    "ConnectionError",
    "Lock",
    "LockError",
    "NotAcquired",
    "NotOwned",
    "__version__",
    "default_client",
    "lock",
    "set_default_client",
    "synchronized",
]
