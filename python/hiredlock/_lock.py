"""The Lock class: the C lock plus the context-manager protocol."""

from __future__ import annotations

import functools
import inspect
from typing import Callable, TypeVar

from . import _core
from ._core import NotOwned


class Lock(_core.Lock):
    """A named distributed lock on a :class:`Client`'s masters.

    ``Lock(client, name, ttl=30, *, timeout=-1, blocking=True,
    auto_renew=None, max_hold=None, on_lost=None)``; usually made with
    :meth:`Client.lock` or :func:`hiredlock.lock`. It is not held until
    acquired.

    With ``auto_renew=True`` (``None``: the client's default) the lock is a
    managed lease: while held, the client's renewer extends it to a full TTL
    about every third of it, never past ``max_hold`` seconds after the
    acquire. When its hold is lost (a renewal found the key taken, no
    renewal got through before the validity ran out, or ``max_hold`` was
    reached), ``lost`` turns True, ``check()`` raises :class:`LockLost`,
    ``on_lost(lock)`` is called in a thread of its own, and a ``with`` block
    raises :class:`LockLost` when it ends.

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

    # __enter__ and __exit__ are the C ones (_core.Lock): acquire with the
    # lock's timeout and blocking, NotAcquired when not held, and no
    # instruction between the acquire and the block where a Ctrl-C could
    # strand it; __exit__ releases, and calls _exit_failed when that fails.

    def _exit_failed(self, exc: BaseException | None, failure: Exception) -> None:
        """What a ``with`` block whose release failed with ``failure``
        raises (``exc``: the block's own exception, or None)."""
        error = exit_error(self.name, exc, failure)
        if error is failure:
            raise failure
        if error is not None:
            raise error from failure

    def __repr__(self) -> str:
        if self.locked():
            state = f"held validity={self.validity:.3f}"
        else:
            state = "lost" if self.lost else "unheld"
        if self.mode == "permit":
            state = f"permit={self.permit} of {self.permits} {state}"
        elif self.mode != "lock":
            state = f"mode={self.mode} {state}"
        return (
            f"<{type(self).__module__}.{type(self).__qualname__} "
            f"name={self.name!r} ttl={self.ttl:g} {state}>"
        )


# What Client.lock (C: _core.Client._lock) makes.
_core._set_lock_class(Lock)


def exit_error(
    name: object, exc: BaseException | None, failure: Exception
) -> BaseException | None:
    """The one policy for leaving a ``with`` block (sync and asyncio) whose
    release failed with ``failure``: what to raise (chained to failure), or
    None. A lock lost before the block ended raises NotOwned; a
    release that failed otherwise raises as it is. Neither ever replaces
    the block's own exception ``exc``: it gets a note instead."""
    if isinstance(failure, NotOwned):
        if exc is None:
            # LockLost (a lease lost while the block ran) stays a LockLost.
            return type(failure)(
                f"{failure}: lock {name!r} was lost before its with block ended"
            )
        _note(
            exc,
            f"hiredlock: lock {name!r} was lost before the with block "
            f"ended ({failure})",
        )
        return None
    if exc is None:
        return failure
    _note(exc, f"hiredlock: releasing lock {name!r} failed: {failure}")
    return None


F = TypeVar("F", bound=Callable[..., object])


def synchronized_by(make_lock: Callable[[], Lock]) -> Callable[[F], F]:
    """Decorator: every call of the function runs in ``with make_lock():``.
    A coroutine function is refused: the call only makes the coroutine, so
    the lock would be released before its body ever ran."""

    def decorate(func: F) -> F:
        if inspect.iscoroutinefunction(func) or inspect.isasyncgenfunction(func):
            raise TypeError(
                f"@synchronized cannot protect {_name_of(func)!r}, an async "
                "function: the lock would be held only while the call makes "
                "the coroutine, never while it runs; use "
                "@hiredlock.asyncio.synchronized (or the synchronized of a "
                "hiredlock.asyncio.Client)"
            )

        @functools.wraps(func)
        def locked_call(*args: object, **kwargs: object) -> object:
            with make_lock():
                return func(*args, **kwargs)

        return locked_call  # type: ignore[return-value]

    return decorate


def _name_of(func: object) -> str:
    return getattr(func, "__qualname__", None) or repr(func)


def _note(exc: BaseException, text: str) -> None:
    """Attaches text to the block's own exception without replacing it."""
    add_note = getattr(exc, "add_note", None)  # Python 3.11+
    if add_note is not None:
        add_note(text)
