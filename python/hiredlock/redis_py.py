"""redis-py's Lock API over hiredlock: switch with one argument.

::

    import redis
    from hiredlock.redis_py import Lock

    r = redis.Redis(host="10.0.0.1", password="secret")
    with r.lock("reports:nightly", timeout=30, blocking_timeout=5,
                lock_class=Lock):
        ...

:class:`Lock` (for ``redis.Redis``, ``Sentinel.master_for(...)`` and
``redis.cluster.RedisCluster``) and :class:`AsyncLock` (for
``redis.asyncio``) take redis-py's arguments with redis-py's meanings
(``timeout`` is the TTL, ``blocking_timeout`` the wait,
``extend(additional_time, replace_ttl=False)`` adds, ``locked()`` and
``owned()`` ask Redis) and raise redis-py's exceptions (``LockError``,
``LockNotOwnedError``, ``redis.exceptions.ConnectionError``). The lock
itself is hiredlock's: the same key, hiredlock's tokens and scripts, a
waiter woken by the release instead of polling every ``sleep`` seconds, a
fence when asked (``fenced=True``). Connection settings come from the
redis-py client (host, port, database, credentials, unix socket, TLS,
Sentinel, Cluster); locks of clients configured alike share one
hiredlock client.

Where redis-py is unsafe hiredlock's rule wins (docs/MIGRATING.md):
``timeout=None`` (redis-py: a key without a TTL, held forever by a crashed
holder) is a managed lease of ``lease_ttl`` seconds renewed while held,
and ``token=`` is refused.
"""

from __future__ import annotations

import logging
from types import TracebackType
from typing import Any, Literal

from . import _core
from ._client import Client
from ._lock import Lock as _Lock
from ._redis_py_common import (
    EXIT_WARNING,
    EXTEND_NO_TIMEOUT,
    EXTEND_NOT_OWNED,
    EXTEND_UNLOCKED,
    NOT_ACQUIRED,
    REACQUIRE_NO_TIMEOUT,
    REACQUIRE_NOT_OWNED,
    REACQUIRE_UNLOCKED,
    RELEASE_NOT_OWNED,
    RELEASE_UNLOCKED,
    TOKEN_REFUSED,
    ClientCache,
    LockArgs,
    LockError,
    client_options,
    extend_ttl,
    lock_error,
    translate,
    wait_of,
)
from .asyncio._redis_py import AsyncLock

__all__ = ["AsyncLock", "Lock", "configure"]

logger = logging.getLogger(__name__)

_clients = ClientCache(Client)


def configure(**options: Any) -> None:
    """Options of :class:`hiredlock.Client` (``timeout``, ``connect_timeout``,
    ``retry_delay``, ``fenced``, ...) for every hiredlock client this module
    makes from a redis-py client's settings, from now on; they win over
    what the redis-py client says. Checked here; ``configure()`` with none
    goes back to hiredlock's defaults. ``key_prefix`` is refused: the key
    must stay the one redis-py writes."""
    if "key_prefix" in options:
        raise TypeError("configure() takes no key_prefix: the key is redis-py's")
    Client("redis://127.0.0.1", **options)  # refuses a bad option now
    client_options.clear()
    client_options.update(options)


def client_for(redis: Any) -> Client:
    """The hiredlock client this module's locks use for a redis-py client:
    one per distinct configuration, made on first use."""
    return _clients.get(redis)


class Lock(LockArgs):
    """redis-py's ``Lock`` over hiredlock; give it to ``Redis.lock(...,
    lock_class=Lock)`` or make it as redis-py's: ``Lock(redis, name,
    timeout=None, sleep=0.1, blocking=True, blocking_timeout=None,
    thread_local=True, raise_on_release_error=True)``.

    ``timeout`` is the lock's TTL in seconds; ``None`` (or 0) makes it a
    managed lease of ``lease_ttl`` seconds, renewed while held, which
    expires ``lease_ttl`` after its holder died instead of never.
    ``blocking_timeout`` bounds the wait (``None``: until acquired).
    ``sleep`` is accepted and unused: waiters are woken by the release
    (and try again at least every ``retry_delay`` of the client when the
    holder publishes nothing). With ``fenced=True`` every hold takes a
    fencing token, :attr:`fence`. Give those two keyword-only arguments
    through ``functools.partial(Lock, fenced=True)`` as the ``lock_class``.
    """

    def _bind(self) -> None:
        self._client = client_for(self.redis)
        self._lock()  # checks the name and TTL now, as hiredlock does

    def _lock(self) -> _Lock:
        """This thread's (or, without thread_local, the one) hiredlock lock."""
        hold = self.local
        if hold.lock is None:
            hold.lock = _Lock(
                self._client,
                self._key,
                self._ttl,
                auto_renew=self._lease,
                fenced=self.fenced,
            )
        return hold.lock

    def __enter__(self) -> Lock:
        if self.acquire():
            return self
        raise lock_error(LockError, NOT_ACQUIRED, self.name)

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc_value: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        try:
            self.release()
        except LockError:
            if self.raise_on_release_error:
                raise
            logger.warning(EXIT_WARNING)

    def acquire(
        self,
        sleep: float | None = None,
        blocking: bool | None = None,
        blocking_timeout: float | None = None,
        token: Any = None,
    ) -> bool:
        """Takes the lock: True once held, False when others held it for
        the whole wait (``blocking=False``: one attempt). ``sleep`` is
        unused (a release wakes the waiter); ``token`` is refused."""
        if token is not None:
            raise lock_error(LockError, TOKEN_REFUSED, self.name)
        if blocking is None:
            blocking = self.blocking
        if blocking_timeout is None:
            blocking_timeout = self.blocking_timeout
        lock = self._lock()
        try:
            got = lock.acquire(*wait_of(blocking, blocking_timeout))
        except _core.LockError as err:
            raise translate(err, self.name, NOT_ACQUIRED) from err
        if got:
            self.local.held(lock.token)
        return got

    def locked(self) -> bool:
        """Whether anyone holds the lock: asks Redis, as redis-py does."""
        return self.redis.get(self._key) is not None

    def owned(self) -> bool:
        """Whether this lock (this thread's hold) holds it: asks Redis."""
        stored = self.redis.get(self._key)
        if isinstance(stored, str):  # decode_responses=True
            stored = stored.encode()
        token = self.local.token
        return token is not None and stored == token

    def release(self) -> None:
        """Releases the lock (or hands it to the first waiter). Raises
        LockError when this thread holds nothing, LockNotOwnedError when it
        was lost (expired, taken), ConnectionError when too few masters
        answered: then the hold is kept, and release() again finishes it."""
        hold = self.local
        if hold.token is None:
            raise lock_error(LockError, RELEASE_UNLOCKED, self.name)
        try:
            hold.lock.release()
        except _core.ConnectionError as err:
            raise translate(err, self.name, RELEASE_NOT_OWNED) from err
        except _core.LockError as err:
            hold.ended()
            raise translate(err, self.name, RELEASE_NOT_OWNED) from err
        hold.ended()

    def extend(
        self, additional_time: float, replace_ttl: bool = False
    ) -> Literal[True]:
        """Adds ``additional_time`` seconds to what is left of the lock's
        time (``replace_ttl=True``: sets it to that)."""
        self._check_held(EXTEND_UNLOCKED, EXTEND_NO_TIMEOUT)
        lock = self.local.lock
        ttl = extend_ttl(lock.validity, additional_time, replace_ttl)
        return self._extend(lock, ttl, EXTEND_NOT_OWNED)

    def reacquire(self) -> Literal[True]:
        """Resets the lock's TTL to ``timeout``."""
        self._check_held(REACQUIRE_UNLOCKED, REACQUIRE_NO_TIMEOUT)
        return self._extend(self.local.lock, self.timeout, REACQUIRE_NOT_OWNED)

    def _check_held(self, unlocked: str, no_timeout: str) -> None:
        if self.local.token is None:
            raise lock_error(LockError, unlocked, self.name)
        if self._lease:
            # As redis-py; the lease renews itself.
            raise lock_error(LockError, no_timeout, self.name)

    def _extend(self, lock: _Lock, ttl: float, not_owned: str) -> Literal[True]:
        try:
            lock.extend(ttl)
        except _core.LockError as err:
            raise translate(err, self.name, not_owned) from err
        return True

    @property
    def fence(self) -> int | None:
        """The fencing token of this thread's hold (``fenced=True``), else
        None; see :attr:`hiredlock.Lock.fence`."""
        lock = self.local.lock
        return None if lock is None or self.local.token is None else lock.fence

    @property
    def validity(self) -> float:
        """Seconds this thread's hold is still safely held (0.0 when not)."""
        lock = self.local.lock
        return 0.0 if lock is None else lock.validity

    def __repr__(self) -> str:
        return (
            f"<hiredlock.redis_py.Lock name={self.name!r} "
            f"{'lease' if self._lease else f'timeout={self.timeout!r}'}>"
        )
