"""The asyncio Lock: the same algorithm, messages and wire format as the
sync one (the core's protocol, driven over asyncio transports)."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import inspect
from collections.abc import Awaitable, Coroutine
from types import TracebackType
from typing import TYPE_CHECKING, Any, Callable, TypeVar

from .. import _core
from .._lock import _name_of, exit_error
from ._driver import ACQUIRE, EXTEND, RELEASE, Progress

if TYPE_CHECKING:
    from ._client import Client


class Lock:
    """A named distributed lock for asyncio code; see
    :meth:`hiredlock.asyncio.Client.lock`.

    ``await acquire(blocking=True, timeout=-1)`` follows
    :class:`threading.Lock` (and the sync :class:`hiredlock.Lock`): it
    returns ``True`` when held and ``False`` when others held it for the
    whole wait. A task cancelled while acquiring leaves no key on any
    master: the round in flight finishes and a lock it got is released
    before the cancellation goes on.

    With ``auto_renew=True`` the lock is a managed lease, renewed by the
    client's renewer task; ``on_lost(lock)`` is called in the event loop
    when its hold is lost, and with ``cancel_on_lost=True`` the task that
    acquired it is cancelled too.
    """

    __slots__ = (
        "__weakref__",  # the renewer keeps leases weakly
        "_busy",
        "_cancel_on_lost",
        "_client",
        "_core",
        "_holder",
        "_on_lost",
        "_waiters",
    )

    def __init__(
        self,
        client: Client,
        name: str | bytes,
        ttl: float,
        *,
        timeout: float = -1,
        blocking: bool = True,
        on_lost: Callable[[Lock], object] | None = None,
        cancel_on_lost: bool = False,
        **options: Any,
    ) -> None:
        core = _core.Lock(
            client._core, name, ttl, timeout=timeout, blocking=blocking, **options
        )
        self._setup(client, core, on_lost, cancel_on_lost)

    @classmethod
    def _make(
        cls,
        client: Client,
        name: str | bytes,
        ttl: float,
        timeout: float,
        blocking: bool,
        on_lost: Callable[[Lock], object] | None,
        cancel_on_lost: bool,
        auto_renew: bool | None,
        max_hold: float | None,
        sync_replicas: int | None,
        sync_aof: bool | None,
        fenced: bool | None,
        owner: str | bool | None,
    ) -> Lock:
        """What Client.lock() calls, every argument by position, as the
        sync Client.lock() does (_core.Lock._make: the same checks and
        messages as Lock(), without the keyword dicts Lock(...) builds and
        splits, which cost more than the lock itself). A lock made per
        `async with` block pays it every time."""
        self = cls.__new__(cls)
        core = _core.Lock._make(
            client._core,
            name,
            ttl,
            timeout,
            blocking,
            None,  # on_lost is this object's (called in the event loop)
            auto_renew,
            max_hold,
            sync_replicas,
            sync_aof,
            fenced,
            owner,
        )
        self._setup(client, core, on_lost, cancel_on_lost)
        return self

    def _setup(
        self,
        client: Client,
        core: _core.Lock,
        on_lost: Callable[[Lock], object] | None,
        cancel_on_lost: bool,
    ) -> None:
        self._client = client
        self._core = core
        if on_lost is not None and not callable(on_lost):
            raise TypeError(
                f"on_lost must be callable or None, not {type(on_lost).__name__}"
            )
        if (on_lost is not None or cancel_on_lost) and not core.auto_renew:
            raise ValueError(
                "invalid argument: on_lost and cancel_on_lost need auto_renew=True"
            )
        self._on_lost = on_lost
        self._cancel_on_lost = bool(cancel_on_lost)
        self._holder: asyncio.Task[Any] | None = None  # the task that acquired
        self._busy = False  # an operation runs on the object
        self._waiters: list[asyncio.Future[None]] = []  # for it to end

    # What the object knows, no I/O.
    def locked(self) -> bool:
        """True while this object holds the lock with validity left."""
        return self._core.locked()

    @property
    def lost(self) -> bool:
        """True once the hold of this lease was lost (never held then)."""
        return self._core.lost

    def check(self) -> None:
        """Raises LockLost ("lost: <reason>") when the hold was lost."""
        self._core.check()

    @property
    def auto_renew(self) -> bool:
        return self._core.auto_renew

    @property
    def validity(self) -> float:
        return self._core.validity

    @property
    def token(self) -> str | None:
        return self._core.token

    @property
    def fence(self) -> int | None:
        """The fencing token of a fenced lock's current hold, as
        :attr:`hiredlock.Lock.fence`."""
        return self._core.fence

    @property
    def fence_key(self) -> bytes | None:
        """A fenced lock's counter key, as :attr:`hiredlock.Lock.fence_key`."""
        return self._core.fence_key

    @property
    def mode(self) -> str:
        """What the object holds, as :attr:`hiredlock.Lock.mode`."""
        return self._core.mode

    @property
    def permits(self) -> int | None:
        """A permit's semaphore's permits, as :attr:`hiredlock.Lock.permits`."""
        return self._core.permits

    @property
    def permit(self) -> int | None:
        """A held permit's number, as :attr:`hiredlock.Lock.permit`."""
        return self._core.permit

    @property
    def ttl(self) -> float:
        return self._core.ttl

    @property
    def name(self) -> str | bytes:
        return self._core.name

    @property
    def key(self) -> bytes:
        return self._core.key

    @property
    def timeout(self) -> float:
        return self._core.timeout

    @property
    def blocking(self) -> bool:
        return self._core.blocking

    @property
    def client(self) -> Client:
        return self._client

    # Operations. Each: the running loop checked (Driver.bind, before the
    # operation begins: nothing to undo), the core's begin, then the
    # operation settled (a task cancelled meanwhile: the operation leaves
    # nothing behind, an acquire releases what it got, then the
    # CancelledError goes on). All of it in one coroutine, Driver.operate
    # (given this object as owner), which acquire() and release() return
    # rather than await in one of their own: every level of coroutines
    # costs its share of each await. Nothing happens before the coroutine
    # first runs (a task cancelled before it starts changes nothing).
    def acquire(
        self, blocking: bool = True, timeout: float = -1
    ) -> Coroutine[Any, Any, bool]:
        """Acquires the lock; see the class documentation (``await
        lock.acquire()``)."""
        return self._client._driver.operate(
            self._core,
            Progress(),
            False,
            None,
            True,
            True,
            self,
            ACQUIRE,
            blocking,
            timeout,
        )

    async def _acquire_when_free(self, blocking: bool, wait_ms: int) -> bool:
        """acquire() on an object that holds the lock or is busy: like a
        threading.Lock, it waits until released or the validity runs out,
        and the time waited counts against its timeout."""
        loop = asyncio.get_running_loop()
        deadline = None if wait_ms < 0 else loop.time() + wait_ms / 1000
        while self._busy or self._core.locked():
            if not blocking:
                return False
            wait = self._core.validity + 0.001 if self._core.locked() else None
            if deadline is not None:
                left = deadline - loop.time()
                if left <= 0:
                    return False
                wait = left if wait is None else min(wait, left)
            await self._changed(wait)
        if deadline is not None:
            wait_ms = max(0, round((deadline - loop.time()) * 1000))
        self._busy = True
        core = self._core
        try:
            driver = self._client._driver
            loop = driver.bind()
            core._begin_acquire(wait_ms)
            ok = await driver.operate(core, Progress(), False, loop, True, True)
        finally:
            self._leave()
        if ok and core.auto_renew:
            self._held_now()
        return ok

    def _held_now(self) -> None:
        """An acquire got the lock: a lease is renewed from now on."""
        if self._core._renew_in() is not None:
            self._holder = asyncio.current_task()
            self._client._renewer.add(self)

    def _lost(self, reason: str) -> None:
        """The renewer found the hold lost: tell the holder."""
        holder, self._holder = self._holder, None
        if self._cancel_on_lost and holder is not None and not holder.done():
            holder.cancel(f"hiredlock: lock {self.name!r} lost: {reason}")
        if self._on_lost is not None:
            try:
                self._on_lost(self)
            except Exception as exc:  # the renewer goes on
                asyncio.get_running_loop().call_exception_handler(
                    {"message": "hiredlock.asyncio: on_lost raised", "exception": exc}
                )

    def release(self) -> Coroutine[Any, Any, None]:
        """Releases the lock on every master; afterwards it is not held,
        whatever happened. Raises NotOwned when it was lost (or not held),
        ConnectionError when too few masters confirmed (call it again to
        finish). ``await lock.release()``."""
        return self._client._driver.operate(  # type: ignore[return-value]
            self._core, Progress(), True, None, True, False, self, RELEASE
        )

    async def extend(self, ttl: float | None = None) -> None:
        """Resets the TTL on every master to ``ttl`` seconds (default: the
        lock's own). Raises NotOwned when the lock was lost."""
        await self._client._driver.operate(
            self._core, Progress(), True, None, True, False, self, EXTEND, ttl
        )

    # One operation at a time on the object.
    async def _enter(self) -> None:
        while self._busy:
            await self._changed(None)
        self._busy = True

    def _leave(self) -> None:
        self._busy = False
        waiters = self._waiters
        if waiters:
            self._waiters = []
            for fut in waiters:
                if not fut.done():
                    fut.set_result(None)

    async def _changed(self, wait: float | None) -> None:
        """Waits until an operation on the object ends, or wait seconds."""
        fut = asyncio.get_running_loop().create_future()
        self._waiters.append(fut)
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(fut, wait)

    # async with
    async def __aenter__(self) -> Lock:
        if not await self.acquire(self.blocking, self.timeout):
            raise self._core._not_acquired()  # the sync with's words
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        try:
            await self.release()
        except Exception as failure:
            error = exit_error(self.name, exc, failure)
            if error is failure:
                raise
            if error is not None:
                raise error from failure

    def __repr__(self) -> str:
        state = f"held validity={self.validity:.3f}" if self.locked() else "unheld"
        if self.mode == "permit":
            state = f"permit={self.permit} of {self.permits} {state}"
        elif self.mode != "lock":
            state = f"mode={self.mode} {state}"
        return f"<hiredlock.asyncio.Lock name={self.name!r} ttl={self.ttl:g} {state}>"


A = TypeVar("A", bound=Callable[..., Awaitable[Any]])


def synchronized_by(make_lock: Callable[[], Lock]) -> Callable[[A], A]:
    """Decorator for an async function: every call's body runs in ``async
    with make_lock():`` (the lock is made, and its client found, at each
    call). A plain function is refused: use :func:`hiredlock.synchronized`."""

    def decorate(func: A) -> A:
        if not inspect.iscoroutinefunction(func):
            raise TypeError(
                "@hiredlock.asyncio.synchronized needs an async function, and "
                f"{_name_of(func)!r} is not one; use @hiredlock.synchronized"
            )

        @functools.wraps(func)
        async def locked_call(*args: Any, **kwargs: Any) -> Any:
            async with make_lock():
                return await func(*args, **kwargs)

        return locked_call  # type: ignore[return-value]

    return decorate
