"""The asyncio Client: the masters, their connections (owned by the event
loop that first used them), and lock()."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Callable

from .. import _core, _from_redis
from .._client import DEFAULT_TTL, Name
from .._holds import RWLock, Semaphore
from .._inspect import Inspection
from ._driver import Driver, Progress
from ._lock import A, Lock, synchronized_by
from ._renewer import Renewer


class Client:
    """The Redis masters locks are taken on, for asyncio code.

    ``Client(urls, *, connect_timeout=0.1, timeout=0.05, ...)``: the same
    URLs and options as :class:`hiredlock.Client` (``hiredlock.OPTIONS``),
    checked with the same messages. No connection is made here; masters are
    connected on first use, from the running event loop, which then owns
    the connections: use a client from one event loop. ``await
    client.close()`` (or ``async with client``) closes them. ``urls`` may
    also be (or hold) redis-py clients: see :meth:`from_redis`.
    """

    __slots__ = ("_core", "_driver", "_renewer")

    def __init__(self, urls: str | Sequence[str] | Any, **options: Any) -> None:
        self._core = _core.Client(_from_redis.urls_of(urls), **options)
        connect_timeout = options.get(
            "connect_timeout", _core.OPTIONS["connect_timeout"]
        )
        timeout = options.get("timeout", _core.OPTIONS["timeout"])
        self._driver = Driver(self._core, float(connect_timeout), float(timeout))
        self._renewer = Renewer(self._driver)

    @classmethod
    def from_redis(cls, redis: Any, **options: Any) -> Client:
        """A client with a redis-py client's connection settings, as
        :meth:`hiredlock.Client.from_redis` (which says what is taken and
        what is refused); ``options`` win over them."""
        if not _from_redis.is_redis_client(redis):
            raise TypeError(
                f"from_redis() expects a redis-py client, not {type(redis).__name__}"
            )
        return cls(redis, **options)

    @property
    def masters(self) -> tuple[str, ...]:
        """The masters, as 'host:port' or socket path (no credentials)."""
        return self._core.masters

    @property
    def quorum(self) -> int:
        """Masters needed for a decision: N/2 + 1."""
        return self._core.quorum

    def lock(
        self,
        name: Name,
        ttl: float = DEFAULT_TTL,
        *,
        timeout: float = -1,
        blocking: bool = True,
        auto_renew: bool | None = None,
        max_hold: float | None = None,
        on_lost: Callable[[Lock], object] | None = None,
        cancel_on_lost: bool = False,
        fenced: bool | None = None,
        sync_replicas: int | None = None,
        sync_aof: bool | None = None,
        owner: str | bool | None = None,
        **options: Any,
    ) -> Lock:
        """A :class:`Lock` on ``name``, not yet held; the arguments are
        those of :meth:`hiredlock.Client.lock`, and ``cancel_on_lost``
        (:class:`Lock`)."""
        if options:  # any other lock option: checked (and named) by Lock()
            given = {
                "auto_renew": auto_renew,
                "max_hold": max_hold,
                "fenced": fenced,
                "sync_replicas": sync_replicas,
                "sync_aof": sync_aof,
                "owner": owner,
            }
            for key, value in given.items():
                if value is not None:
                    options[key] = value
            return Lock(
                self,
                name,
                ttl,
                timeout=timeout,
                blocking=blocking,
                on_lost=on_lost,
                cancel_on_lost=cancel_on_lost,
                **options,
            )
        # Every argument by position (see Lock._make): `async with
        # client.lock(name):` makes a Lock per block.
        return Lock._make(
            self,
            name,
            ttl,
            timeout,
            blocking,
            on_lost,
            cancel_on_lost,
            auto_renew,
            max_hold,
            sync_replicas,
            sync_aof,
            fenced,
            owner,
        )

    def synchronized(
        self,
        name: Name,
        ttl: float = DEFAULT_TTL,
        *,
        timeout: float = -1,
        blocking: bool = True,
        **options: Any,
    ) -> Callable[[A], A]:
        """Decorator for an async function: every call's body runs under
        the lock ``name`` (``async with``); the arguments are those of
        :meth:`lock`. Raises :class:`hiredlock.NotAcquired` when a call
        cannot acquire in time."""

        def make() -> Lock:
            return self.lock(name, ttl, timeout=timeout, blocking=blocking, **options)

        make()  # check the arguments now, at decoration time
        return synchronized_by(make)

    async def inspect(self, name: Name) -> Inspection:
        """Who holds the lock ``name`` and who waits for it, as
        :meth:`hiredlock.Client.inspect` says it: the same read-only round,
        run over this client's connections."""
        core = _core.Lock(self._core, name)
        # From a second loop, the error the locks' operations give (before
        # the round begins), not a round on another loop's transports.
        loop = self._driver.bind()
        core._begin_inspect()
        await self._driver.operate(core, Progress(), False, loop, True)
        return Inspection.from_dict(core._inspection())

    def stats(self) -> dict[str, Any]:
        """The client's counters, as :meth:`hiredlock.Client.stats`."""
        return self._core.stats()

    def rwlock(
        self,
        name: Name,
        ttl: float = DEFAULT_TTL,
        *,
        timeout: float = -1,
        blocking: bool = True,
        **options: Any,
    ) -> RWLock[Lock]:
        """A read-write lock on ``name`` whose ``read()`` and ``write()``
        make asyncio locks, as :meth:`hiredlock.Client.rwlock`."""
        settings = dict(ttl=ttl, timeout=timeout, blocking=blocking, **options)
        rw: RWLock[Lock] = RWLock(self._hold, name, settings)
        rw.write()  # check the settings now
        return rw

    def semaphore(
        self,
        name: Name,
        permits: int,
        ttl: float = DEFAULT_TTL,
        *,
        timeout: float = -1,
        blocking: bool = True,
        **options: Any,
    ) -> AsyncSemaphore:
        """A counting semaphore on ``name`` whose permits are asyncio locks,
        as :meth:`hiredlock.Client.semaphore`; ``await sem.acquire()``."""
        settings = dict(ttl=ttl, timeout=timeout, blocking=blocking, **options)
        sem = AsyncSemaphore(self._hold, name, permits, settings)
        sem.permit()  # check the settings now
        return sem

    def _hold(self, name: Name, ttl: float, **settings: Any) -> Lock:
        return Lock(self, name, ttl, **settings)

    async def close(self) -> None:
        """Stops renewing leases and closes every connection (a held lock
        is not released: it expires with its TTL)."""
        await self._renewer.close()
        self._driver.close()

    async def __aenter__(self) -> Client:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()

    def __repr__(self) -> str:
        return (
            f"<hiredlock.asyncio.Client masters={list(self.masters)!r} "
            f"quorum={self.quorum}>"
        )


class AsyncSemaphore(Semaphore[Lock]):
    """The asyncio client's semaphore (see :class:`hiredlock.Semaphore`)."""

    __slots__ = ()

    async def acquire(self, blocking: bool = True, timeout: float = -1) -> Lock | None:
        """Takes a permit: the held permit (an asyncio lock), or None when
        none came free within ``timeout`` seconds, as
        :meth:`hiredlock.Semaphore.acquire`."""
        p = self.permit()
        return p if await p.acquire(blocking, timeout) else None
