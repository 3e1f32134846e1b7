"""A small TCP proxy of our own in front of Redis masters (the kernel here
has no netem): one listener per target on 127.0.0.1, each in one of these
modes, switched at run time:

  pass        forward both ways as bytes arrive
  delay MS    forward each chunk MS milliseconds after it arrived, in each
              direction, in order (bytes already in flight still arrive
              after the client closed: a late SET lands late, as on a slow
              network)
  blackhole   accept connections but forward nothing, either way, while it
              lasts; held bytes flow, in order, once it ends (as TCP
              delivers them after a partition heals)
  refuse      the port is closed: connects are refused, open connections
              are reset
  reset       accept, then reset the connection at once (RST)
  reply TEXT  answer every command with the raw RESP line TEXT (a scripted
              server, e.g. "-LOADING Redis is loading the dataset in memory")

Run as a process:  python3 -m hrlrel.proxy --control SOCK HOST:PORT...
It prints one line, the listening ports ("ports 40001 40002 ..."), then
serves until killed. The control socket takes lines "I MODE [ARG]" (I from
1) and answers "ok" or "error ...". Proxy (below) is the client side.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import signal
import socket
import struct
import subprocess
import sys
import time


def _rst(writer: asyncio.StreamWriter) -> None:
    """Closes with a reset, not a FIN."""
    sock = writer.get_extra_info("socket")
    if sock is not None:
        with contextlib.suppress(OSError):  # already closed
            sock.setsockopt(
                socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0)
            )
    writer.transport.abort()


def _count_commands(buf: bytearray) -> int:
    """Removes complete RESP commands (arrays of bulk strings) from buf and
    returns how many there were."""
    count = 0
    while True:
        pos = 0
        if not buf.startswith(b"*"):
            if not buf:
                return count
            end = buf.find(b"\r\n")  # inline command
            if end < 0:
                return count
            del buf[: end + 2]
            count += 1
            continue
        end = buf.find(b"\r\n", pos)
        if end < 0:
            return count
        n = int(buf[1:end])
        pos = end + 2
        for _ in range(n):
            end = buf.find(b"\r\n", pos)
            if end < 0:
                return count
            size = int(buf[pos + 1 : end])
            pos = end + 2 + size + 2
            if pos > len(buf):
                return count
        del buf[:pos]
        count += 1


class Listener:
    def __init__(self, index: int, target: tuple[str, int], port: int) -> None:
        self.index = index
        self.target = target
        self.port = port
        self.mode = "pass"
        self.arg = ""
        self.server: asyncio.base_events.Server | None = None
        self.conns: set[asyncio.StreamWriter] = set()

    async def listen(self) -> None:
        self.server = await asyncio.start_server(
            self.handle, "127.0.0.1", self.port, reuse_address=True, backlog=256
        )
        self.port = self.server.sockets[0].getsockname()[1]

    async def set_mode(self, mode: str, arg: str) -> None:
        was = self.mode
        self.mode, self.arg = mode, arg
        if mode == "refuse" and was != "refuse":
            assert self.server is not None
            self.server.close()
            for w in list(self.conns):
                _rst(w)
            self.conns.clear()
            await self.server.wait_closed()
        elif mode != "refuse" and was == "refuse":
            await self.listen()

    def delay_s(self) -> float:
        return float(self.arg) / 1000 if self.mode == "delay" else 0.0

    async def handle(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        self.conns.add(writer)
        try:
            writer.get_extra_info("socket").setsockopt(
                socket.IPPROTO_TCP, socket.TCP_NODELAY, 1
            )
            if self.mode == "reset":
                _rst(writer)
                return
            if self.mode == "reply":
                await self.scripted(reader, writer)
                return
            try:
                up_r, up_w = await asyncio.open_connection(*self.target)
            except OSError:
                _rst(writer)
                return
            self.conns.add(up_w)
            up_w.get_extra_info("socket").setsockopt(
                socket.IPPROTO_TCP, socket.TCP_NODELAY, 1
            )
            await asyncio.gather(
                self.pump(reader, up_w), self.pump(up_r, writer), return_exceptions=True
            )
            self.conns.discard(up_w)
            up_w.close()
        finally:
            self.conns.discard(writer)
            writer.close()

    async def scripted(self, reader, writer) -> None:
        buf = bytearray()
        while True:
            data = await reader.read(65536)
            if not data:
                return
            buf += data
            n = _count_commands(buf)
            if n:
                writer.write((self.arg.encode() + b"\r\n") * n)
                await writer.drain()

    async def pump(self, src: asyncio.StreamReader, dst: asyncio.StreamWriter) -> None:
        """Copies src to dst, each chunk after the delay in force when it
        arrived. While blackholed nothing moves: bytes wait, in order, until
        the blackhole ends (TCP never drops bytes inside a connection; a
        partition that heals delivers them late)."""
        queue: asyncio.Queue = asyncio.Queue()

        async def sender() -> None:
            while True:
                due, data = await queue.get()
                wait = due - time.monotonic()
                if wait > 0:
                    await asyncio.sleep(wait)
                while self.mode == "blackhole":
                    await asyncio.sleep(0.005)
                if data is None:
                    if dst.can_write_eof():
                        dst.write_eof()
                    return
                dst.write(data)
                await dst.drain()

        task = asyncio.ensure_future(sender())
        try:
            while True:
                data = await src.read(65536)
                queue.put_nowait((time.monotonic() + self.delay_s(), data or None))
                if not data:
                    break
            await task
        except (ConnectionError, OSError):
            task.cancel()
            _rst(dst)


async def serve(targets: list[tuple[str, int]], control: str) -> None:
    listeners = [Listener(i + 1, t, 0) for i, t in enumerate(targets)]
    for lst in listeners:
        await lst.listen()

    async def on_control(reader, writer) -> None:
        while True:
            line = await reader.readline()
            if not line:
                break
            parts = line.decode().rstrip("\n").split(" ", 2)
            try:
                lst = listeners[int(parts[0]) - 1]
                mode = parts[1]
                arg = parts[2] if len(parts) > 2 else ""
                if mode not in (
                    "pass",
                    "delay",
                    "blackhole",
                    "refuse",
                    "reset",
                    "reply",
                ):
                    raise ValueError(f"unknown mode {mode}")
                if mode == "delay":
                    float(arg)
                await lst.set_mode(mode, arg)
                writer.write(b"ok\n")
            except Exception as err:  # reported to the controller
                writer.write(f"error {err}\n".encode())
            await writer.drain()
        writer.close()

    await asyncio.start_unix_server(on_control, control)
    print("ports " + " ".join(str(lst.port) for lst in listeners), flush=True)
    loop = asyncio.get_running_loop()
    # A test proxy: on SIGTERM, drop every connection at once.
    loop.add_signal_handler(signal.SIGTERM, lambda: os._exit(0))
    await asyncio.Event().wait()


class Proxy:
    """Starts the proxy process in front of targets [(host, port), ...]."""

    def __init__(self, targets: list[tuple[str, int]], workdir: str) -> None:
        self.control = os.path.join(workdir, "proxy.ctl")
        env = dict(os.environ)
        env["PYTHONPATH"] = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "hrlrel.proxy", "--control", self.control]
            + [f"{h}:{p}" for h, p in targets],
            stdout=subprocess.PIPE,
            text=True,
            env=env,
        )
        line = self.proc.stdout.readline().split()
        if not line or line[0] != "ports":
            raise RuntimeError("proxy did not start")
        self.ports = [int(p) for p in line[1:]]
        self.urls = [f"redis://127.0.0.1:{p}" for p in self.ports]
        self.sock = socket.socket(socket.AF_UNIX)
        self.sock.connect(self.control)
        self.file = self.sock.makefile("rw")

    def set(self, i: int, mode: str, arg: object = "") -> None:
        self.file.write(f"{i} {mode} {arg}".rstrip() + "\n")
        self.file.flush()
        answer = self.file.readline().strip()
        if answer != "ok":
            raise RuntimeError(f"proxy: {answer}")

    def stop(self) -> None:
        self.file.close()
        self.sock.close()
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--control", required=True)
    ap.add_argument("targets", nargs="+")
    args = ap.parse_args()
    targets = []
    for t in args.targets:
        host, _, port = t.rpartition(":")
        targets.append((host, int(port)))
    if os.path.exists(args.control):
        os.unlink(args.control)
    asyncio.run(serve(targets, args.control))


if __name__ == "__main__":
    main()
