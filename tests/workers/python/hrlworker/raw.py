"""The Python floors: the two round trips every lock cycle needs (SET key
token NX PX 30000, then EVALSHA of the release script), both formatted
once and the token fixed, as tests/workers/c/floor.c does in C, with
nothing else: over a blocking socket (py-raw), and over asyncio's own
transport on one connection, a future awaited per round trip: read into a
buffer kept for the connection (a BufferedProtocol, as hiredlock.asyncio
reads: py-async-raw, the asyncio floor) or by a plain Protocol
(py-async-raw-proto: the transport makes a bytes object of 256 KiB per
read, which the allocator maps and unmaps). What hiredlock from Python and
hiredlock.asyncio add is measured against them."""

from __future__ import annotations

import asyncio
import hashlib
import socket
from typing import Callable

TTL_MS = 30000
TOKEN = b"0123456789abcdef0123456789abcdef"
RELEASE_SCRIPT = (
    b'if redis.call("get",KEYS[1]) == ARGV[1] then return '
    b'redis.call("del",KEYS[1]) else return 0 end'
)
RELEASE_SHA = hashlib.sha1(RELEASE_SCRIPT).hexdigest().encode()
OK, RELEASED = b"+OK\r\n", b":1\r\n"
LOADED = RELEASE_SHA + b"\r\n"  # how SCRIPT LOAD's reply ends


def command(*words: bytes) -> bytes:
    """One command in RESP, as hiredis formats it."""
    out = [b"*%d\r\n" % len(words)]
    for w in words:
        out.append(b"$%d\r\n%s\r\n" % (len(w), w))
    return b"".join(out)


def commands(key: bytes) -> tuple[bytes, bytes, bytes]:
    """SCRIPT LOAD, the SET and the EVALSHA of a floor on key."""
    return (
        command(b"SCRIPT", b"LOAD", RELEASE_SCRIPT),
        command(b"SET", key, TOKEN, b"NX", b"PX", b"%d" % TTL_MS),
        command(b"EVALSHA", RELEASE_SHA, b"1", key, TOKEN),
    )


def host_port(url: str) -> tuple[str, int]:
    host, port = url.removeprefix("redis://").rsplit(":", 1)
    return host, int(port)


def sync_case(url: str) -> tuple[Callable[[], bool], Callable[[], None]]:
    """py-raw: (acquire, release) over a blocking socket, as cycles.run_case
    takes them."""
    sock = socket.create_connection(host_port(url))
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    load, set_cmd, release_cmd = commands(b"bench:py-raw")

    def reply(end: bytes = b"\r\n") -> bytes:
        data = sock.recv(4096)
        while not data.endswith(end):
            more = sock.recv(4096)
            if not more:
                raise ConnectionError("server closed the connection")
            data += more
        return data

    sock.sendall(load)
    reply(LOADED)

    def acquire() -> bool:
        sock.sendall(set_cmd)
        return reply() == OK

    def release() -> None:
        sock.sendall(release_cmd)
        if reply() != RELEASED:
            raise RuntimeError("the floor's release failed")

    return acquire, release


class _Replies(asyncio.Protocol):
    """Hands each reply to the future waiting for it: what came until it
    ends with ``end`` (the floor's replies are one line each)."""

    def __init__(self) -> None:
        self.transport: asyncio.Transport | None = None
        self.waiter: asyncio.Future[bytes] | None = None
        self.buf = b""
        self.end = b"\r\n"

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]

    def data_received(self, data: bytes) -> None:
        self.buf += data
        if self.buf.endswith(self.end) and self.waiter is not None:
            waiter, self.waiter = self.waiter, None
            reply, self.buf = self.buf, b""
            if not waiter.done():
                waiter.set_result(reply)

    def connection_lost(self, exc: Exception | None) -> None:
        if self.waiter is not None and not self.waiter.done():
            self.waiter.set_exception(exc or ConnectionError("connection lost"))


class _BufferedReplies(_Replies, asyncio.BufferedProtocol):
    """The same, reading into a buffer of its own."""

    def __init__(self) -> None:
        super().__init__()
        self.buffer = memoryview(bytearray(16384))

    def get_buffer(self, sizehint: int) -> memoryview:
        return self.buffer

    def buffer_updated(self, nbytes: int) -> None:
        self.buf += self.buffer[:nbytes]
        if self.buf.endswith(self.end) and self.waiter is not None:
            waiter, self.waiter = self.waiter, None
            reply, self.buf = self.buf, b""
            if not waiter.done():
                waiter.set_result(reply)


async def async_case(url: str, buffered: bool) -> Callable[[], object]:
    """py-async-raw (buffered) and py-async-raw-proto: one cycle as a
    coroutine function (True when it got and released the key), on one
    connection of the running loop."""
    loop = asyncio.get_running_loop()
    host, port = host_port(url)
    transport, proto = await loop.create_connection(
        _BufferedReplies if buffered else _Replies, host, port
    )
    key = b"bench:py-async-raw" + (b"" if buffered else b"-proto")
    load, set_cmd, release_cmd = commands(key)

    async def round_trip(data: bytes) -> bytes:
        proto.waiter = waiter = loop.create_future()
        transport.write(data)
        return await waiter

    proto.end = LOADED
    await round_trip(load)
    proto.end = b"\r\n"

    async def cycle() -> bool:
        if await round_trip(set_cmd) != OK:
            return False
        return await round_trip(release_cmd) == RELEASED

    return cycle
