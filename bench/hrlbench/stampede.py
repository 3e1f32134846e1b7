"""The stampede phase (issue 14): 200 concurrent requests for one key in one
nginx, whose first holder works 100 ms while the others wait for the lock
and then find the cache filled; hiredlock (one master: a lock valid across
hosts) with a client per worker and with a client made per request (issue
24: both wait alike) next to lua-resty-lock (a shared dict: one host) in
the same nginx. Target: hiredlock's total (a client per worker) within
10 ms of lua-resty-lock's.

lua-resty-lock is on no registry we reach: its directory (the one holding
resty/lock.lua) is given at run time (--resty-lock DIR, or the environment
variable HRL_RESTY_LOCK) and loaded from there; without it only hiredlock
runs. The app is bench/nginx/stampede.lua, the configuration
bench/nginx/stampede.conf.in.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import signal
import socket
import statistics
import subprocess
import tempfile
import time
import uuid
from pathlib import Path

from . import REPO, log
from .machine import pin
from .stats import percentile

NGINX = os.environ.get("HRL_NGINX", "/usr/sbin/nginx")
HERE = REPO / "bench" / "nginx"
TREE = REPO / "build" / "bench" / "lua" / "5.1"
WORKERS = 2
REQUESTS = 200
WORK_MS = 100.0
BOUND_MS = 10.0
LABELS = {
    "hiredlock": "hiredlock (1 master, via Redis)",
    "hiredlock-request": "hiredlock, a client per request (1 master)",
    "resty": "lua-resty-lock (shared dict)",
}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Nginx:
    """An nginx of our own in a temp prefix (removed by stop)."""

    def __init__(self, url: str, resty: str | None, cpu: int | None) -> None:
        root = REPO / "build" / "bench"
        root.mkdir(parents=True, exist_ok=True)
        self.prefix = tempfile.mkdtemp(prefix="stampede.", dir=root)
        os.chmod(self.prefix, 0o755)
        self.port = free_port()
        values = {
            "@USER@": "user root root;" if os.geteuid() == 0 else "",
            "@WORKERS@": str(WORKERS),
            "@AFFINITY@": "",
            "@PREFIX@": self.prefix,
            "@PORT@": str(self.port),
            "@TREE@": str(TREE),
            "@HERE@": str(HERE),
            "@RESTY@": f"{resty}/?.lua" if resty else "",
        }
        text = (HERE / "stampede.conf.in").read_text()
        for k, v in values.items():
            text = text.replace(k, v)
        conf = Path(self.prefix) / "nginx.conf"
        conf.write_text(text)
        self.proc = subprocess.Popen(
            [NGINX, "-p", self.prefix, "-c", str(conf)],
            env={**os.environ, "HRL_STAMPEDE_URL": url},
            stdin=subprocess.DEVNULL,
            start_new_session=True,
            preexec_fn=pin(cpu),
        )
        for _ in range(300):
            try:
                with socket.create_connection(("127.0.0.1", self.port), 0.2):
                    return
            except OSError:
                time.sleep(0.05)
        self.stop()
        raise RuntimeError("nginx did not start")

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGQUIT)
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.proc.wait(10)
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()
        shutil.rmtree(self.prefix, ignore_errors=True)


async def _get(reader, writer, path: str) -> tuple[int, dict]:
    writer.write(f"GET {path} HTTP/1.1\r\nHost: b\r\n\r\n".encode())
    await writer.drain()
    status = int((await reader.readline()).split()[1])
    headers = {}
    while True:
        line = (await reader.readline()).decode().rstrip("\r\n")
        if not line:
            break
        k, _, v = line.partition(":")
        headers[k.strip().lower()] = v.strip()
    await reader.readexactly(int(headers.get("content-length", 0)))
    return status, headers


async def burst(port: int, lib: str, key: str) -> list[tuple[int, dict]]:
    """REQUESTS requests at once, on connections opened beforehand."""
    conns = [await asyncio.open_connection("127.0.0.1", port) for _ in range(REQUESTS)]
    await asyncio.gather(*(_get(r, w, "/ping") for r, w in conns))
    path = f"/stampede?lib={lib}&key={key}&work={WORK_MS / 1000:g}"
    answers = await asyncio.gather(*(_get(r, w, path) for r, w in conns))
    for _, w in conns:
        w.close()
    return answers


def one(port: int, lib: str) -> dict:
    answers = asyncio.run(burst(port, lib, f"bench:stampede:{uuid.uuid4().hex}"))
    ok = [h for status, h in answers if status == 200]
    total = max(float(h["x-done"]) for h in ok) - min(float(h["x-arrive"]) for h in ok)
    after = sorted(float(h["x-after"]) * 1000 for h in ok if "x-after" in h)
    return {"served": len(ok), "total_ms": total * 1000, "after_ms": after}


def stampede_phase(args, urls) -> dict:
    resty = args.resty_lock or os.environ.get("HRL_RESTY_LOCK")
    if resty and not (Path(resty) / "resty" / "lock.lua").exists():
        log(f"stampede: no resty/lock.lua under {resty}: hiredlock alone")
        resty = None
    libs = ["hiredlock", "hiredlock-request"] + (["resty"] if resty else [])
    ngx = Nginx(urls[0], resty, args.cpu)
    try:
        for lib in libs:  # warm: connections, subscriptions, JIT
            one(ngx.port, lib)
        runs: dict[str, list[dict]] = {lib: [] for lib in libs}
        for rep in range(args.stampede_reps):
            for lib in libs if rep % 2 == 0 else reversed(libs):
                log(f"stampede: {lib}, repetition {rep + 1}/{args.stampede_reps}")
                runs[lib].append(one(ngx.port, lib))
    finally:
        ngx.stop()
    out = {}
    for lib, rs in runs.items():
        after = sorted(x for r in rs for x in r["after_ms"])
        out[lib] = {
            "label": LABELS[lib],
            "total_ms": statistics.median(r["total_ms"] for r in rs),
            "totals_ms": [round(r["total_ms"], 2) for r in rs],
            "served": min(r["served"] for r in rs),
            "after_release_ms": {
                "p50": percentile(after, 50),
                "p99": percentile(after, 99),
                "max": after[-1] if after else float("nan"),
            },
        }
    result = {
        "requests": REQUESTS,
        "workers": WORKERS,
        "work_ms": WORK_MS,
        "reps": args.stampede_reps,
        "libs": out,
    }
    if "resty" in out:
        h, r = out["hiredlock"]["total_ms"], out["resty"]["total_ms"]
        result["target"] = {
            "hiredlock_ms": h,
            "resty_ms": r,
            "diff_ms": h - r,
            "bound_ms": BOUND_MS,
            "met": h - r <= BOUND_MS,
        }
    return result
