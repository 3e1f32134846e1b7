"""The servers every runtime's bad-input table runs against, started once
by the driver and passed on in HRL_BAD_* variables:

  HRL_BAD_OK        a healthy master (and HRL_BAD_OK_SOCK, HRL_BAD_OK_PORT)
  HRL_BAD_RO        a master turned replica of a dead port: READONLY
  HRL_BAD_OOM       maxmemory 1: OOM
  HRL_BAD_BUSY      running an endless read-only script: BUSY
  HRL_BAD_LOADING   our proxy answering every command -LOADING (a scripted
                    server: a real one says it only while loading a dataset)
  HRL_BAD_NOAUTH    a master with a password, URL without one: NOAUTH
  HRL_BAD_WRONGPASS the same with a wrong password: WRONGPASS
  HRL_BAD_REFUSED   a closed local port
  HRL_BAD_RESET     our proxy accepting and resetting every connection
  HRL_BAD_DUP       the healthy master's URL written another way (localhost)
"""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import tempfile

from .fixture import Servers
from .inject import dead_port
from .proxy import Proxy


class BusyScript:
    """Keeps a master inside an endless read-only script (BUSY for
    everyone else) until stopped with SCRIPT KILL."""

    def __init__(self, servers: Servers, i: int) -> None:
        self.servers, self.i = servers, i

    def start(self) -> None:
        r = self.servers.redis(self.i)
        r.config_set("busy-reply-threshold", 50)
        self.sock = socket.socket(socket.AF_UNIX)
        self.sock.connect(self.servers.unix_paths[self.i - 1])
        script = b"while true do end"
        self.sock.sendall(
            b"*3\r\n$4\r\nEVAL\r\n$%d\r\n%s\r\n$1\r\n0\r\n" % (len(script), script)
        )
        # Wait until the server says BUSY to others.
        probe = socket.socket(socket.AF_UNIX)
        probe.connect(self.servers.unix_paths[self.i - 1])
        probe.settimeout(5)
        for _ in range(200):
            probe.sendall(b"*1\r\n$4\r\nPING\r\n")
            if probe.recv(100).startswith(b"-BUSY"):
                break
        probe.close()

    def stop(self) -> None:
        kill = socket.socket(socket.AF_UNIX)
        kill.connect(self.servers.unix_paths[self.i - 1])
        kill.settimeout(5)
        kill.sendall(b"*2\r\n$6\r\nSCRIPT\r\n$4\r\nKILL\r\n")
        kill.recv(100)
        # The script stops at its next check: wait until the server answers.
        for _ in range(500):
            kill.sendall(b"*1\r\n$4\r\nPING\r\n")
            if kill.recv(100).startswith(b"+PONG"):
                break
        kill.close()
        self.sock.close()


@contextlib.contextmanager
def bad_env():
    work = tempfile.mkdtemp(prefix="hrlbad.")
    plain = Servers(4)
    locked = Servers(1, "--password", "s3cret")
    px = Proxy([("127.0.0.1", plain.ports[0])] * 2, work)
    try:
        px.set(1, "reply", "-LOADING Redis is loading the dataset in memory")
        px.set(2, "reset")
        plain.redis(2).execute_command("REPLICAOF", "127.0.0.1", dead_port())
        plain.redis(3).config_set("maxmemory", 1)
        busy = BusyScript(plain, 4)
        port = locked.ports[0]
        env = {
            "HRL_BAD_OK": plain.urls[0],
            "HRL_BAD_OK_SOCK": plain.unix_paths[0],
            "HRL_BAD_OK_PORT": str(plain.ports[0]),
            "HRL_BAD_DUP": f"redis://localhost:{plain.ports[0]}",
            "HRL_BAD_RO": plain.urls[1],
            "HRL_BAD_OOM": plain.urls[2],
            "HRL_BAD_BUSY": plain.urls[3],
            "HRL_BAD_LOADING": px.urls[0],
            "HRL_BAD_RESET": px.urls[1],
            "HRL_BAD_NOAUTH": f"redis://127.0.0.1:{port}",
            "HRL_BAD_WRONGPASS": f"redis://:wrong@127.0.0.1:{port}",
            "HRL_BAD_REFUSED": f"redis://127.0.0.1:{dead_port()}",
            "HRL_BAD_MISSING_SOCK": "unix://" + os.path.join(work, "no-such.sock"),
        }
        yield env, busy
    finally:
        px.stop()
        plain.stop()
        locked.stop()
        shutil.rmtree(work, ignore_errors=True)
