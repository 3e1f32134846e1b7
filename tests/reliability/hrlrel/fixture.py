"""The shared Redis launcher, tests/fixtures/redis-fixture: the only way the
harness starts, kills, pauses and restarts Redis."""

from __future__ import annotations

import os
import subprocess
import threading

import redis

from . import ROOT

LAUNCHER = os.environ.get("HRL_FIXTURE") or os.path.join(
    ROOT, "tests", "fixtures", "redis-fixture"
)


class Servers:
    """N masters from the launcher; nodes are numbered from 1."""

    def __init__(self, n: int, *options: str) -> None:
        out = subprocess.run(
            [LAUNCHER, "start", "-n", str(n), "--owner", str(os.getpid()), *options],
            check=True,
            capture_output=True,
            text=True,
        ).stdout
        env = {}
        for line in out.splitlines():
            key, _, value = line.partition("=")
            env[key] = value.strip("\"'")
        self.n = n
        self.dir = env["HRL_FIXTURE_DIR"]
        self.urls = env["HRL_FIXTURE_URLS"].split(",")
        self.unix_paths = [
            u[len("unix://") :] for u in env["HRL_FIXTURE_UNIX_URLS"].split(",")
        ]
        self.ports = [int(p) for p in env["HRL_FIXTURE_PORTS"].split()]
        self._conns: dict[int, redis.Redis] = {}
        self._lock = threading.Lock()

    def ctl(self, verb: str, i: int, *extra: str) -> None:
        with self._lock:
            conn = self._conns.pop(i, None)
        if conn is not None:
            conn.close()
        done = subprocess.run(
            [LAUNCHER, verb, self.dir, str(i), *extra],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        if done.returncode != 0:
            raise subprocess.CalledProcessError(
                done.returncode, done.args, stderr=done.stderr
            )

    def kill(self, i: int) -> None:
        self.ctl("kill", i)

    def pause(self, i: int) -> None:
        self.ctl("pause", i)

    def resume(self, i: int) -> None:
        self.ctl("resume", i)

    def restart(self, i: int, delay: float | None = None) -> None:
        if delay is None:
            self.ctl("restart", i)
        else:
            self.ctl("restart", i, "--delay", f"{delay:.3f}")

    def status(self) -> dict[int, str]:
        out = subprocess.run(
            [LAUNCHER, "status", self.dir], check=True, capture_output=True, text=True
        ).stdout
        states = {}
        for line in out.splitlines():
            i, _port, state = line.split()
            states[int(i)] = state
        return states

    def redis(self, i: int) -> redis.Redis:
        """An inspection connection to node i over its unix socket, never
        through a proxy."""
        with self._lock:
            if i not in self._conns:
                self._conns[i] = redis.Redis(
                    unix_socket_path=self.unix_paths[i - 1],
                    socket_timeout=5,
                    socket_connect_timeout=5,
                )
            return self._conns[i]

    def keys_on(self, i: int, pattern: str) -> dict[bytes, bytes | None]:
        r = self.redis(i)
        return {k: r.get(k) for k in r.scan_iter(match=pattern, count=1000)}

    def all_keys(self, pattern: str) -> dict[int, dict[bytes, bytes | None]]:
        """Every node's keys matching pattern (with their values), over
        nodes that are running (a dead or paused node is skipped)."""
        states = self.status()
        return {
            i: self.keys_on(i, pattern)
            for i in range(1, self.n + 1)
            if states.get(i) == "running"
        }

    def stop(self) -> None:
        with self._lock:
            for conn in self._conns.values():
                conn.close()
            self._conns.clear()
        subprocess.run([LAUNCHER, "stop", self.dir], check=False)
