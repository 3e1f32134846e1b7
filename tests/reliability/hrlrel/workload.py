"""Starts the workload: M workers (tests/workers), Python and Lua mixed, each
running the "workload" command on one lock, and collects their logs (one
JSON line per step)."""

from __future__ import annotations

import json
import os
import subprocess
import time

from . import now_ns, workers

RUNTIMES = ["python", "lua5.1", "python", "luajit", "python", "lua5.4"]


class Workload:
    """M workers looping on one lock until duration has passed."""

    def __init__(
        self,
        run_dir: str,
        urls: list[str],
        data,  # fixture.Servers with the one data server
        *,
        workers: int = 16,
        lock: str = "rel:lock",
        ttl: float = 2.0,
        wait: float = 5.0,
        timeout: float = 0.2,
        connect_timeout: float = 0.5,
        retry_delay: float = 0.02,
        retry_jitter: float = 0.01,
        duration: float = 10.0,
        hold_ms: float = 0.0,
        extend_p: float = 0.0,
        fenced: bool = False,
        runtimes: list[str] | None = None,
        env_for=None,  # (worker index) -> extra env (libfaketime)
        modes=None,  # (worker index) -> (mode, permits): holds (case 10)
        seed: int = 1,
    ) -> None:
        self.run_dir = run_dir
        self.params = dict(
            urls=urls,
            lock=lock,
            ttl=ttl,
            wait=wait,
            timeout=timeout,
            connect_timeout=connect_timeout,
            retry_delay=retry_delay,
            retry_jitter=retry_jitter,
            duration=duration,
            hold_ms=hold_ms,
            extend_p=extend_p,
            fenced=int(fenced),
        )
        self.data = data
        self.n_workers = workers
        self.runtimes = runtimes or RUNTIMES
        self.env_for = env_for or (lambda i: {})
        self.modes = modes
        self.seed = seed
        self.procs: dict[str, subprocess.Popen] = {}
        self.runtime_of: dict[str, str] = {}
        self.logs: list[str] = []

    def start(self, delay: float = 1.0) -> int:
        """Starts every worker; they begin their loops together, delay
        seconds from now (so slow interpreter start-ups do not skew it).
        Returns that start time (monotonic ns)."""
        os.makedirs(self.run_dir, exist_ok=True)
        start_at = now_ns() + int(delay * 1e9)
        data_sock = self.data.unix_paths[0]
        for i in range(self.n_workers):
            rt = self.runtimes[i % len(self.runtimes)]
            wid = f"w{i:02d}{'py' if rt == 'python' else rt.replace('lua', 'l')}"
            log = os.path.join(self.run_dir, f"{wid}.jsonl")
            cfg = dict(
                {k: v for k, v in self.params.items() if k != "urls"},
                id=wid,
                seed=self.seed * 1000 + i,
                log=log,
                start_at=start_at,
                runtime=rt,
                data=data_sock,
                data_port=self.data.ports[0],
            )
            if self.modes is not None:
                mode, permits = self.modes(i)
                cfg["mode"] = mode
                if permits is not None:
                    cfg["permits"] = permits
            # The worker's own output; it lives as long as the worker.
            errf = open(os.path.join(self.run_dir, f"{wid}.stderr"), "w")  # noqa: SIM115
            worker = workers.start(
                rt,
                self.params["urls"],
                env=self.env_for(i),
                stdout=errf,
                stderr=errf,
                cwd=self.run_dir,
            )
            # One command, then end of input: the worker runs the loop and
            # exits (the injector signals it meanwhile, by pid).
            worker.send(workers.command("workload", **cfg))
            worker.finish()
            self.procs[wid] = worker.proc
            self.runtime_of[wid] = rt
            self.logs.append(log)
        return start_at

    def wait(self, timeout: float) -> dict[str, int]:
        """Waits for every worker; returns their exit codes."""
        deadline = time.monotonic() + timeout
        codes = {}
        for wid, p in self.procs.items():
            try:
                codes[wid] = p.wait(max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                p.kill()
                codes[wid] = p.wait()
        return codes

    def stderr_of(self, wid: str) -> str:
        with open(os.path.join(self.run_dir, f"{wid}.stderr")) as f:
            return f.read()

    def last_event(self, wid: str) -> dict | None:
        """The last complete line of a worker's log (for the injector to
        find a holder)."""
        path = os.path.join(self.run_dir, f"{wid}.jsonl")
        try:
            with open(path, "rb") as f:
                f.seek(0, os.SEEK_END)
                size = f.tell()
                f.seek(max(0, size - 4096))
                lines = f.read().split(b"\n")
        except FileNotFoundError:
            return None
        for line in reversed(lines):
            if line.endswith(b"}"):
                try:
                    return json.loads(line)
                except ValueError:
                    continue
        return None


def read_logs(paths: list[str]) -> list[dict]:
    events = []
    for p in paths:
        with open(p) as f:
            for line in f:
                line = line.strip()
                if line:
                    events.append(json.loads(line))
    return events
