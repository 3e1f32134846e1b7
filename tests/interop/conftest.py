"""Agents for the cross-runtime tests: one lock holder per runtime, all
driven the same way, so every test runs over every pair of runtimes.

Python (sync, and hiredlock.asyncio on an event loop of its own) runs in
this process; C (build/tests/interop/interop_agent) and Lua
(tests/interop/agent.lua under LuaJIT and Lua 5.4, with the rock from
build/lua/<abi>) run as child processes speaking a line protocol:
  new <prefix-hex> <url,url,...> [retry_delay] -> ok
  acquire <name-hex> <ttl> <timeout>  -> ok <token> | err <message>
  fenced <name-hex> <ttl> <timeout>   -> ok <token> <fence> | err <message>
  hold <mode> <permits> <name-hex> <ttl> <timeout>
                                      -> ok <token> <permit> | err <message>
     (a read or write of a read-write lock, or a permit of a semaphore of
     <permits>, 0 for the others; <permit>: its number, 0 for the others)
  release | extend <ttl>              -> ok | err <message>
Redis comes from the shared fixtures, tests/fixtures/pytest_redis.py.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import os
import select
import subprocess
import sys
import threading
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests" / "fixtures"))

# servers1, servers3, ...: the Redis fixtures every suite shares.
pytest_plugins = ["pytest_redis"]


class PythonAgent:
    """The Python runtime, answering like the child agents do."""

    runtime = "python"

    def __init__(self) -> None:
        self.client = None
        self.lock = None
        self._waiting: threading.Thread | None = None
        self._answer = ""

    def new(
        self, urls: list[str], prefix: bytes = b"", retry_delay: float | None = None
    ) -> str:
        import hiredlock

        # Half a second per master (capped at ttl/10 by the library): what is
        # tested is exclusion across runtimes, not a 50 ms reply under load.
        options = {"timeout": 0.5}
        if retry_delay is not None:
            options["retry_delay"] = retry_delay
        self.client = hiredlock.Client(urls, key_prefix=prefix, **options)
        return "ok"

    def start_acquire(self, name: bytes, ttl: float, timeout: float) -> None:
        """acquire() in a thread; answer() tells how it ended."""

        def run() -> None:
            self._answer = self.acquire(name, ttl, timeout)

        self._waiting = threading.Thread(target=run)
        self._waiting.start()

    def answer(self, timeout: float | None = None) -> str | None:
        """start_acquire's answer, or None when it has not come in time."""
        assert self._waiting is not None
        self._waiting.join(timeout)
        return None if self._waiting.is_alive() else self._answer

    def acquire(
        self,
        name: bytes,
        ttl: float,
        timeout: float,
        auto_renew: bool = False,
        fenced: bool = False,
    ) -> str:
        import hiredlock

        self.lock = self.client.lock(
            name, ttl=ttl, auto_renew=auto_renew, fenced=fenced
        )
        try:
            if timeout == 0:
                got = self.lock.acquire(blocking=False)
            else:
                got = self.lock.acquire(timeout=timeout)
        except hiredlock.LockError as exc:
            return f"err {exc}"
        if not got:
            return "err timeout"
        fence = f" {self.lock.fence}" if fenced else ""
        return f"ok {self.lock.token}{fence}"

    def fenced(self, name: bytes, ttl: float, timeout: float) -> str:
        return self.acquire(name, ttl, timeout, fenced=True)

    def hold(
        self, mode: str, permits: int, name: bytes, ttl: float, timeout: float
    ) -> str:
        import hiredlock

        self.lock = hiredlock.Lock(
            self.client, name, ttl, mode=mode, permits=permits or None
        )
        try:
            got = (
                self.lock.acquire(timeout=timeout)
                if timeout
                else self.lock.acquire(blocking=False)
            )
        except hiredlock.LockError as exc:
            return f"err {exc}"
        if not got:
            return "err timeout"
        return f"ok {self.lock.token} {self.lock.permit or 0}"

    def release(self) -> str:
        import hiredlock

        try:
            self.lock.release()
        except hiredlock.LockError as exc:
            return f"err {exc}"
        return "ok"

    def extend(self, ttl: float) -> str:
        import hiredlock

        try:
            self.lock.extend(ttl)
        except hiredlock.LockError as exc:
            return f"err {exc}"
        return "ok"

    def lease(self, name: bytes, ttl: float) -> str:
        return self.acquire(name, ttl, 0, auto_renew=True)

    def check(self) -> str:
        import hiredlock

        try:
            self.lock.check()
        except hiredlock.LockError as exc:
            return f"err {exc}"
        return "ok"

    def close(self) -> None:
        pass


class AsyncioAgent:
    """hiredlock.asyncio (the third driver of the core's protocol), on an
    event loop of its own that keeps running between calls in a thread of
    its own (a lease's renewer task runs there), answering like the other
    agents."""

    runtime = "asyncio"

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        self.client = None
        self.lock = None

    def _run(self, coro) -> str:
        import hiredlock

        try:
            return asyncio.run_coroutine_threadsafe(coro, self.loop).result(60)
        except hiredlock.LockError as exc:
            return f"err {exc}"

    def new(
        self, urls: list[str], prefix: bytes = b"", retry_delay: float | None = None
    ) -> str:
        import hiredlock.asyncio

        # Half a second per master (capped at ttl/10 by the library): what is
        # tested is exclusion across runtimes, not a 50 ms reply under load.
        options = {"timeout": 0.5}
        if retry_delay is not None:
            options["retry_delay"] = retry_delay

        async def new() -> str:
            self.client = hiredlock.asyncio.Client(urls, key_prefix=prefix, **options)
            return "ok"

        return self._run(new())

    async def _acquire(self, name: bytes, ttl: float, timeout: float, **options) -> str:
        import hiredlock

        try:
            self.lock = self.client.lock(name, ttl=ttl, **options)
            if timeout == 0:
                got = await self.lock.acquire(blocking=False)
            else:
                got = await self.lock.acquire(timeout=timeout)
        except hiredlock.LockError as exc:
            return f"err {exc}"
        if not got:
            return "err timeout"
        fence = f" {self.lock.fence}" if options.get("fenced") else ""
        return f"ok {self.lock.token}{fence}"

    def acquire(self, name: bytes, ttl: float, timeout: float, **options) -> str:
        return self._run(self._acquire(name, ttl, timeout, **options))

    def start_acquire(self, name: bytes, ttl: float, timeout: float) -> None:
        """acquire() on the agent's loop; answer() tells how it ended."""
        self._waiting = asyncio.run_coroutine_threadsafe(
            self._acquire(name, ttl, timeout), self.loop
        )

    def answer(self, timeout: float | None = None) -> str | None:
        """start_acquire's answer, or None when it has not come in time."""
        try:
            return self._waiting.result(timeout)
        except concurrent.futures.TimeoutError:
            return None

    def fenced(self, name: bytes, ttl: float, timeout: float) -> str:
        return self.acquire(name, ttl, timeout, fenced=True)

    def hold(
        self, mode: str, permits: int, name: bytes, ttl: float, timeout: float
    ) -> str:
        answer = self.acquire(name, ttl, timeout, mode=mode, permits=permits or None)
        if not answer.startswith("ok "):
            return answer
        return f"{answer} {self.lock.permit or 0}"

    def release(self) -> str:
        async def release() -> str:
            await self.lock.release()
            return "ok"

        return self._run(release())

    def extend(self, ttl: float) -> str:
        async def extend() -> str:
            await self.lock.extend(ttl)
            return "ok"

        return self._run(extend())

    def lease(self, name: bytes, ttl: float) -> str:
        return self.acquire(name, ttl, 0, auto_renew=True)

    def check(self) -> str:
        async def check() -> str:
            self.lock.check()
            return "ok"

        return self._run(check())

    def close(self) -> None:
        if self.client is not None:
            self._run(self.client.close())
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)
        self.loop.close()


class ProcessAgent:
    """A C or Lua holder in a child process."""

    def __init__(self, runtime: str, argv: list[str], env: dict) -> None:
        self.runtime = runtime
        self.proc = subprocess.Popen(
            argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env={**os.environ, **env},
            cwd="/",
        )

    def _ask(self, line: str) -> str:
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()
        answer = self.proc.stdout.readline().rstrip("\n")
        assert answer, f"{self.runtime} agent died on {line!r}"
        return answer

    def new(
        self, urls: list[str], prefix: bytes = b"", retry_delay: float | None = None
    ) -> str:
        extra = "" if retry_delay is None else f" {retry_delay}"
        return self._ask(f"new {prefix.hex() or '-'} {','.join(urls)}{extra}")

    def acquire(self, name: bytes, ttl: float, timeout: float) -> str:
        return self._ask(f"acquire {name.hex()} {ttl} {timeout}")

    def start_acquire(self, name: bytes, ttl: float, timeout: float) -> None:
        """Sends acquire; answer() reads how it ended."""
        self.proc.stdin.write(f"acquire {name.hex()} {ttl} {timeout}\n")
        self.proc.stdin.flush()

    def answer(self, timeout: float | None = None) -> str | None:
        """The answer start_acquire asked for, or None when it has not come
        in time (one answer a line, read a line at a time: nothing waits in
        the file object's buffer)."""
        ready, _, _ = select.select([self.proc.stdout], [], [], timeout)
        if not ready:
            return None
        answer = self.proc.stdout.readline().rstrip("\n")
        assert answer, f"{self.runtime} agent died waiting"
        return answer

    def fenced(self, name: bytes, ttl: float, timeout: float) -> str:
        return self._ask(f"fenced {name.hex()} {ttl} {timeout}")

    def hold(
        self, mode: str, permits: int, name: bytes, ttl: float, timeout: float
    ) -> str:
        return self._ask(f"hold {mode} {permits} {name.hex()} {ttl} {timeout}")

    def release(self) -> str:
        return self._ask("release")

    def extend(self, ttl: float) -> str:
        return self._ask(f"extend {ttl}")

    def lease(self, name: bytes, ttl: float) -> str:
        return self._ask(f"lease {name.hex()} {ttl}")

    def check(self) -> str:
        return self._ask("check")

    def close(self) -> None:
        with contextlib.suppress(AssertionError, BrokenPipeError):
            self._ask("quit")
        self.proc.wait(timeout=10)


def lua_env(abi: str) -> dict:
    tree = REPO / "build" / "lua" / abi
    path = f"{tree}/share/lua/{abi}/?.lua;{tree}/share/lua/{abi}/?/init.lua;;"
    cpath = f"{tree}/lib/lua/{abi}/?.so;;"
    env = {"LUA_PATH": path, "LUA_CPATH": cpath}
    if abi == "5.4":
        env.update(LUA_PATH_5_4=path, LUA_CPATH_5_4=cpath)
    return env


RUNTIMES = ["python", "asyncio", "c", "luajit", "lua5.4"]


def make_agent(runtime: str):
    if runtime == "python":
        return PythonAgent()
    if runtime == "asyncio":
        return AsyncioAgent()
    if runtime == "c":
        agent = os.environ.get(
            "HRL_INTEROP_AGENT", str(REPO / "build/tests/interop/interop_agent")
        )
        return ProcessAgent("c", [agent], {})
    abi = "5.4" if runtime == "lua5.4" else "5.1"
    script = str(REPO / "tests" / "interop" / "agent.lua")
    return ProcessAgent(runtime, [runtime, script], lua_env(abi))


@pytest.fixture
def agents():
    """make(runtime, urls, prefix, retry_delay) -> a connected agent; all
    closed after."""
    made = []

    def make(
        runtime: str,
        urls: list[str],
        prefix: bytes = b"",
        retry_delay: float | None = None,
    ):
        agent = make_agent(runtime)
        made.append(agent)
        assert agent.new(urls, prefix, retry_delay) == "ok"
        return agent

    yield make
    for agent in made:
        agent.close()
