"""The asyncio driver: runs the core's sans-I/O operations over asyncio
transports, exactly as the C driver does over poll(): a round goes to every
master at once, each against its own deadline; a connection that missed a
deadline is kept (its late replies are owed) when the protocol says it may;
a connect still in progress carries over to the next round until the
connect timeout; once a round is settled, masters known to be late are not
waited for; a waiting acquire hears its hand-offs through its event loop's
subscriber connections (_listener.py). docs/DESIGN.md, section 2, lists
these duties.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import os
import time
from threading import get_ident
from typing import TYPE_CHECKING, Any, Callable

from .. import _core
from . import _tls
from ._connection import (
    CLOSED,
    KEPT,
    Connection,
    connected_to_itself,
    os_message,
    reset,
)
from ._listener import Listener, Waiter

if TYPE_CHECKING:  # ssl only at the first rediss:// connect (_tls.py)
    import ssl

    from ._lock import Lock

# What Driver.operate begins for a Lock's acquire(), release(), extend().
ACQUIRE, RELEASE, EXTEND = "acquire", "release", "extend"
# Driver.operate's own: it gave its turn between two rounds.
HANDED_OVER = "handed over"


class Master:
    """One master: where it is, its idle connections, and connects still in
    progress that an earlier round gave up waiting for (each is taken by
    one later round, until its connect timeout).

    An idle connection that owes replies to a lock's commands (a round
    missed its deadline on it) serves that lock's next round only, as the
    C driver's one connection per master does: what the lock sends next
    then runs behind them. Given to any lock, a waiter's late step aside
    could run after its own next try, made on a faster connection, and
    hand the key it just won to another waiter: two holders (tests/sim,
    regress/known-shared-pool-reorder.txt). The connection is any lock's
    again once the replies came, or once that lock's operation ended (its
    late commands and the ones of a later operation carry other tokens or
    cannot take a key)."""

    def __init__(
        self, index: int, where: tuple, connect_timeout: float, core: _core.Client
    ) -> None:
        self.index = index
        self.core = core
        self.host, self.port, self.path, self.tls = where
        self.connect_timeout = connect_timeout
        self._ssl: ssl.SSLContext | None = None  # made at the first connect
        self.idle: list[Connection] = []
        self.reserved = False  # an idle connection may have an owner
        self.connecting: list[tuple[asyncio.Task[Connection], float]] = []

    def close(self) -> None:
        for conn in self.idle:
            conn.close()
        self.idle.clear()
        for task, _ in self.connecting:
            if not task.done():
                task.cancel()
            elif not task.cancelled() and task.exception() is None:
                task.result().close()
        self.connecting.clear()

    def tls_options(self) -> dict[str, Any]:
        """create_connection()'s TLS arguments for this master (none for
        plain TCP); the context is made once, at the first connect."""
        if self.tls is None:
            return {}
        if self._ssl is None:
            try:
                self._ssl = _tls.context(self.tls)
            except OSError:
                # Said as the C driver says it (the ssl module's words are
                # OpenSSL's last error, or its code read as an errno): the
                # core loads the settings again, only on this failure.
                why = self.core._tls_check(self.index)
                if why is not None:
                    raise _tls.TLSSetupError(why) from None
                raise
        return {"ssl": self._ssl, "server_hostname": self.host}

    async def _open(self) -> Connection:
        loop = asyncio.get_running_loop()
        if self.path is not None:
            transport, conn = await loop.create_unix_connection(Connection, self.path)
        else:
            # The TLS handshake counts against the connect timeout, as in
            # the C driver: _connection() waits for all of _open().
            transport, conn = await loop.create_connection(
                Connection, self.host, self.port, **self.tls_options()
            )
            if connected_to_itself(transport):
                reset(transport)
                raise ConnectionRefusedError("connection refused (connected to itself)")
            conn.tls = self.tls is not None
        return conn

    def _connect(self, now: float) -> tuple[asyncio.Task[Connection], float, bool]:
        """A connect of an earlier round still in progress (carried: True),
        or a new one. As in the C driver (connect.c), one whose deadline
        passed or that failed while no round watched it is old news about
        a server that may be back: it is dropped, and a new one begins."""
        while self.connecting:
            task, until = self.connecting.pop()
            if not task.done():
                if until > now:
                    return task, until, True
                task.cancel()
            elif not task.cancelled() and task.exception() is None:
                if until > now:
                    return task, until, True
                task.result().close()  # up, unseen, too late: not leaked
        task = asyncio.get_running_loop().create_task(self._open())
        return task, now + self.connect_timeout, False

    def take(self, lock: _core.Lock) -> Connection | None:
        """The idle connection for lock's round: the one owing replies to
        lock's commands, else the newest owing none to another lock's."""
        idle = self.idle
        if any(not conn.usable for conn in idle):
            idle[:] = [conn for conn in idle if conn.usable]
        pick = -1
        for k in range(len(idle) - 1, -1, -1):
            owner = idle[k].owner
            if owner is lock:
                pick = k
                break
            if owner is None and pick < 0:
                pick = k
        return idle.pop(pick) if pick >= 0 else None

    def release(self, lock: _core.Lock) -> None:
        """lock's operation ended: its connections are any lock's again."""
        reserved = False
        for conn in self.idle:
            if conn.owner is lock:
                conn.owner = None
            elif conn.owner is not None:
                reserved = True
        self.reserved = reserved

    async def _connection(
        self, lock: _core.Lock, deadline: float, timeout_ms: int, progress: Progress
    ) -> Connection | None:
        """A connection for this round: an idle one (take()), or one being
        opened (waited for until the round's deadline, or the connect's own
        if that comes first). None when the protocol was told why not."""
        conn = self.take(lock)
        if conn is not None:
            return conn
        loop = asyncio.get_running_loop()
        task, connect_deadline, carried = self._connect(loop.time())
        while True:
            until = min(deadline, connect_deadline)
            while not task.done() and loop.time() < until:
                try:
                    await asyncio.wait({task}, timeout=max(0.0, until - loop.time()))
                except asyncio.CancelledError:
                    progress.cancel()  # the round still ends as rounds do
            if not task.done():
                if loop.time() >= connect_deadline:
                    task.cancel()
                    ms = round(self.connect_timeout * 1000)
                    lock._missed(self.index, f"connect timeout after {ms} ms")
                else:  # a later round may take it over
                    self.connecting.append((task, connect_deadline))
                    lock._missed(
                        self.index, f"timeout after {timeout_ms} ms (connecting)"
                    )
                return None
            err = task.exception()
            if err is None:
                return task.result()
            if carried:
                # A connect of an earlier round that failed: old news about
                # a server that may be back (restarted meanwhile), so begun
                # again once, as the C driver does (hrl_round_replace_stale).
                carried = False
                task = loop.create_task(self._open())
                connect_deadline = loop.time() + self.connect_timeout
                continue
            lock._fail(self.index, _tls.failure_message(err) or os_message(err))
            return None

    def ready(self) -> Connection | None:
        """The usual case, taken without a coroutine: the newest idle
        connection, when none is reserved and it is still open."""
        idle = self.idle
        if idle and not self.reserved:
            transport = idle[-1].transport
            if transport is not None and not transport.is_closing():
                return idle.pop()
        return None

    def finish(self, conn: Connection, lock: _core.Lock, outcome: str) -> bool:
        """conn served lock's round and it ended with outcome: back to the
        pool when kept, reserved for lock's next round while it owes
        replies to lock's commands. False when the connection was stale
        (closed by the server while idle, before any reply), and the round
        is to be tried on another."""
        if outcome == KEPT:
            if conn.stream.owed:
                conn.owner = lock
                self.reserved = True
            self.idle.append(conn)
            return True
        conn.close()
        return outcome == CLOSED

    async def exchange(
        self,
        lock: _core.Lock,
        deadline: float,
        timeout_ms: int,
        progress: Progress,
        serving: list[Connection | None] | None = None,
        tries: int = 2,
    ) -> None:
        """Master i's part of a round, from connection to keep or close.
        serving[i] holds the connection while it waits (for skipping).
        A second try only after a stale connection (tries=1: one was
        already taken, by Driver.operate)."""
        for _ in range(tries):
            conn = self.ready()
            if conn is None:
                conn = await self._connection(lock, deadline, timeout_ms, progress)
                if conn is None:
                    return
            waiter = conn.start(lock, self.index, deadline, timeout_ms)
            if serving is not None:
                serving[self.index] = conn
            try:
                outcome = await waiter
            except asyncio.CancelledError:
                progress.cancel()
                outcome = await conn.outcome_after(progress)
            finally:
                if serving is not None:
                    serving[self.index] = None
            if self.finish(conn, lock, outcome):
                return
        lock._fail(self.index, "server closed the connection")


class _Forks:
    """How many times this process is a fork's child (Driver.bind: a loop
    bound before a fork is not the child's running loop, as asyncio says
    of it there)."""

    count = 0

    @classmethod
    def forked(cls) -> None:
        cls.count += 1


os.register_at_fork(after_in_child=_Forks.forked)


# Rounds one client runs at once, and so connections it keeps per master:
# more tasks than this queue for a turn (before the round starts, so the
# wait is not taken from any master's deadline) instead of opening a
# connection each, which would overflow the masters' listen backlogs.
ROUNDS_AT_ONCE = 32


class Driver:
    """The masters of one client and the loop that steps an operation."""

    def __init__(
        self, core_client: _core.Client, connect_timeout: float, timeout: float
    ) -> None:
        self.masters = [
            Master(i, core_client._master_info(i), connect_timeout, core_client)
            for i in range(len(core_client.masters))
        ]
        self.core = core_client
        # One master: rounds need no task per master (operate()).
        self.single = self.masters[0] if len(self.masters) == 1 else None
        self.listener = Listener(core_client, self.masters, timeout)
        # Per lock name, the waiting acquire whose first try is out from
        # this client (_first_try), and the longest its round can last.
        self._first_tries: dict[str | bytes, asyncio.Future[None]] = {}
        self._round_bound = connect_timeout + timeout
        self._active = 0  # rounds running now
        self._queue: collections.deque[asyncio.Future[None]] = collections.deque()
        # Holders' releases and extends (renewals too) waiting for a turn:
        # they go before every acquire's round, as in the C driver, so a
        # lease's renewal never queues behind a crowd of waiters' tries.
        self._urgent: collections.deque[asyncio.Future[None]] = collections.deque()
        # The event loop the connections belong to, from the first
        # operation until close(); the same when it is one of asyncio's
        # own (bind()'s fast check), with the fork count it was bound at.
        self._loop: asyncio.AbstractEventLoop | None = None
        self._native: asyncio.BaseEventLoop | None = None
        self._forks = 0
        # The bound loop's clock: time.monotonic itself when that is what
        # its time() returns (asyncio's own loops), one call less a round.
        self.clock: Callable[[], float] = time.monotonic

    def bind(self) -> asyncio.AbstractEventLoop:
        """The running loop, checked to be the one the connections belong
        to (binding the first): from another one, every round would wait
        on transports whose loop is not running, and time out. Once per
        operation, and without asking asyncio for the running loop when
        the bound loop is one of asyncio's own: that costs a getpid()
        system call on Python 3.11 (one per operation, a fifth of the
        cycle's), where the loop's own thread id says the same. A thread
        runs one loop at a time, and asyncio's loop holds the id of the
        thread running it (None when stopped), so the bound loop is the
        running one exactly when that id is this thread's; a fork's child
        asks asyncio again (which says no loop runs there)."""
        native = self._native
        if (
            native is not None
            and native._thread_id == get_ident()
            and self._forks == _Forks.count
        ):
            return native
        loop = asyncio.get_running_loop()
        if loop is self._loop:
            return loop
        if self._loop is None:
            self._loop = loop
            if isinstance(loop, asyncio.BaseEventLoop):
                self._native = loop
                self._forks = _Forks.count
            native_clock = type(loop).time is asyncio.BaseEventLoop.time
            self.clock = time.monotonic if native_clock else loop.time
        else:
            raise RuntimeError(
                "hiredlock.asyncio.Client used from a second event loop: its "
                "connections belong to the loop that first used it"
                f"{' (closed now)' if self._loop.is_closed() else ''}; make a "
                "Client per event loop (hiredlock.asyncio.lock() does), or await "
                "client.close() in the first loop before using it in another"
            )
        return loop

    async def _turn(self, progress: Progress, urgent: bool) -> None:
        """Waits for a turn to run a round (none when one is free; operate()
        takes a free one without calling this). A cancellation meanwhile is
        noted and the wait goes on: the step after it may be a cleanup that
        must still run."""
        if self._active < ROUNDS_AT_ONCE:
            self._active += 1
            return
        loop = asyncio.get_running_loop()
        queue = self._urgent if urgent else self._queue
        turn = loop.create_future()
        queue.append(turn)
        while True:
            try:
                await turn
                return  # handed over by _end_turn: _active already counts it
            except asyncio.CancelledError:
                progress.cancel()
                if turn.done() and not turn.cancelled():
                    return
                turn = loop.create_future()
                queue.appendleft(turn)

    def close(self) -> None:
        for m in self.masters:
            m.close()
        self.listener.close()
        self._loop = self._native = None

    def _end_turn(self) -> None:
        """Hands the turn to the first round waiting for one, if any (a
        holder's first)."""
        if not self._urgent and not self._queue:
            self._active -= 1
            return
        for queue in (self._urgent, self._queue):
            while queue:
                turn = queue.popleft()
                if not turn.done():
                    turn.set_result(None)
                    return
        self._active -= 1

    async def _first_try(
        self,
        lock: _core.Lock,
        wait_ms: int,
        progress: Progress,
        loop: asyncio.AbstractEventLoop,
    ) -> asyncio.Future[None] | None:
        """One first try at a time per name, as the cosocket driver does
        per nginx worker (lua/hiredlock/driver/first_try.lua): a burst of
        tasks acquiring one name all run before the loop reads any reply,
        so were each to send its first try at once, the one that wins
        would hear so only after every other task's try went out (100
        tasks: ~250 commands, the first grant 8-11 ms after the burst).
        So a waiting acquire of a plain lock whose name has a first try
        out from this client parks until that try is over (its rounds up
        to its first wait or its end), no longer than its own wait nor
        than a round can last, and then sends its own: the waiters of one
        first try go together. Nothing the protocol decides changes; a
        waiter tries at most one round later, the round it would have
        lost to anyway. A cancellation while parked is noted and the try
        still goes (its round then ends the operation), as in _turn().
        Returns the future to resolve once this acquire's first try is
        over (_first_over), or None when it parked."""
        name = lock.name
        out = self._first_tries.get(name)
        if out is None:
            self._first_tries[name] = out = loop.create_future()
            return out
        bound = self._round_bound
        if wait_ms > 0:
            bound = min(bound, wait_ms / 1000)
        try:
            await asyncio.wait((out,), timeout=bound)
        except asyncio.CancelledError:
            progress.cancel()
        return None

    def _first_over(self, lock: _core.Lock, first: asyncio.Future[None]) -> None:
        """The first try of lock's name (first, from _first_try) is over:
        its parked waiters send theirs."""
        name = lock.name
        if self._first_tries.get(name) is first:
            del self._first_tries[name]
        if not first.done() and not first.get_loop().is_closed():
            first.set_result(None)

    async def round(
        self,
        lock: _core.Lock,
        timeout_ms: int,
        progress: Progress,
        loop: asyncio.AbstractEventLoop,
    ) -> None:
        """One round on every master at once (N > 1). A cancellation of the task
        running it is noted in progress and the round goes on: each master
        ends within its deadline."""
        deadline = loop.time() + timeout_ms / 1000
        serving: list[Connection | None] = [None] * len(self.masters)
        pending = {
            loop.create_task(m.exchange(lock, deadline, timeout_ms, progress, serving))
            for m in self.masters
        }
        while pending:
            try:
                _, pending = await asyncio.wait(
                    pending, return_when=asyncio.FIRST_COMPLETED
                )
            except asyncio.CancelledError:
                progress.cancel()
            # Settled now? Then a late master's answer cannot matter.
            for i, conn in enumerate(serving):
                if conn is not None and lock._skippable(i):
                    conn.skip()

    async def operate(
        self,
        lock: _core.Lock,
        progress: Progress,
        urgent: bool = False,
        loop: asyncio.AbstractEventLoop | None = None,
        settle: bool = False,
        acquiring: bool = False,
        owner: Lock | None = None,
        begin: str = "",
        arg: Any = None,
        arg2: Any = None,
    ) -> bool:
        """Steps the begun operation to its end: True when it succeeded
        (an acquire: the lock is held), False when an acquire timed out.
        Once the awaiting task is cancelled (noted in progress), it goes on
        to the next wait between tries, where it leaves the queue (one more
        round) and ends; a round always finishes. A waiting acquire's token
        is registered with the listener before the round that queues it.
        urgent: a holder's release or extend (a renewal), whose rounds go
        before acquires' when the turns are all taken. loop: the running
        loop, from bind() (called here when not given).

        settle: the operation is a caller's (Lock's, inspect's), so it ends
        as the caller's await does: the client's events go to logging, and
        a cancellation goes on (CancelledError) once the operation left
        nothing behind: an acquire (acquiring) that got the lock releases
        it first. In this coroutine rather than one around it, as the
        usual operation is a round on an idle connection, and every level
        of coroutines costs its share of each await.

        owner: the asyncio Lock whose acquire(), release() or extend()
        (begin: ACQUIRE, RELEASE, EXTEND) this coroutine is, begun here:
        one operation at a time on the object, the running loop checked
        before the operation begins (nothing to undo), and a lease's
        renewal after an acquire that got it. acquire(blocking, timeout)
        and release() return this coroutine itself rather than awaiting it
        in one of their own, for the same reason (the usual cycle is two
        operations, each resumed twice)."""
        if owner is not None:
            # bind() before the operation begins, its usual case (the
            # loop of the connections, one of asyncio's) written out.
            loop = self._native
            if (
                loop is None
                or loop._thread_id != get_ident()
                or self._forks != _Forks.count
            ):
                loop = self.bind()
            if begin is ACQUIRE:
                # The wait checked as the sync acquire does, and the
                # acquire begun unless the object holds the lock (None):
                # one binding call, the usual case.
                wait_ms = (
                    None if owner._busy else lock._begin_acquire_if_free(arg, arg2)
                )
                if wait_ms is None:
                    wait_ms = lock._wait_ms(arg, arg2)
                    return await owner._acquire_when_free(arg, wait_ms)
                arg = wait_ms
                owner._busy = True
            elif owner._busy:
                await owner._enter()
            else:
                owner._busy = True  # the usual case, without a coroutine
        try:
            if owner is not None:
                if begin is RELEASE:
                    lock._begin_release()
                elif begin is EXTEND:
                    lock._begin_extend(arg)
            if loop is None:
                loop = self.bind()
            waiter: Waiter | None = None
            listener = self.listener
            if listener.adopted is not loop:
                listener.adopt(loop)  # before the round that may queue it
            single = self.single
            first: asyncio.Future[None] | None = None
            try:
                if begin is ACQUIRE and arg and lock.mode == "lock":
                    first = await self._first_try(lock, arg, progress, loop)
                while True:
                    if self._active < ROUNDS_AT_ONCE:  # the usual case: one free
                        self._active += 1
                    else:
                        await self._turn(progress, urgent)
                    try:
                        # The turn is kept from a round to the step after
                        # it (a round again, or the end): one take and one
                        # hand-over per operation, not per step; unless
                        # another round waits for a turn (as the C driver's
                        # hrl_turn_wanted): then it is handed over and
                        # taken again, so a holder's release or extend
                        # never waits behind a multi-round acquire.
                        stepped = False
                        while True:
                            if stepped and (self._urgent or self._queue):
                                kind = HANDED_OVER
                                break
                            stepped = True
                            kind, value = lock._step()
                            if kind != "round":
                                break
                            # A holder's release or extend (urgent) never waits.
                            if waiter is None and not urgent and lock._waiter():
                                waiter = listener.enter(lock._waiter())
                            if single is None:
                                await self.round(lock, value, progress, loop)
                                continue
                            # One master: its exchange, inline when an idle
                            # connection is at hand (no task, no coroutine):
                            # Master.ready() and finish()'s usual case written
                            # out, as each call is a share of the cycle.
                            deadline = self.clock() + value / 1000
                            idle = single.idle
                            conn = None
                            if idle and not single.reserved:
                                transport = idle[-1].transport
                                if transport is not None and not transport.is_closing():
                                    conn = idle.pop()
                            if conn is None:
                                await single.exchange(lock, deadline, value, progress)
                                continue
                            done = conn.start(lock, 0, deadline, value)
                            try:
                                outcome = await done
                            except asyncio.CancelledError:
                                progress.cancel()
                                outcome = await conn.outcome_after(progress)
                            if outcome is KEPT and not conn.stream.owed:
                                idle.append(conn)
                            elif not single.finish(conn, lock, outcome):
                                await single.exchange(
                                    lock, deadline, value, progress, tries=1
                                )
                    finally:
                        if self._urgent or self._queue:
                            self._end_turn()  # hands it over
                        else:
                            self._active -= 1
                    if kind is HANDED_OVER:
                        continue  # the turn again, then the next step
                    if first is not None:
                        self._first_over(lock, first)
                        first = None
                    if kind == "done":
                        ok: bool = value
                        break
                    if not progress.cancelled:
                        try:
                            if waiter is not None:
                                await waiter.wait(lock, value)
                            else:  # registered before any wait: never
                                await asyncio.sleep(value / 1000)
                        except asyncio.CancelledError:
                            progress.cancel()
                    if progress.cancelled:
                        lock._cancel()
            except _core.LockError:
                if settle and progress.cancelled:
                    # "cancelled" at the sleep: it was asked
                    raise asyncio.CancelledError from None
                raise
            finally:
                if first is not None:
                    self._first_over(lock, first)
                if waiter is not None:
                    listener.leave(waiter)
                for m in self.masters:
                    if m.reserved:
                        m.release(lock)
                if settle:
                    self.core._flush_events()  # to logging, if any
            if settle and progress.cancelled:
                if acquiring and ok:
                    lock._begin_release()
                    with contextlib.suppress(_core.LockError):
                        await self.operate(lock, Progress(), True, loop)
                raise asyncio.CancelledError
        finally:
            if owner is not None:
                owner._busy = False  # Lock._leave(), its usual case written out
                if owner._waiters:
                    owner._leave()
        if owner is not None:
            if begin is not ACQUIRE:
                return None  # type: ignore[return-value]  # release(), extend()
            if ok and lock.auto_renew:
                owner._held_now()
        return ok


class Progress:
    """Whether the task running an operation was cancelled meanwhile: the
    operation then stops at the first point that leaves nothing behind,
    and the cancellation goes on from there (Lock._run). No __init__:
    one is made per operation, and most are never cancelled."""

    cancelled = False

    def cancel(self) -> None:
        self.cancelled = True
