"""hiredlock.redis_py.AsyncLock: redis-py's asyncio Lock API over
hiredlock.asyncio (the arguments, meanings and exceptions of
``redis.asyncio.lock.Lock``; see :mod:`hiredlock.redis_py`)."""

from __future__ import annotations

import asyncio
import logging
import threading
import weakref
from collections.abc import Awaitable
from types import TracebackType
from typing import Any, Literal

from .. import _core
from .._redis_py_common import (
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
    extend_ttl,
    is_not_held,
    lock_error,
    translate,
    wait_of,
)
from ._client import Client
from ._lock import Lock as _Lock

logger = logging.getLogger("hiredlock.redis_py")

# An asyncio client's connections belong to one event loop: one cache of
# clients per loop, gone with the loop.
_caches: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, ClientCache] = (
    weakref.WeakKeyDictionary()
)
_caches_mutex = threading.Lock()


def client_for(redis: Any) -> Client:
    """The running loop's hiredlock.asyncio client for a redis-py client's
    configuration, made on first use."""
    loop = asyncio.get_running_loop()
    with _caches_mutex:
        cache = _caches.get(loop)
        if cache is None:
            cache = _caches[loop] = ClientCache(Client)
    return cache.get(redis)


class AsyncLock(LockArgs):
    """redis-py's asyncio ``Lock`` over hiredlock.asyncio, for
    ``redis.asyncio.Redis.lock(..., lock_class=AsyncLock)``; the arguments
    and rules of :class:`hiredlock.redis_py.Lock`. A task cancelled while
    it acquires leaves no key behind; a cancelled ``release()`` keeps the
    token, and calling it again finishes (or confirms) the release."""

    def _bind(self) -> None:
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return  # checked by the first acquire, on its loop
        self._lock()  # checks the name and TTL now

    def _lock(self) -> _Lock:
        """The hold's hiredlock lock, on the running loop's client."""
        loop = asyncio.get_running_loop()
        hold = self.local
        if hold.lock is None or hold.loop() is not loop:
            hold.lock = _Lock(
                client_for(self.redis),
                self._key,
                self._ttl,
                auto_renew=self._lease,
                fenced=self.fenced,
            )
            hold.loop = weakref.ref(loop)
        return hold.lock

    async def __aenter__(self) -> AsyncLock:
        if await self.acquire():
            return self
        raise lock_error(LockError, NOT_ACQUIRED, self.name)

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc_value: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        try:
            await self.release()
        except LockError:
            if self.raise_on_release_error:
                raise
            logger.warning(EXIT_WARNING)

    async def acquire(
        self,
        blocking: bool | None = None,
        blocking_timeout: float | None = None,
        token: Any = None,
    ) -> bool:
        """Takes the lock: True once held, False when others held it for
        the whole wait; ``token`` is refused."""
        if token is not None:
            raise lock_error(LockError, TOKEN_REFUSED, self.name)
        if blocking is None:
            blocking = self.blocking
        if blocking_timeout is None:
            blocking_timeout = self.blocking_timeout
        lock = self._lock()
        try:
            got = await lock.acquire(*wait_of(blocking, blocking_timeout))
        except _core.LockError as err:
            raise translate(err, self.name, NOT_ACQUIRED) from err
        if got:
            self.local.held(lock.token)
        return got

    async def locked(self) -> bool:
        """Whether anyone holds the lock: asks Redis."""
        return await self.redis.get(self._key) is not None

    async def owned(self) -> bool:
        """Whether this lock holds it: asks Redis."""
        stored = await self.redis.get(self._key)
        if isinstance(stored, str):  # decode_responses=True
            stored = stored.encode()
        token = self.local.token
        return token is not None and stored == token

    async def release(self) -> None:
        """Releases the lock; see :meth:`hiredlock.redis_py.Lock.release`."""
        hold = self.local
        if hold.token is None:
            raise lock_error(LockError, RELEASE_UNLOCKED, self.name)
        try:
            await hold.lock.release()
        except asyncio.CancelledError:
            # The release ran to its end before the cancellation went on,
            # or not at all: keep the token, a retry tells which.
            hold.released_maybe = True
            raise
        except _core.ConnectionError as err:
            raise translate(err, self.name, RELEASE_NOT_OWNED) from err
        except _core.LockError as err:
            done = hold.released_maybe and is_not_held(err)
            hold.ended()
            if done:  # the cancelled release had finished it
                return
            raise translate(err, self.name, RELEASE_NOT_OWNED) from err
        hold.ended()

    def extend(
        self, additional_time: float, replace_ttl: bool = False
    ) -> Awaitable[Literal[True]]:
        """Adds ``additional_time`` seconds to what is left of the lock's
        time (``replace_ttl=True``: sets it to that)."""
        self._check_held(EXTEND_UNLOCKED, EXTEND_NO_TIMEOUT)
        lock = self.local.lock
        ttl = extend_ttl(lock.validity, additional_time, replace_ttl)
        return self._extend(lock, ttl, EXTEND_NOT_OWNED)

    def reacquire(self) -> Awaitable[Literal[True]]:
        """Resets the lock's TTL to ``timeout``."""
        self._check_held(REACQUIRE_UNLOCKED, REACQUIRE_NO_TIMEOUT)
        return self._extend(self.local.lock, self.timeout, REACQUIRE_NOT_OWNED)

    def _check_held(self, unlocked: str, no_timeout: str) -> None:
        if self.local.token is None:
            raise lock_error(LockError, unlocked, self.name)
        if self._lease:
            raise lock_error(LockError, no_timeout, self.name)

    async def _extend(self, lock: _Lock, ttl: float, not_owned: str) -> Literal[True]:
        try:
            await lock.extend(ttl)
        except _core.LockError as err:
            raise translate(err, self.name, not_owned) from err
        return True

    @property
    def fence(self) -> int | None:
        """The fencing token of the hold (``fenced=True``), else None."""
        lock = self.local.lock
        return None if lock is None or self.local.token is None else lock.fence

    @property
    def validity(self) -> float:
        """Seconds the hold is still safely held (0.0 when not)."""
        lock = self.local.lock
        return 0.0 if lock is None else lock.validity

    def __repr__(self) -> str:
        return (
            f"<hiredlock.redis_py.AsyncLock name={self.name!r} "
            f"{'lease' if self._lease else f'timeout={self.timeout!r}'}>"
        )
