"""The resource side of fencing: a write runs only when its fence is not
older than the last fence the resource has seen (docs/SAFETY.md)."""

from __future__ import annotations

import inspect
from typing import Any, Protocol, Union

from . import _core
from ._core import LockError

FENCED_WRITE_SCRIPT: str = _core.FENCED_WRITE_SCRIPT
FENCE_MAX = 2**63 - 1

Arg = Union[str, bytes, int, float]


class _Evaluator(Protocol):
    def eval(self, script: str, numkeys: int, *keys_and_args: Arg) -> Any: ...


class StaleFence(LockError):
    """A write carried a fence older than one the resource has seen: its
    lock was lost (a pause past the TTL) and taken since."""

    __module__ = "hiredlock"


def check_write(fence: object, command: tuple[Arg, ...]) -> None:
    """The arguments every fenced_write checks before sending anything."""
    if isinstance(fence, bool) or not isinstance(fence, int):
        raise TypeError(
            f"fence must be an int (a Lock's fence), not {type(fence).__name__}"
        )
    if not 1 <= fence <= FENCE_MAX:
        raise ValueError(
            f"invalid argument: fence must be from 1 to {FENCE_MAX}, got {fence}"
        )
    if not command:
        raise TypeError("fenced_write() needs a command to run")


def stale_fence(error: Exception) -> StaleFence | None:
    """The store's STALEFENCE refusal as a StaleFence, or None."""
    text = str(error)
    return StaleFence(text) if text.startswith("STALEFENCE") else None


def fenced_write(
    redis: _Evaluator,
    fence_key: str | bytes,
    fence: int,
    *command: Arg,
    keys: tuple[str | bytes, ...] | list[str | bytes] = (),
) -> Any:
    """Runs one Redis command on ``redis`` (the store you protect, not the
    lock's masters) only when ``fence`` is not older than the last fence
    seen at ``fence_key``, and records it there; returns the command's
    reply. Raises :class:`StaleFence` for an older fence, and writes
    nothing then.

    ``redis`` is a redis-py client, or anything with redis-py's
    ``eval(script, numkeys, *keys_and_args)``; for ``redis.asyncio``
    clients, ``await hiredlock.asyncio.fenced_write(...)`` (this one
    refuses them with a TypeError). ``keys`` are the keys the command
    touches, declared for Redis Cluster and ACLs (in Cluster they must
    share ``fence_key``'s slot: use a hash tag)::

        hiredlock.fenced_write(r, "{order:42}:fence", lock.fence,
                               "HSET", "{order:42}", "state", "paid",
                               keys=["{order:42}"])
    """
    check_write(fence, command)
    try:
        reply = redis.eval(
            FENCED_WRITE_SCRIPT, 1 + len(keys), fence_key, *keys, fence, *command
        )
    except Exception as e:
        stale = stale_fence(e)
        if stale is not None:
            raise stale from None
        raise
    if inspect.isawaitable(reply):
        # An asyncio client: the write would only run when awaited, and its
        # STALEFENCE would never become a StaleFence. Nothing was sent.
        close = getattr(reply, "close", None)
        if close is not None:
            close()
        raise TypeError(
            f"fenced_write() got an asyncio client ({type(redis).__name__}): "
            "use await hiredlock.asyncio.fenced_write(...)"
        )
    return reply
