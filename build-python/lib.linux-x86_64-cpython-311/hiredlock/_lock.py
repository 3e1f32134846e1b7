"""The Lock class: the C lock plus the context-manager protocol."""

from __future__ import annotations

import functools
from types import TracebackType
from typing import Callable, TypeVar

from . import _core
from ._core import NotAcquired, NotOwned


class Lock(_core.Lock):
    """A named distributed lock on a :class:`Client`'s masters.

    ``Lock(client, name, ttl=30, *, timeout=-1, blocking=True)``; usually
    made with :meth:`Client.lock` or :func:`hiredlock.lock`. It is not held
    until acquired.

    ``acquire(blocking=True, timeout=-1)`` follows :class:`threading.Lock`:
    it returns ``True`` when the lock is held and ``False`` when others held
    it for the whole wait. ``timeout`` and ``blocking`` given here bound the
    wait of a ``with`` block, which raises :class:`NotAcquired` when it
    cannot acquire in time.

    Like a :class:`threading.Lock`, a Lock object is held or not, by no
    particular thread: any thread may release it, and ``acquire()`` on a
    held object waits until it is released or its validity runs out, as it
    would for a holder elsewhere.
    """

    __module__ = "hiredlock"
    __slots__ = ()

    def __enter__(self) -> Lock:
        if not self.acquire(self.blocking, self.timeout):
            wait = "one attempt" if not self.blocking else f"{self.timeout:g} s"
            raise NotAcquired(f"timeout: lock {self.name!r} not acquired ({wait})")
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        try:
            self.release()
        except NotOwned as lost:
            if exc is None:
                raise NotOwned(
                    f"{lost}: lock {self.name!r} was lost before its with block ended"
                ) from lost
            _note(
                exc,
                f"hiredlock: lock {self.name!r} was lost before the "
                f"with block ended ({lost})",
            )
        except Exception as failed:
            if exc is None:
                raise
            _note(exc, f"hiredlock: releasing lock {self.name!r} failed: {failed}")

    def __repr__(self) -> str:
        state = f"held validity={self.validity:.3f}" if self.locked() else "unheld"
        return (
            f"<{type(self).__module__}.{type(self).__qualname__} "
            f"name={self.name!r} ttl={self.ttl:g} {state}>"
        )


F = TypeVar("F", bound=Callable[..., object])


def synchronized_by(make_lock: Callable[[], Lock]) -> Callable[[F], F]:
    """Decorator: every call of the function runs in ``with make_lock():``."""

    def decorate(func: F) -> F:
        @functools.wraps(func)
        def locked_call(*args: object, **kwargs: object) -> object:
            with make_lock():
                return func(*args, **kwargs)

        return locked_call  # type: ignore[return-value]

    return decorate


def _note(exc: BaseException, text: str) -> None:
    """Attaches text to the block's own exception without replacing it."""
    add_note = getattr(exc, "add_note", None)  # Python 3.11+
    if add_note is not None:
        add_note(text)
