"""The fault injector: drives the shared launcher (kill -9, restart now or
after a delay, SIGSTOP/SIGCONT of masters), the workers (SIGSTOP of a lock
holder), the masters' own commands (REPLICAOF -> READONLY, maxmemory ->
OOM, SCRIPT FLUSH -> NOSCRIPT) and our proxy (delay, blackhole, refuse).
Every fault and every heal is logged with its monotonic time, so the
checker can measure recovery."""

from __future__ import annotations

import signal
import socket
import subprocess
import threading
import time
from concurrent.futures import ThreadPoolExecutor

from . import now_ns


def dead_port() -> int:
    """A local port nothing listens on (for REPLICAOF: the master turns
    replica, read-only, and never syncs)."""
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


class Injector:
    def __init__(self, masters, proxy=None, workload=None) -> None:
        self.masters = masters
        self.proxy = proxy
        self.workload = workload
        self.events: list[dict] = []
        self.stop = threading.Event()
        self.pool = ThreadPoolExecutor(max_workers=8)
        self.broken: dict[int, str] = {}  # node -> how (for heal_all)
        self.pending: dict[int, float] = {}  # node -> when its delayed restart ends

    def log(self, ev: str, what: str, **extra) -> dict:
        e = {"ev": ev, "what": what, "t": now_ns(), **extra}
        self.events.append(e)
        return e

    def parallel(self, fn, nodes) -> None:
        list(self.pool.map(fn, nodes))

    # --- masters -----------------------------------------------------------
    def kill(self, nodes) -> None:
        self.parallel(self.masters.kill, nodes)
        for i in nodes:
            self.broken[i] = "killed"

    def restart_one(self, i: int, delay: float | None = None) -> None:
        """Restarts node i, again if its port was taken meanwhile: the
        launcher's ports (20000-60999) overlap the kernel's ephemeral range,
        and clients that keep connecting to a dead master's port can get
        that very port as their own (a TCP self-connect) for a moment."""
        for attempt in range(10):
            try:
                self.masters.restart(i, delay)
                return
            except subprocess.CalledProcessError as err:
                if attempt == 9:
                    port = self.masters.ports[i - 1]
                    who = subprocess.run(
                        ["ss", "-tanp", f"( sport = :{port} or dport = :{port} )"],
                        capture_output=True,
                        text=True,
                    ).stdout
                    raise RuntimeError(
                        f"restart of node {i}: {err.stderr}; sockets on {port}:\n{who}"
                    ) from err
                self.log("retry", f"restart of node {i}: {err.stderr.strip()[-200:]}")
                time.sleep(0.2)

    def restart(self, nodes, delay: float | None = None) -> None:
        self.parallel(lambda i: self.restart_one(i, delay), nodes)
        for i in nodes:
            self.broken.pop(i, None)
            if delay is not None:
                self.pending[i] = time.monotonic() + delay

    def pause(self, nodes) -> None:
        self.parallel(self.masters.pause, nodes)
        for i in nodes:
            self.broken[i] = "paused"

    def resume(self, nodes) -> None:
        self.parallel(self.masters.resume, nodes)
        for i in nodes:
            self.broken.pop(i, None)

    def readonly(self, nodes) -> None:
        port = dead_port()
        self.parallel(
            lambda i: self.masters.redis(i).execute_command(
                "REPLICAOF", "127.0.0.1", port
            ),
            nodes,
        )
        for i in nodes:
            self.broken[i] = "readonly"

    def writable(self, nodes) -> None:
        self.parallel(
            lambda i: self.masters.redis(i).execute_command("REPLICAOF", "NO", "ONE"),
            nodes,
        )
        for i in nodes:
            self.broken.pop(i, None)

    def oom(self, nodes) -> None:
        self.parallel(lambda i: self.masters.redis(i).config_set("maxmemory", 1), nodes)
        for i in nodes:
            self.broken[i] = "oom"

    def no_oom(self, nodes) -> None:
        self.parallel(lambda i: self.masters.redis(i).config_set("maxmemory", 0), nodes)
        for i in nodes:
            self.broken.pop(i, None)

    def script_flush(self, nodes) -> None:
        self.parallel(lambda i: self.masters.redis(i).script_flush(), nodes)

    # --- proxy -------------------------------------------------------------
    def proxy_mode(self, nodes, mode: str, arg: object = "") -> None:
        for i in nodes:
            self.proxy.set(i, mode, arg)
            if mode == "pass":
                self.broken.pop(i, None)
            else:
                self.broken[i] = "proxy"

    # --- workers -----------------------------------------------------------
    def find_holder(self, want: str = "read", fresh_ms: float = 1e9):
        """A worker whose last logged step is `want` ("read": inside its
        critical section, before the write-back; "acq": just acquired)."""
        for wid in self.workload.procs:
            ev = self.workload.last_event(wid)
            if ev is None or ev["ev"] != want:
                continue
            if want == "acq" and not ev["ok"]:
                continue
            t = ev.get("t", ev.get("t1"))
            if (now_ns() - t) / 1e6 <= fresh_ms:
                return wid, ev
        return None, None

    def stop_worker(self, wid: str) -> None:
        self.workload.procs[wid].send_signal(signal.SIGSTOP)

    def cont_worker(self, wid: str) -> None:
        self.workload.procs[wid].send_signal(signal.SIGCONT)

    def sleep(self, seconds: float) -> bool:
        """Sleeps unless told to stop; False when stopped."""
        return not self.stop.wait(seconds)

    def heal_all(self) -> None:
        """Undoes every fault still in place (end of a run)."""
        # A delayed restart still pending finishes on its own: wait for it
        # rather than race it with a restart of ours.
        last = max(self.pending.values(), default=0.0)
        wait_for(
            lambda: all(s == "running" for s in self.masters.status().values()),
            max(0.0, last - time.monotonic()) + 5.0,
            0.05,
        )
        states = self.masters.status()
        for i, state in states.items():
            if state == "paused":
                self.masters.resume(i)
            elif state == "dead":
                self.restart_one(i)
        for i, how in list(self.broken.items()):
            if how == "readonly":
                self.writable([i])
            elif how == "oom":
                self.no_oom([i])
            elif how == "proxy":
                self.proxy_mode([i], "pass")
        self.broken.clear()

    def run_in_thread(self, schedule) -> threading.Thread:
        def body():
            try:
                schedule(self)
            except Exception as err:  # shown in the result, fails the case
                self.log("error", repr(err))

        th = threading.Thread(target=body, daemon=True)
        th.start()
        return th

    def wait_until(self, t_ns: int) -> bool:
        return self.sleep(max(0.0, (t_ns - now_ns()) / 1e9))

    def close(self) -> None:
        self.pool.shutdown(wait=True)


def wait_for(cond, timeout: float, step: float = 0.005) -> bool:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if cond():
            return True
        time.sleep(step)
    return cond()
