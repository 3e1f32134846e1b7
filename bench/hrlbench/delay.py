"""The delay phase (issue 14): loopback hides what a fan-out saves, so each
of 5 masters sits behind a toxiproxy (the kernel here has no netem) that
adds a fixed delay, and one client at a time runs back-to-back uncontended
cycles at N = 1, 3 and 5: hiredlock from C, Python and Lua, node-redlock and
pottery. Target: hiredlock's N = 5 cycle within 1.15x its N = 1 cycle at
0.5 ms one way.

toxiproxy (github.com/Shopify/toxiproxy v2.5.0, built by bench/run.sh into
build/bench/toxiproxy with `go install`, listening on 127.0.0.1 only, on
the CPUs the benchmark leaves free: it plays the network) adds latency in
whole milliseconds. What a request/reply round pays is the round
trip, so 0.5 ms each way is 1 ms on the request path; 1 ms each way is 1 ms
on both paths. 0.25 ms each way cannot be expressed and is not measured.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import statistics
import subprocess
import time
import urllib.request

from . import REPO, log
from .pool import Workers

TOXIPROXY = REPO / "build" / "bench" / "toxiproxy" / "server"
MASTERS = (1, 3, 5)
# One-way delay (ms) -> (request path ms, reply path ms), whole ms.
DELAYS = {0.0: (0, 0), 0.5: (1, 0), 1.0: (1, 1)}
# case id -> (worker kind, its case name with {n}, label)
CASES = {
    "c": ("c", "c-n{n}", "hiredlock, C"),
    "py": ("py", "py-n{n}", "hiredlock, Python"),
    "luajit": ("luajit", "lua-n{n}", "hiredlock, LuaJIT"),
    "node": ("node", "node-n{n}", "node-redlock 5 (ioredis)"),
    "pottery": ("py", "pottery-n{n}", "pottery Redlock (redis-py, hiredis)"),
}
RATIO_MAX = 1.15


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def off_cpu(cpu: int | None):
    """The proxy plays the network: on the CPUs the benchmark leaves free
    (when there are any), not competing with clients and servers."""
    others = set(range(os.cpu_count() or 1)) - {cpu}
    if cpu is None or not others:
        return None
    return lambda: os.sched_setaffinity(0, others)


class Toxiproxy:
    """A toxiproxy server of our own on 127.0.0.1, driven over its API."""

    def __init__(self, cpu: int | None) -> None:
        self.port = free_port()
        self.proc = subprocess.Popen(
            [str(TOXIPROXY), "-host", "127.0.0.1", "-port", str(self.port)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            preexec_fn=off_cpu(cpu),
        )
        for _ in range(200):
            try:
                self.call("GET", "/version")
                return
            except OSError:
                time.sleep(0.05)
        self.close()
        raise RuntimeError("toxiproxy did not start")

    def call(self, method: str, path: str, body: dict | None = None):
        req = urllib.request.Request(
            f"http://127.0.0.1:{self.port}{path}",
            data=None if body is None else json.dumps(body).encode(),
            method=method,
            headers={"Content-Type": "application/json"},
        )
        with urllib.request.urlopen(req, timeout=5) as resp:
            text = resp.read().decode()
        return json.loads(text) if text.strip().startswith(("{", "[")) else text

    def proxy(self, name: str, upstream_port: int) -> int:
        """A proxy to 127.0.0.1:upstream_port; returns its listening port."""
        p = self.call(
            "POST",
            "/proxies",
            {
                "name": name,
                "listen": f"127.0.0.1:{free_port()}",
                "upstream": f"127.0.0.1:{upstream_port}",
                "enabled": True,
            },
        )
        return int(p["listen"].rsplit(":", 1)[1])

    def set_delay(self, name: str, up_ms: int, down_ms: int) -> None:
        for stream, ms in (("upstream", up_ms), ("downstream", down_ms)):
            toxic = f"{name}-{stream}"
            with contextlib.suppress(OSError):  # none yet
                self.call("DELETE", f"/proxies/{name}/toxics/{toxic}")
            if ms > 0:
                self.call(
                    "POST",
                    f"/proxies/{name}/toxics",
                    {
                        "name": toxic,
                        "type": "latency",
                        "stream": stream,
                        "attributes": {"latency": ms, "jitter": 0},
                    },
                )

    def close(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def delay_phase(args, urls, cases_available) -> dict:
    if not TOXIPROXY.exists():
        log(f"delay: {TOXIPROXY} is missing (bench/run.sh builds it): skipped")
        return {}
    tp = Toxiproxy(args.cpu)
    try:
        names = [f"m{i}" for i in range(1, 6)]
        ports = [tp.proxy(nm, int(u.rsplit(":", 1)[1])) for nm, u in zip(names, urls)]
        proxied = [f"redis://127.0.0.1:{p}" for p in ports]
        workers = Workers(proxied, args.cpu)
        ids = [c for c in CASES if CASES[c][0] != "node" or cases_available("node")]
        cycle_ms: dict[str, dict[str, dict[str, float]]] = {c: {} for c in ids}
        try:
            for d, (up, down) in DELAYS.items():
                for nm in names:
                    tp.set_delay(nm, up, down)
                log(f"delay: {d:g} ms one way ({up} + {down} ms per round trip)")
                samples: dict[tuple[str, int], list[float]] = {}
                for _ in range(args.delay_reps):
                    for cid in ids:
                        kind, case, _ = CASES[cid]
                        for n in MASTERS:
                            r = workers[kind].call(
                                f"run {case.format(n=n)} {args.delay_seconds}"
                            )
                            ms = r["elapsed"] / max(1, r["cycles"]) * 1000
                            samples.setdefault((cid, n), []).append(ms)
                for (cid, n), v in samples.items():
                    cycle_ms[cid].setdefault(f"{d:g}", {})[str(n)] = statistics.median(
                        v
                    )
        finally:
            workers.close()
    finally:
        tp.close()
    targets = []
    for cid in ("c", "py", "luajit"):
        at = cycle_ms[cid].get("0.5", {})
        if "1" in at and "5" in at:
            ratio = at["5"] / at["1"]
            targets.append(
                {
                    "what": f"{CASES[cid][2]}: N = 5 cycle / N = 1 cycle at 0.5 ms",
                    "ratio": ratio,
                    "op": "<=",
                    "bound": RATIO_MAX,
                    "met": ratio <= RATIO_MAX,
                }
            )
    return {
        "proxy": "toxiproxy 2.5.0 (latency toxics, whole milliseconds)",
        "delays_ms": list(DELAYS),
        "paths_ms": {f"{d:g}": list(p) for d, p in DELAYS.items()},
        "masters": list(MASTERS),
        "seconds": args.delay_seconds,
        "reps": args.delay_reps,
        "not_measured": "0.25 ms one way: toxiproxy's latency is whole ms",
        "cases": {
            cid: {"label": CASES[cid][2], "cycle_ms": cycle_ms[cid]} for cid in ids
        },
        "targets": targets,
    }
