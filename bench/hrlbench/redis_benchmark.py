"""The redis-benchmark floor case."""

from __future__ import annotations

import subprocess
import time

from .machine import pin


class RedisBenchmark:
    """redis-benchmark -c 1 on master 1, SET NX PX and EVALSHA in turn; a
    cycle is one of each, so cycles/s = 1 / (1/rps_set + 1/rps_evalsha)."""

    TOKEN = "0123456789abcdef0123456789abcdef"
    SHA = "b70c2384248f88e6b75b9f89241a180f856ad852"

    def __init__(self, port: str, cpu: int | None) -> None:
        self.port = port
        self.cpu = cpu
        self.rate_guess = 5000.0

    def _one(self, count: int, *command: str) -> dict:
        p = subprocess.run(
            [
                "redis-benchmark",
                "-h",
                "127.0.0.1",
                "-p",
                self.port,
                "-c",
                "1",
                "-n",
                str(count),
                "-r",
                "1000000000",
                "--csv",
                *command,
            ],
            capture_output=True,
            text=True,
            check=True,
            preexec_fn=pin(self.cpu),
        )
        rows = [r for r in p.stdout.splitlines() if r.startswith('"')]
        head = [h.strip('"') for h in rows[0].split(",")]
        vals = [v.strip('"') for v in rows[1].split(",")]
        row = dict(zip(head, vals))
        return {
            "rps": float(row["rps"]),
            "p50": float(row["p50_latency_ms"]) * 1000,
            "p99": float(row["p99_latency_ms"]) * 1000,
            "max": float(row["max_latency_ms"]) * 1000,
        }

    def run(self, seconds: float) -> dict:
        count = max(200, int(self.rate_guess * seconds))
        t0 = time.monotonic()
        s = self._one(
            count, "SET", "bench:rb:__rand_int__", self.TOKEN, "NX", "PX", "30000"
        )
        e = self._one(
            count, "EVALSHA", self.SHA, "1", "bench:rb:__rand_int__", self.TOKEN
        )
        rate = 1 / (1 / s["rps"] + 1 / e["rps"])
        self.rate_guess = rate
        return {
            "cycles": count,
            "elapsed": count / rate,
            "rate": rate,
            "cpu_us": None,
            "wall": time.monotonic() - t0,
            "rb": {"set": s, "evalsha": e},
        }
