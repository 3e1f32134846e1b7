"""fenced_write for asyncio stores (redis.asyncio): the same script, checks
and StaleFence as hiredlock.fenced_write, awaited."""

from __future__ import annotations

from collections.abc import Awaitable
from typing import Any, Protocol

from .._fencing import FENCED_WRITE_SCRIPT, Arg, check_write, stale_fence


class _AsyncEvaluator(Protocol):
    def eval(
        self, script: str, numkeys: int, *keys_and_args: Arg
    ) -> Awaitable[Any]: ...


async def fenced_write(
    redis: _AsyncEvaluator,
    fence_key: str | bytes,
    fence: int,
    *command: Arg,
    keys: tuple[str | bytes, ...] | list[str | bytes] = (),
) -> Any:
    """:func:`hiredlock.fenced_write` for an asyncio client: runs one
    command on ``redis`` (a ``redis.asyncio`` client, or anything whose
    ``eval(script, numkeys, *keys_and_args)`` is awaitable) only when
    ``fence`` is not older than the last fence seen at ``fence_key``, and
    records it there; returns the command's reply. Raises
    :class:`hiredlock.StaleFence` for an older fence, and writes nothing
    then::

        await hiredlock.asyncio.fenced_write(r, "{order:42}:fence", lk.fence,
                                             "HSET", "{order:42}", "state",
                                             "paid", keys=["{order:42}"])
    """
    check_write(fence, command)
    try:
        return await redis.eval(
            FENCED_WRITE_SCRIPT, 1 + len(keys), fence_key, *keys, fence, *command
        )
    except Exception as e:
        stale = stale_fence(e)
        if stale is not None:
            raise stale from None
        raise
