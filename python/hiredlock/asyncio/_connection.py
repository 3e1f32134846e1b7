"""One connection to one master, as an asyncio Protocol.

The bytes it writes and what the replies mean come from the core's
``_core.Stream`` (handshake first, owed replies dropped, NOSCRIPT resends,
when a connection that missed a deadline may be kept): this class only
moves bytes between the transport and the stream, and tells the round how
master's part of it ended.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import socket
import struct
from asyncio import Future  # asyncio's own (C): what a task awaits fastest
from typing import TYPE_CHECKING

from .. import _core
from . import _tls

if TYPE_CHECKING:
    from ._driver import Progress

MORE, SEND, DONE, CLOSE = (
    _core.STREAM_MORE,
    _core.STREAM_SEND,
    _core.STREAM_DONE,
    _core.STREAM_CLOSE,
)

# How master i's part of a round ended (the waiter's result).
KEPT = "kept"  # answered, or left owing replies: back to the pool
CLOSED = "closed"  # failed, recorded by the protocol: the connection is gone
STALE = "stale"  # a pooled connection broke before any reply: retry once


def os_message(err: BaseException) -> str:
    """An OS error as the C driver words it ("connection refused")."""
    if isinstance(err, OSError) and err.errno:
        text = os.strerror(err.errno)
    else:
        text = str(err) or type(err).__name__
    # "Connection refused" -> "connection refused", but keep "READONLY ...".
    if text[:1].isupper() and text[1:2].islower():
        text = text[:1].lower() + text[1:]
    return text


# Bytes read at once. The replies of a round are a few dozen bytes; a
# longer one (an inspection of a long queue) is read in several parts.
READ_SIZE = 16384


class Connection(asyncio.BufferedProtocol):
    """A connection, its stream, and the round it is serving (if any).

    A buffered protocol: what comes in is read into a buffer of the
    connection's own and fed to the stream from there. A plain Protocol's
    transport makes a bytes object of 256 KiB for every read, which the
    allocator maps and unmaps (three system calls and a page fault per
    reply, on CPython's selector loop)."""

    def __init__(self) -> None:
        self.loop = asyncio.get_running_loop()  # made by the loop's connect
        self.transport: asyncio.Transport | None = None
        self.buffer = memoryview(bytearray(READ_SIZE))
        self.stream = _core.Stream()
        self.fresh = True  # the next round sends the handshake first
        # The lock whose round the connection serves (None: no round is
        # out), the master's index, and the future the round's task waits
        # on (a plain one, which the task's fast path awaits): how the
        # round ended is kept in outcome too, for a task that was
        # cancelled meanwhile (outcome_after()).
        self.lock: _core.Lock | None = None
        self.index = 0
        self.waiter: asyncio.Future[str] | None = None
        self.outcome = KEPT
        self.reused = False
        # The lock whose commands this idle connection owes replies to: it
        # serves that lock's next round only (Master.take), so what the
        # lock sends next runs behind them on the master, in order.
        self.owner: _core.Lock | None = None
        self.tls = False  # a rediss:// connection (set by the driver)
        self.got_data = False  # anything came in on it
        # The round's deadline (loop time) and per-master timeout. One
        # timer per connection, armed for a deadline and moved on to the
        # round running when it fires, instead of one per round: a round
        # answered in time (the usual case) schedules and cancels nothing.
        self.deadline = 0.0
        self.timeout_ms = 0
        self.timer: asyncio.TimerHandle | None = None
        self.timer_at = 0.0  # the deadline the timer was armed for

    # asyncio.BufferedProtocol
    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]

    def get_buffer(self, sizehint: int) -> memoryview:
        return self.buffer

    def buffer_updated(self, nbytes: int) -> None:
        """nbytes came in, at the start of the buffer: fed to the stream
        at once (the buffer is read into again by the next read)."""
        self.got_data = True
        data = self.buffer[:nbytes]
        lock = self.lock
        if lock is None:
            self._drain(data)
            return
        action, out = self.stream.feed(lock, self.index, data)
        if action == DONE:  # the usual case: _end(KEPT) written out
            self.lock = None
            self.outcome = KEPT
            waiter, self.waiter = self.waiter, None
            if waiter is not None and not waiter.done():
                waiter.set_result(KEPT)
            return
        if action == MORE:
            return
        if action == SEND:
            assert self.transport is not None
            self.transport.write(out)
            return
        self._end(self.close())

    def _drain(self, data: memoryview) -> None:
        """Late replies that came while no round was out: dropped as owed.
        Once none is owed, what its last lock sent has all run, and any
        lock may have the connection; more than was owed: out of step, it
        is closed (the next round takes another)."""
        if self.fresh or not self.stream.drain(data):
            self.close()
        elif self.owner is not None and not self.stream.owed:
            self.owner = None

    def connection_lost(self, exc: Exception | None) -> None:
        self.transport = None
        if self.timer is not None and self.lock is None:
            self.timer.cancel()  # idle: no round needs it
            self.timer = None
        if self.lock is None:
            return
        if self.reused and not self.stream.replied:
            self._end(STALE)  # closed by the server while idle: never ran
            return
        self.lock._fail(self.index, self._lost_why(exc))
        self._end(CLOSED)

    def _lost_why(self, exc: Exception | None) -> str:
        """Why the connection was lost, in the C driver's words."""
        if self.tls and not self.got_data and _ends_a_tls_handshake(exc):
            # With TLS 1.3 the server checks our certificate after our side
            # of the handshake is done; its refusal (the alert lost to the
            # reset that follows) shows only here.
            return (
                "TLS: server closed the connection before any reply "
                "(client certificate refused?)"
            )
        if exc is None:
            return "server closed the connection"
        return _tls.failure_message(exc) or os_message(exc)

    # the round's side
    @property
    def usable(self) -> bool:
        return self.transport is not None and not self.transport.is_closing()

    def start(
        self, lock: _core.Lock, i: int, deadline: float, timeout_ms: int
    ) -> asyncio.Future[str]:
        """Sends master i's part of the round, which ends by deadline (loop
        time, timeout_ms after the round began); the future says how it
        ended. If the task awaiting it is cancelled, the round still goes
        on to its end: the task then waits with outcome_after()."""
        assert self.transport is not None
        self.lock, self.index = lock, i
        self.reused = not self.fresh
        self.owner = None
        self.waiter = waiter = Future(loop=self.loop)
        data = self.stream.start(lock, i, self.fresh)
        self.fresh = False
        if data is None:  # held back: the connection owes too much
            self._end(KEPT)
            return waiter
        self.transport.write(data)
        self.deadline, self.timeout_ms = deadline, timeout_ms
        timer = self.timer
        if timer is None or self.timer_at > deadline:
            if timer is not None:
                timer.cancel()
            self.timer = self.loop.call_at(deadline, self._on_timer)
            self.timer_at = deadline
        return waiter

    async def outcome_after(self, progress: Progress) -> str:
        """How the round out ended, for a task whose wait on start()'s
        future was cancelled: the round's I/O goes on to its end, so a
        cancelled acquire never forgets a master that may hold its key.
        Cancellations meanwhile are noted in progress."""
        while self.lock is not None:  # still out: wait on a new future
            self.waiter = waiter = Future(loop=self.loop)
            try:
                return await waiter
            except asyncio.CancelledError:
                progress.cancel()
        return self.outcome

    def _on_timer(self) -> None:
        """The deadline the timer was armed for passed: the round out now
        missed it, or a later round (with a later deadline) is out, and the
        timer moves on to that one's."""
        self.timer = None
        if self.lock is None:
            return  # idle: the next round arms it
        if self.deadline > self.timer_at:
            self.timer = self.loop.call_at(self.deadline, self._on_timer)
            self.timer_at = self.deadline
            return
        self.expire()

    def expire(self) -> None:
        """The round's deadline (timeout_ms after it began) passed before
        master i's answer."""
        if self.lock is None:
            return
        message = f"timeout after {self.timeout_ms} ms"
        action, late = self.stream.expire(self.lock, self.index, message)
        if late is not None and self.transport is not None:
            self.transport.write(late)
        self._end(KEPT if action == DONE else self.close())

    def skip(self) -> None:
        """The round stops waiting for this late master."""
        if self.lock is None:
            return
        action = self.stream.skip(self.lock, self.index)
        self._end(KEPT if action == DONE else self.close())

    def close(self) -> str:
        if self.transport is not None:
            self.transport.abort()  # never a late write to a dead stream
            self.transport = None
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None
        return CLOSED

    def _end(self, outcome: str) -> None:
        self.lock = None
        self.outcome = outcome
        waiter, self.waiter = self.waiter, None
        if waiter is not None and not waiter.done():
            waiter.set_result(outcome)


def connected_to_itself(transport: asyncio.BaseTransport) -> bool:
    """A connect to a local port nobody listens on can be given that very
    port and connect to itself (TCP simultaneous open); the C driver
    refuses such a "master" too."""
    sock = transport.get_extra_info("socket")
    if sock is None or sock.family not in (socket.AF_INET, socket.AF_INET6):
        return False
    try:
        return sock.getsockname() == sock.getpeername()
    except OSError:
        return False


def reset(transport: asyncio.BaseTransport) -> None:
    """Closes with a reset, so no TIME_WAIT keeps the master's port."""
    sock = transport.get_extra_info("socket")
    if sock is not None:
        with contextlib.suppress(OSError):
            sock.setsockopt(
                socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0)
            )
    transport.abort()


def _ends_a_tls_handshake(exc: Exception | None) -> bool:
    """Whether exc is how a TLS peer's refusal shows once the handshake is
    done on our side. Asked of TLS connections only, so ssl is imported
    here: hiredlock imports on a Python built without it (the wheels'
    promise; the packaging suite checks it with libssl hidden)."""
    import ssl

    return isinstance(exc, (type(None), ConnectionResetError, ssl.SSLEOFError))
