"""The asyncio driver's waiting: how tasks hear the hand-offs of the locks
they wait for (docs/DESIGN.md, section 2).

One subscriber connection per event loop and master, whatever the number
of clients: the clients that wait in a loop hear on one channel (the
first one's, ``_core.Client._share_channel``), and a connection is shared
by every client with the same ``_core.Client._subscriber_key`` (the
master, its TLS settings and credentials, the channel). So a client made
per call in a web handler costs no connection of its own. A connection
(a ``Subscription``) is opened by the first wait on it and closed when the
last client that used it is closed, or after it had no waiter for ``IDLE``
seconds (clients dropped without ``close()``). Before, every
client kept its own connections and task until it was closed: one made per
call and never closed leaked them (issue 24, item 1).

A task whose acquire waits registers its token (``Listener.enter``) before
the round that queues it, then waits on its own event between tries, with
the wait the core gave (the holder's TTL, retry_delay, the caller's
timeout): a lost message only makes it slower. The bytes and where they go
are the core's (``_core.Subscriber``: handshake, SUBSCRIBE, the pushes);
this module connects, moves bytes and sets events.

A connection that breaks is opened again at once, then after 50 ms doubling
to 1 s while the master refuses; one not subscribed within connect_timeout
+ timeout is given up the same way. Its subscription coming up wakes every
waiter: a hand-off may have been published while it was down.
"""

from __future__ import annotations

import asyncio
import contextlib
import weakref
from typing import TYPE_CHECKING

from .. import _core
from ._connection import connected_to_itself, reset

if TYPE_CHECKING:
    from ._driver import Master

MORE, SEND, READY, HANDOFF, CLOSE, REDIRECT = (
    _core.NOTICE_MORE,
    _core.NOTICE_SEND,
    _core.NOTICE_READY,
    _core.NOTICE_HANDOFF,
    _core.NOTICE_CLOSE,
    _core.NOTICE_REDIRECT,
)

# A connection without waiters for this long is closed.
IDLE = 60.0


class Waiter:
    """A waiting acquire: what its subscriber connections heard for it."""

    __slots__ = ("at", "event", "notified", "token", "woken")

    def __init__(self, token: str) -> None:
        self.token = token
        self.notified: set[int] = set()
        self.woken = False
        self.event = asyncio.Event()
        # The subscriptions it is registered with, and its client's index
        # of each one's master.
        self.at: dict[Subscription, int] = {}

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


class Stream(asyncio.Protocol):
    """One subscriber connection: its bytes through the core's stream."""

    def __init__(self, sub: Subscription) -> None:
        self.sub = sub
        self.transport: asyncio.Transport | None = None
        self.subscribed = False
        self.redirected = False
        self.ended = asyncio.get_running_loop().create_future()
        self.guard: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]
        loop = asyncio.get_running_loop()
        self.guard = loop.call_later(self.sub.subscribe_timeout, self.abort)
        self.transport.write(self.sub.stream.start())

    def data_received(self, data: bytes) -> None:
        notice, out = self.sub.stream.feed(data)
        while notice != MORE:
            if notice == SEND and self.transport is not None:
                self.transport.write(out)
            elif notice == READY:
                self.subscribed = True
                if self.guard is not None:
                    self.guard.cancel()
                self.sub.tell(None)
            elif notice == HANDOFF:
                self.sub.tell(out.decode("ascii"))
            else:  # CLOSE, or REDIRECT: a sentinel named the primary
                self.redirected = notice == REDIRECT
                self.abort()
                return
            notice, out = self.sub.stream.feed(b"")

    def abort(self) -> None:
        if self.transport is not None:
            self.transport.abort()

    def connection_lost(self, exc: Exception | None) -> None:
        if self.guard is not None:
            self.guard.cancel()
        if not self.ended.done():
            self.ended.set_result(self.subscribed)


class Subscription:
    """One subscriber connection of the loop, for every client with its
    key, and the waiters registered with it."""

    def __init__(
        self,
        state: LoopState,
        key: bytes,
        core: _core.Client,
        index: int,
        master: Master,
        timeout: float,
    ) -> None:
        self.state, self.key = state, key
        self.stream = _core.Subscriber(core, index)  # keeps core alive
        self.master = master
        self.subscribe_timeout = master.connect_timeout + timeout
        self.waiters: dict[str, Waiter] = {}
        self.users: weakref.WeakSet[Listener] = weakref.WeakSet()
        self.task: asyncio.Task[None] | None = None
        self.current: Stream | None = None
        self.idle_since = 0.0

    def add(self, listener: Listener, waiter: Waiter, i: int) -> None:
        self.users.add(listener)
        self.waiters[waiter.token] = waiter
        waiter.at[self] = i
        if self.task is None or self.task.done():
            self.task = asyncio.get_running_loop().create_task(self._run())

    def remove(self, waiter: Waiter) -> None:
        if self.waiters.get(waiter.token) is waiter:
            del self.waiters[waiter.token]
            if not self.waiters:
                self.idle_since = asyncio.get_running_loop().time()

    def tell(self, token: str | None) -> None:
        """A hand-off to token, or (None) a subscription that came up:
        every waiter tries again."""
        if token is not None:
            waiter = self.waiters.get(token)
            if waiter is not None:
                waiter.tell(waiter.at[self])
            return
        for waiter in self.waiters.values():
            waiter.tell(None)

    def idle(self) -> bool:
        if self.waiters:
            return False
        return asyncio.get_running_loop().time() - self.idle_since >= IDLE

    def stop(self) -> None:
        """Closes the connection and forgets it."""
        if self.state.subs.get(self.key) is self:
            del self.state.subs[self.key]
        if self.task is not None:
            self.task.cancel()
            self.task = None
        if self.current is not None:
            self.current.abort()
            self.current = None

    async def _connect(self) -> Stream:
        loop = asyncio.get_running_loop()
        host, port, path, _, handshake = self.stream.open()
        if path is not None:
            opening = loop.create_unix_connection(lambda: Stream(self), path)
        else:
            # A rediss:// master's subscriber goes through TLS as its
            # command connections do (the same context); a sentinel asked
            # where the primary is speaks plain TCP.
            tls = self.master.tls_options() if handshake else {}
            opening = loop.create_connection(lambda: Stream(self), host, port, **tls)
        transport, stream = await asyncio.wait_for(opening, self.master.connect_timeout)
        if connected_to_itself(transport):
            reset(transport)
            raise ConnectionRefusedError("connection refused (connected to itself)")
        return stream

    async def _run(self) -> None:
        """The connection, opened again after every break, until no client
        needs it."""
        failures = 0
        while not self.idle():
            subscribed = redirected = False
            try:
                stream = await self._connect()
            except (OSError, asyncio.TimeoutError):
                pass
            else:
                self.current = stream
                try:
                    while not stream.ended.done() and not self.idle():
                        await asyncio.wait({stream.ended}, timeout=1.0)
                    stream.abort()
                    subscribed = await asyncio.shield(stream.ended)
                    redirected = stream.redirected
                finally:
                    self.current = None
            if redirected:
                continue  # to the primary, at once
            failures = 0 if subscribed else failures + 1
            if failures > 1:
                await asyncio.sleep(min(1.0, 0.05 * 2 ** (failures - 2)))
        self.task = None
        self.stop()


class LoopState:
    """Per event loop: the client whose channel the others share, and the
    subscriptions by key."""

    def __init__(self) -> None:
        self.anchor: _core.Client | None = None
        self.subs: dict[bytes, Subscription] = {}


_loops: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, LoopState] = (
    weakref.WeakKeyDictionary()
)


def _state() -> LoopState:
    loop = asyncio.get_running_loop()
    state = _loops.get(loop)
    if state is None:
        state = _loops[loop] = LoopState()
    return state


class Listener:
    """One client's side of its loop's subscriber connections."""

    def __init__(self, core_client: _core.Client, masters: list, timeout: float):
        self.core = core_client
        self.masters = masters
        self.timeout = timeout
        self.keys: list[bytes] | None = None
        self.shared: _core.Client | None = None
        self.subs: set[Subscription] = set()
        self.adopted: asyncio.AbstractEventLoop | None = None

    def adopt(self, loop: asyncio.AbstractEventLoop) -> None:
        """Before an operation's first round: the client hears on its
        loop's channel (its queue entries name that channel), loop being
        the running one. Done once per loop (a loop's anchor never
        changes); the driver calls it only when loop is not adopted."""
        if loop is self.adopted:
            return
        state = _state()
        if state.anchor is None:
            state.anchor = self.core
        if self.shared is not state.anchor:
            self.core._share_channel(state.anchor)
            self.shared = state.anchor
            self.keys = None
        self.adopted = loop

    def enter(self, token: str) -> Waiter:
        """Registers a waiting acquire's token (before the round that
        queues it); starts the connections it needs."""
        state = _state()
        if self.keys is None:
            self.keys = [self.core._subscriber_key(i) for i in range(len(self.masters))]
        waiter = Waiter(token)
        for i, key in enumerate(self.keys):
            sub = state.subs.get(key)
            if sub is None:
                sub = Subscription(
                    state, key, self.core, i, self.masters[i], self.timeout
                )
                state.subs[key] = sub
            sub.add(self, waiter, i)
            self.subs.add(sub)
        return waiter

    def leave(self, waiter: Waiter) -> None:
        for sub in waiter.at:
            sub.remove(waiter)
        waiter.at.clear()

    def close(self) -> None:
        """The client is closed: the connections no other client uses
        close now."""
        for sub in self.subs:
            sub.users.discard(self)
            if not sub.users and not sub.waiters:
                sub.stop()
        self.subs.clear()
        self.adopted = None
