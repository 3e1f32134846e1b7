"""Read-write locks and semaphores: factories of Lock objects whose mode is
a read, the write, or a permit (the core's holds, docs/SAFETY.md)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Generic, TypeVar

if TYPE_CHECKING:
    from ._lock import Lock

L = TypeVar("L")


class _Holds(Generic[L]):
    """What a read-write lock and a semaphore share: a name, the settings
    of its holds, and a way to make a hold (a Lock object) with them. The
    settings are checked once, when it is made."""

    __slots__ = ("_make", "_name", "_settings")

    def __init__(
        self, make: Callable[..., L], name: Any, settings: dict[str, Any]
    ) -> None:
        self._make = make
        self._name = name
        self._settings = settings

    def _hold(self, **mode: Any) -> L:
        return self._make(self._name, **self._settings, **mode)

    @property
    def name(self) -> Any:
        """The name, as given (str or bytes)."""
        return self._name


class RWLock(_Holds[L]):
    """A read-write lock: many reads or one write at a time, on a quorum
    of the client's masters. Made with :meth:`Client.rwlock`.

    :meth:`read` and :meth:`write` each make a new lock object, one hold
    with its own token and TTL, with every method of a :class:`Lock`
    (``acquire``, ``release``, ``extend``, ``with``, ``auto_renew``,
    ``on_lost``, ``fence``)::

        rw = client.rwlock("catalog")
        with rw.read():
            ...
        with rw.write():
            ...

    A waiting write stops new reads, and waiters are served in arrival
    order (docs/SAFETY.md, "Read-write locks and semaphores"). A fenced
    write's ``fence`` is greater than every earlier write's; a fenced
    read's is the last write's.
    """

    __slots__ = ()

    def read(self) -> L:
        """A new lock object for a read (not yet held)."""
        return self._hold(mode="read")

    def write(self) -> L:
        """A new lock object for the write (not yet held)."""
        return self._hold(mode="write")

    def __repr__(self) -> str:
        return f"<hiredlock.RWLock name={self._name!r}>"


class Semaphore(_Holds[L]):
    """A counting semaphore: at most ``permits`` permits held at once on a
    quorum of the client's masters, each with its own token, TTL,
    renewal and loss signal. Made with :meth:`Client.semaphore`.

    ``acquire()`` returns a held permit (a :class:`Lock` whose ``permit``
    is its number, 1 to ``permits``), or None when none came free in
    time; :meth:`permit` makes one not yet held, for a ``with`` block::

        sem = client.semaphore("api", 5)
        with sem.permit() as p:
            call_the_api(worker=p.permit)

    A holder that dies frees its permit when its TTL runs out; waiters get
    permits in arrival order. Holders that ask with another ``permits``
    keep what they hold (docs/SAFETY.md, "Changing permits").
    """

    __slots__ = ("_permits",)

    def __init__(
        self,
        make: Callable[..., L],
        name: Any,
        permits: int,
        settings: dict[str, Any],
    ) -> None:
        super().__init__(make, name, settings)
        self._permits = permits

    @property
    def permits(self) -> int:
        """How many permits may be held at once."""
        return self._permits

    def permit(self) -> L:
        """A new lock object for one permit (not yet held)."""
        return self._hold(mode="permit", permits=self._permits)

    def __repr__(self) -> str:
        return f"<hiredlock.Semaphore name={self._name!r} permits={self._permits}>"


class SyncSemaphore(Semaphore["Lock"]):
    """The sync client's semaphore (see :class:`Semaphore`)."""

    __slots__ = ()

    def acquire(self, blocking: bool = True, timeout: float = -1) -> Lock | None:
        """Takes a permit, as :meth:`Lock.acquire` takes a lock: the held
        permit, or None when none came free within ``timeout`` seconds
        (-1: forever; ``blocking=False``: one attempt). Give it back with
        its ``release()``."""
        p = self.permit()
        return p if p.acquire(blocking, timeout) else None
