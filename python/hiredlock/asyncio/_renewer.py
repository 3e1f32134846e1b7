"""Managed leases for asyncio: one renewer task per client (not one per
lock), sleeping until the next renewal is due. It keeps its leases weakly,
as the sync client's renewer does: a lease nobody refers to any more is
not renewed (its keys expire with their TTL). When a renewal is due, how
long a renewal may ask for (max_hold) and what its outcome means are the
core's (hrl_proto_renew_*, as for every driver); the task only runs the
renewal's extend on the lease's twin through the driver, and tells the
holder of a loss: the lock's on_lost callback, and, with
``cancel_on_lost=True``, a cancellation of the task that acquired it.
"""

from __future__ import annotations

import asyncio
import contextlib
import weakref
from typing import TYPE_CHECKING

from .._core import LockError
from ._driver import Driver, Progress

if TYPE_CHECKING:
    from ._lock import Lock


class Renewer:
    """The leases of one client that are held, and the task renewing them."""

    def __init__(self, driver: Driver) -> None:
        self._driver = driver
        self._leases: weakref.WeakSet[Lock] = weakref.WeakSet()
        self._task: asyncio.Task[None] | None = None
        self._wake: asyncio.Event | None = None

    def add(self, lock: Lock) -> None:
        """A lease was acquired: renew it from now on."""
        self._leases.add(lock)
        if self._task is None or self._task.done():
            self._wake = asyncio.Event()
            self._task = asyncio.get_running_loop().create_task(self._run())
        else:
            assert self._wake is not None
            self._wake.set()  # its first renewal may be the soonest

    async def close(self) -> None:
        """Stops the task and waits for it to end, so that closing a client
        leaves no pending task behind for the loop to complain about."""
        task, self._task = self._task, None
        self._leases.clear()
        if task is None or task.done():
            return
        task.cancel()
        if task is not asyncio.current_task():
            # wait() does not re-raise the task's CancelledError, so only a
            # cancellation of the caller itself propagates from here.
            await asyncio.wait({task})

    async def _run(self) -> None:
        assert self._wake is not None
        while self._leases:
            # A pass holds its leases only while it runs: never while the
            # task sleeps, or the last one looked at would live on in it.
            soonest = await self._renew_due()
            if soonest is None:
                break
            self._wake.clear()
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self._wake.wait(), max(soonest, 0.0))

    async def _renew_due(self) -> float | None:
        """Renews the leases that are due; seconds until the next one is
        (None: nothing left to renew)."""
        soonest = None
        for lock in list(self._leases):
            due = lock._core._renew_in()
            if due is None:  # released, or lost: nothing to renew
                self._leases.discard(lock)
            elif due <= 0:
                await self._renew(lock)
                due = lock._core._renew_in()
            if due is not None:
                soonest = due if soonest is None else min(soonest, due)
        return soonest

    async def _renew(self, lock: Lock) -> None:
        kind, twin = lock._core._renew_begin()
        if kind == "round":
            with contextlib.suppress(LockError):
                await self._driver.operate(twin, Progress(), urgent=True)
            kind, why = lock._core._renew_end()
        else:
            why = twin
        lock._client._core._flush_events()  # the renewal's, to logging
        if kind == "lost":
            self._leases.discard(lock)
            lock._lost(why)
        elif kind == "none":
            self._leases.discard(lock)
