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
can be reached (or the password is refused); :class:`PermissionDenied`
(also a :class:`PermissionError`) when the masters' ACL refuses a command
or key the lock needs; :class:`LockLost` (a :class:`NotOwned`) when the hold of an
auto-renewed lock was lost; :class:`StaleFence` when :func:`fenced_write`
refuses a write whose fence is older than one the resource has seen. Bad
arguments raise :class:`TypeError` / :class:`ValueError` naming the argument.

Read-write locks and semaphores (every hold a Lock, with its own token
and TTL)::

    rw = client.rwlock("catalog")
    with rw.read():   # many readers, or
        ...
    with rw.write():  # one writer; a waiting writer stops new readers
        ...
    with client.semaphore("api", 5).permit() as p:  # at most 5 at once
        ...

Fencing::

    lk = client.lock("orders:42", fenced=True)
    with lk:
        hiredlock.fenced_write(store, "orders:42:fence", lk.fence,
                               "SET", "orders:42", "paid")
"""

from . import _events  # noqa: F401  (the core's events to logging)
from ._client import Client
from ._core import (
    MASTERS_MAX,
    NAME_MAX,
    OPTIONS,
    ConnectionError,  # shadows the built-in on purpose: a subclass of it
    LockError,
    LockLost,
    NotAcquired,
    NotOwned,
    PermissionDenied,
    __version__,
)
from ._default import default_client, lock, set_default_client, synchronized
from ._fencing import FENCED_WRITE_SCRIPT, StaleFence, fenced_write
from ._holds import RWLock, Semaphore
from ._inspect import Hold, Inspection, MasterState, Waiter
from ._lock import Lock

__all__ = [
    "FENCED_WRITE_SCRIPT",
    "MASTERS_MAX",
    "NAME_MAX",
    "OPTIONS",
    "Client",
    "ConnectionError",
    "Hold",
    "Inspection",
    "Lock",
    "LockError",
    "LockLost",
    "MasterState",
    "NotAcquired",
    "NotOwned",
    "PermissionDenied",
    "RWLock",
    "Semaphore",
    "StaleFence",
    "Waiter",
    "__version__",
    "default_client",
    "fenced_write",
    "lock",
    "set_default_client",
    "synchronized",
]
