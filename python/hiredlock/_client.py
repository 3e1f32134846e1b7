"""The Client class: the C client plus lock() and synchronized()."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Optional, TypeVar

from . import _core, _from_redis
from ._holds import RWLock, SyncSemaphore
from ._inspect import Inspection, Name
from ._lock import Lock, synchronized_by

F = TypeVar("F", bound=Callable[..., object])
OnLost = Optional[Callable[[Lock], object]]

DEFAULT_TTL: float = _core.OPTIONS["ttl"]  # the core's option table


class Client(_core.Client):
    """The Redis masters locks are taken on.

    ``Client(urls, *, connect_timeout=0.1, timeout=0.05, retry_delay=0.2,
    retry_jitter=0.1, drift_factor=0.01, key_prefix="", auto_renew=False,
    max_hold=0, fenced=False, sync_replicas=0, sync_aof=False,
    ssl_ca_certs=None, ssl_ca_path=None, ssl_certfile=None, ssl_keyfile=None,
    ssl_cert_reqs="required", ssl_check_hostname=True, restart_guard=0)``

    ``urls`` is one URL or a sequence of N URLs of independent masters
    (``redis://[[user]:password@]host[:port][/db]``,
    ``rediss://...[?ssl_option=value&...]`` for TLS, or
    ``unix://[[user]:password@]/path[?db=N]``); a lock is held when a quorum
    (N/2 + 1) granted it. Times are in seconds. The ``ssl_*`` options (named
    as redis-py names them) apply to ``rediss://`` masters, whose URL query
    may set them per master; the server's certificate is verified and must
    name the host unless told otherwise. No connection is made here:
    masters are connected on first use. A Client may be shared by threads
    and survives ``fork()`` (the child opens its own connections).
    ``auto_renew`` and ``max_hold`` are the defaults of its locks (see
    :class:`Lock`); its auto-renewed locks share one renewer thread.
    ``fenced=True`` makes its locks fenced unless a lock says otherwise;
    ``sync_replicas`` and ``sync_aof`` are its locks' defaults too (a
    master's URL may set its own: ``?sync_replicas=N``). ``restart_guard``
    (seconds): a master whose server started less than that long ago gives
    no vote (docs/SAFETY.md, "Failover").

    ``urls`` may also be (or hold) redis-py clients: see :meth:`from_redis`.
    """

    __module__ = "hiredlock"
    __slots__ = ()

    def __new__(cls, urls: Any, **options: Any) -> Client:
        return super().__new__(cls, _from_redis.urls_of(urls), **options)

    @classmethod
    def from_redis(cls, redis: Any, **options: Any) -> Client:
        """A client on the server a redis-py client talks to (or, given a
        sequence of them, on those N masters), with its settings: host and
        port or unix socket, database, username and password, TLS
        (``rediss://`` with its ``ssl_*`` settings), a Sentinel-managed
        primary (``Sentinel.master_for``) or a Redis Cluster
        (``RedisCluster``), sync or asyncio. ``options`` are
        :class:`Client`'s (timeouts, ``key_prefix``, ...). Settings hiredlock
        cannot honour the same way (an ``ssl_ca_data``, a token credential
        provider, a replica) raise ``ValueError`` naming them. No connection
        is made. ``Client(redis_client)`` is the same.
        """
        many = isinstance(redis, (list, tuple))
        for r in redis if many else [redis]:
            if not _from_redis.is_redis_client(r):
                raise TypeError(
                    f"from_redis() expects a redis-py client, not {type(r).__name__}"
                )
        return cls(redis, **options)

    if TYPE_CHECKING:

        def lock(
            self,
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
            """A :class:`Lock` on ``name`` (str or bytes), not yet held.

            ``ttl`` is how long the lock lives in Redis, in seconds. ``timeout``
            and ``blocking`` bound the wait of a ``with`` block (-1: forever;
            ``blocking=False``: one attempt). ``auto_renew`` makes it a managed
            lease, renewed while held (at most ``max_hold`` seconds; 0: no cap),
            and ``on_lost(lock)`` is called when its hold is lost; ``fenced=True``
            takes a fencing token with every acquire (:attr:`Lock.fence`).
            ``sync_replicas=N``: a master's vote for an acquire or extend counts
            only once N of its replicas have the write (``WAIT``), and with
            ``sync_aof=True`` once it is fsynced to the AOF (``WAITAOF``).
            ``owner`` writes a label beside the lock with every acquire, shown
            by :meth:`inspect` and ``hiredlock status`` (``True``: this host and
            process id; ``"%h"`` and ``"%p"`` in a label are those too).
            ``None`` takes the client's defaults.
            """

            ...

    else:
        # Client.lock is C (_core.Client._lock, making the class
        # _lock registered): a `with client.lock(name):` makes a Lock per
        # block, and a Python frame with ten keyword defaults cost more
        # than the Lock itself.
        lock = _core.Client._lock

    def rwlock(
        self,
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
    ) -> RWLock[Lock]:
        """A read-write lock on ``name``: its ``read()`` and ``write()``
        make lock objects with these settings (those of :meth:`lock`), one
        hold each. Bad settings raise here."""
        settings = dict(
            ttl=ttl,
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
        auto_renew: bool | None = None,
        max_hold: float | None = None,
        on_lost: OnLost = None,
        fenced: bool | None = None,
        sync_replicas: int | None = None,
        sync_aof: bool | None = None,
        owner: str | bool | None = None,
    ) -> SyncSemaphore:
        """A counting semaphore on ``name`` with ``permits`` permits (1 to
        100000): its ``acquire()`` returns a held permit, its ``permit()``
        one not yet held, each a lock object with these settings (those of
        :meth:`lock`). Bad settings raise here."""
        settings = dict(
            ttl=ttl,
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
        sem = SyncSemaphore(self._hold, name, permits, settings)
        sem.permit()  # check the settings now
        return sem

    def _hold(self, name: Name, **settings: Any) -> Lock:
        return Lock(self, name, **settings)

    def inspect(self, name: Name) -> Inspection:  # type: ignore[override]
        """Who holds the lock ``name`` and who waits for it, as each master
        has it (its token, TTL, fence counter, owner label and waiting
        queue in order), and the quorum's view: :class:`Inspection`. Read
        only: no lock is taken and no key written. A master that does not
        answer leaves its entry unanswered (``ok`` False) rather than
        raising."""
        return Inspection.from_dict(super().inspect(name))

    def stats(self) -> dict[str, Any]:  # type: ignore[override]
        """The client's counters since it was made (docs/OPERATING.md):
        acquires by outcome (``acquired``, ``busy``, ``cancelled``,
        ``failed`` by reason), how long they took (``wait_bounds``,
        ``wait_buckets``, ``wait_sum``), ``handoffs``, ``renewals``,
        ``losses`` and each master's ``unreachable`` and ``errors``."""
        return super().stats()

    def synchronized(
        self,
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
        """Decorator: every call of the function runs under the lock ``name``.

        Raises :class:`NotAcquired` when a call cannot acquire in time and
        :class:`NotOwned` when the lock was lost before the call returned
        (:class:`LockLost`, a NotOwned, for an auto-renewed one).
        """

        def make() -> Lock:
            return self.lock(
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

        make()  # check the arguments now, at decoration time
        return synchronized_by(make)

    def __repr__(self) -> str:
        return (
            f"<{type(self).__module__}.{type(self).__qualname__} "
            f"masters={list(self.masters)!r} quorum={self.quorum}>"
        )
