"""The driving side of the workers' line protocol (tests/workers/README.md),
for the benchmark (bench/hrlbench) and the reliability cases
(tests/reliability/hrlrel): which program runs a runtime, and a Worker that
sends commands and reads the JSON answers.

The callers differ only in where the library comes from (the benchmark's
copies of the package and rocks, the installers' own build/python and
build/lua/<abi> for reliability), so they pass the environment and, for C,
the binary.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
PYTHON_WORKER = HERE / "python" / "worker.py"
LUA_WORKER = HERE / "lua" / "worker.lua"
NODE_DIR = HERE / "node"
NODE_WORKER = NODE_DIR / "worker.js"
LUA_ABI = {"lua5.1": "5.1", "luajit": "5.1", "lua5.4": "5.4"}


def argv(runtime: str, urls: list[str], c_worker: str | None = None) -> list[str]:
    """The command line of runtime's worker on these masters."""
    joined = ",".join(urls)
    if runtime == "python":
        return [sys.executable, str(PYTHON_WORKER), joined]
    if runtime in LUA_ABI:
        return [runtime, str(LUA_WORKER), joined]
    if runtime == "node":
        return ["node", str(NODE_WORKER), joined]
    if runtime == "c" and c_worker:
        return [str(c_worker), joined]
    raise ValueError(f"no worker for runtime {runtime!r}")


def command(verb: str, *args: object, **opts: object) -> str:
    """One command line: the verb, positional words, key=value options
    (no value may contain blanks)."""
    words = [verb, *map(str, args), *(f"{k}={v}" for k, v in opts.items())]
    if any(not w or any(c.isspace() for c in w) for w in words):
        raise ValueError(f"a blank in a command word: {words}")
    return " ".join(words)


class Worker:
    """A worker process: commands in on stdin, JSON lines out. With
    stdout=None its answers are read here (and the hello line at once);
    with a file they go there, for a caller that only waits for the end."""

    def __init__(
        self,
        args: list[str],
        *,
        runtime: str = "",
        env: dict | None = None,
        cwd: str | Path | None = None,
        stdout=None,
        stderr=None,
        preexec_fn=None,
    ) -> None:
        self.runtime = runtime or Path(args[0]).name
        self.piped = stdout is None
        self.proc = subprocess.Popen(
            args,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE if self.piped else stdout,
            stderr=stderr,
            text=True,
            env=env,
            cwd=cwd,
            preexec_fn=preexec_fn,
        )
        self.hello = self.read() if self.piped else None

    @property
    def pid(self) -> int:
        return self.proc.pid

    def read(self) -> dict:
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError(
                f"the {self.runtime} worker exited (status {self.proc.poll()})"
            )
        obj = json.loads(line)
        if "error" in obj:
            raise RuntimeError(f"{self.runtime} worker: {obj['error']}")
        return obj

    def send(self, line: str) -> None:
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()

    def call(self, line: str) -> dict:
        self.send(line)
        return self.read()

    def finish(self) -> None:
        """No more commands: the worker ends after the ones sent."""
        if self.proc.stdin and not self.proc.stdin.closed:
            self.proc.stdin.close()

    def close(self, timeout: float = 10) -> None:
        if self.proc.poll() is None:
            try:
                self.send("quit")
                self.finish()
                self.proc.wait(timeout=timeout)
            except (OSError, subprocess.TimeoutExpired):
                self.proc.kill()
                self.proc.wait()
