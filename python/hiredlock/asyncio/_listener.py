"""The asyncio driver's waiting: how tasks hear the hand-offs of the locks
they wait for (docs/DESIGN.md, section 2).

Per client, one subscriber connection per master, opened on the first wait
and kept until the client closes (not a connection per waiting lock),
subscribed to the client's channel. A task whose acquire waits registers
its token (``Listener.enter``) before the round that queues it, then waits
on its own event between tries, with the wait the core gave (the holder's
TTL, retry_delay, the caller's timeout): a lost message only makes it
slower. The bytes are the core's (``_core.Subscriber``: handshake,
SUBSCRIBE, the pushes); this module connects, moves bytes and sets events.

A connection that breaks is opened again at once, then after 50 ms doubling
to 1 s while the master refuses; one not subscribed within connect_timeout
+ timeout is given up the same way. Its subscription coming up wakes every
waiter: a hand-off may have been published while it was down.
"""

from __future__ import annotations

import asyncio
import contextlib

from .. import _core
from ._connection import connected_to_itself, reset

MORE, SEND, READY, HANDOFF, CLOSE = (
    _core.NOTICE_MORE,
    _core.NOTICE_SEND,
    _core.NOTICE_READY,
    _core.NOTICE_HANDOFF,
    _core.NOTICE_CLOSE,
)


class Waiter:
    """A waiting acquire: what its subscriber connections heard for it."""

    __slots__ = ("event", "notified", "token", "woken")

    def __init__(self, token: str) -> None:
        self.token = token
        self.notified: set[int] = set()
        self.woken = False
        self.event = asyncio.Event()

    def tell(self, master: int | None) -> None:
        if master is None:
            self.woken = True
        else:
            self.notified.add(master)
        self.event.set()

    async def wait(self, lock: _core.Lock, ms: int) -> None:
        """Waits up to ms for a hand-off (or a wake), then tells the lock
        what came."""
        if not self.notified and not self.woken:
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self.event.wait(), ms / 1000)
        self.event.clear()
        for i in self.notified:
            lock._notified(i)
        if self.woken:
            lock._wake()
        self.notified.clear()
        self.woken = False


class Feed(asyncio.Protocol):
    """One subscriber connection: its bytes through the core's stream."""

    def __init__(self, listener: Listener, index: int, stream: _core.Subscriber):
        self.listener = listener
        self.index = index
        self.stream = stream
        self.transport: asyncio.Transport | None = None
        self.subscribed = False
        self.ended = asyncio.get_running_loop().create_future()
        self.guard: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]
        loop = asyncio.get_running_loop()
        self.guard = loop.call_later(self.listener.subscribe_timeout, self.abort)
        self.transport.write(self.stream.start())

    def data_received(self, data: bytes) -> None:
        notice, out = self.stream.feed(data)
        while notice != MORE:
            if notice == SEND and self.transport is not None:
                self.transport.write(out)
            elif notice == READY:
                self.subscribed = True
                if self.guard is not None:
                    self.guard.cancel()
                self.listener.tell(None)
            elif notice == HANDOFF:
                self.listener.tell(self.index, out.decode("ascii"))
            elif notice == CLOSE:
                self.abort()
                return
            notice, out = self.stream.feed(b"")

    def abort(self) -> None:
        if self.transport is not None:
            self.transport.abort()

    def connection_lost(self, exc: Exception | None) -> None:
        if self.guard is not None:
            self.guard.cancel()
        if not self.ended.done():
            self.ended.set_result(self.subscribed)


class Listener:
    """The subscriber connections of one client and its waiters."""

    def __init__(self, core_client: _core.Client, masters: list, timeout: float):
        self.core = core_client
        self.masters = masters
        self.subscribe_timeout = masters[0].connect_timeout + timeout
        self.waiters: dict[str, Waiter] = {}
        self.tasks: list[asyncio.Task[None]] = []
        self.feeds: dict[int, Feed] = {}

    def enter(self, token: str) -> Waiter:
        """Registers a waiting acquire's token (before the round that queues
        it); starts the connections on the first wait."""
        if not self.tasks:
            loop = asyncio.get_running_loop()
            self.tasks = [
                loop.create_task(self._listen(i)) for i in range(len(self.masters))
            ]
        waiter = Waiter(token)
        self.waiters[token] = waiter
        return waiter

    def leave(self, waiter: Waiter) -> None:
        if self.waiters.get(waiter.token) is waiter:
            del self.waiters[waiter.token]

    def tell(self, master: int | None, token: str | None = None) -> None:
        """A hand-off of master to token, or (token None) a subscription
        that came up: every waiter tries again."""
        if token is not None:
            waiter = self.waiters.get(token)
            if waiter is not None:
                waiter.tell(master)
            return
        for waiter in self.waiters.values():
            waiter.tell(None)

    async def _connect(self, i: int) -> Feed:
        master = self.masters[i]
        loop = asyncio.get_running_loop()
        stream = _core.Subscriber(self.core, i)
        if master.path is not None:
            opening = loop.create_unix_connection(
                lambda: Feed(self, i, stream), master.path
            )
        else:
            # A rediss:// master's subscriber goes through TLS as its
            # command connections do (the same context).
            tls = master.tls_options()
            opening = loop.create_connection(
                lambda: Feed(self, i, stream), master.host, master.port, **tls
            )
        transport, feed = await asyncio.wait_for(opening, master.connect_timeout)
        if connected_to_itself(transport):
            reset(transport)
            raise ConnectionRefusedError("connection refused (connected to itself)")
        return feed

    async def _listen(self, i: int) -> None:
        """Master i's subscriber connection, until the client closes."""
        failures = 0
        while True:
            subscribed = False
            try:
                feed = await self._connect(i)
            except (OSError, asyncio.TimeoutError):
                pass
            else:
                self.feeds[i] = feed
                try:
                    subscribed = await asyncio.shield(feed.ended)
                finally:
                    self.feeds.pop(i, None)
            failures = 0 if subscribed else failures + 1
            if failures > 1:
                await asyncio.sleep(min(1.0, 0.05 * 2 ** (failures - 2)))

    def close(self) -> None:
        for task in self.tasks:
            task.cancel()
        self.tasks = []
        for feed in list(self.feeds.values()):
            feed.abort()
        self.feeds.clear()
