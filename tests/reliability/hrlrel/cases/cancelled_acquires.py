"""Case 7: cancelled acquires (KeyboardInterrupt, a Lua error in with,
Lua SIGINT, the C cancel callback and deadlines)."""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
import subprocess
import time

from .. import workers
from ..fixture import Servers
from .common import lock_keys

# The cancellers' client (the "client" command of tests/workers).
CLIENT = dict(timeout=0.2, connect_timeout=0.5, retry_delay=0.02, retry_jitter=0.01)
LUA_WORDS = ("ran", "raised_in_with", "cancelled", "interrupted", "timeout", "end")


def answers(text: str) -> list[dict]:
    """The JSON answers in a worker's output (its stderr is there too)."""
    out = []
    for line in text.splitlines():
        try:
            obj = json.loads(line)
        except ValueError:
            continue
        if isinstance(obj, dict):
            out.append(obj)
    return out


def cancel_ready(text: str) -> bool:
    """The cancel command said ready: the worker's hello, its client's
    answer, then a second ready."""
    return sum(1 for a in answers(text) if a.get("ready")) >= 2


def counts_of(text: str) -> dict:
    """The cancel command's counts: its last answer."""
    return answers(text)[-1]


def case7(out: str, full: bool) -> dict:
    dur = 60.0 if full else 10.0
    ttl, name = 2.0, "c7:lock"
    run_dir = os.path.join(out, "case7")
    shutil.rmtree(run_dir, ignore_errors=True)
    os.makedirs(run_dir)
    masters = Servers(5)
    procs, outs = {}, {}

    def spawn(key: str, rt: str, seconds: float, mode: str | None = None) -> None:
        """A worker of rt running "cancel" for seconds; its output goes to
        KEY.out, and its input ends after the command."""
        f = open(os.path.join(run_dir, f"{key}.out"), "a")  # noqa: SIM115 (closed below)
        outs.setdefault(key, f)
        w = workers.start(rt, masters.urls, stdout=f, stderr=subprocess.STDOUT)
        w.send(workers.command("client", **CLIENT))
        opts = {"mode": mode} if mode else {}
        w.send(workers.command("cancel", seconds=f"{seconds:.3f}", name=name, **opts))
        w.finish()
        procs[key] = w.proc
        procs[key].key = key

    lua_rts = ["lua5.1", "luajit", "lua5.4"]
    lua_exits: dict[str, int] = {}
    try:
        t_end = time.monotonic() + dur
        spawn("hold", "python", dur, "hold")
        for k in range(3):
            spawn(f"py{k}", "python", dur, "cancel")
        for k in range(2):
            spawn(f"c{k}", "c", dur)
        lua_gen = {rt: 0 for rt in lua_rts}

        def ready(key: str) -> bool:
            with open(os.path.join(run_dir, f"{key}.out")) as f:
                return cancel_ready(f.read())

        def lua_spawn(rt: str) -> None:
            left = t_end - time.monotonic()
            key = f"{rt}-{lua_gen[rt]}"
            lua_gen[rt] += 1
            spawn(key, rt, left)
            procs[rt] = procs.pop(key)

        for rt in lua_rts:
            lua_spawn(rt)
        sigints = {"python": 0, "lua": 0}
        while time.monotonic() < t_end - 0.5:
            time.sleep(random.uniform(0.03, 0.1))
            for rt in lua_rts:
                p = procs[rt]
                if p.poll() is not None:
                    lua_exits[p.key] = p.returncode
                    if time.monotonic() < t_end - 1.0:
                        lua_spawn(rt)
            target = random.choice([f"py{k}" for k in range(3)] + lua_rts)
            p = procs[target]
            if p.poll() is None and ready(p.key):
                # lua.c handles the first SIGINT (an "interrupted!" error);
                # the second one kills the process, which is then replaced.
                p.send_signal(signal.SIGINT)
                sigints["lua" if target in lua_rts else "python"] += 1
        for key, p in list(procs.items()):
            try:
                p.wait(dur + 30)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
            if key in lua_rts:
                lua_exits[p.key] = p.returncode
        for f in outs.values():
            f.close()
        orphans_run = lock_keys(masters, name)
        time.sleep(ttl + 0.2)
        orphans_ttl = lock_keys(masters, name)
    finally:
        for p in procs.values():
            if p.poll() is None:
                p.kill()
        masters.stop()

    def read(key: str) -> str:
        with open(os.path.join(run_dir, f"{key}.out")) as f:
            return f.read()

    py_counts: dict[str, int] = {}
    for k in range(3):
        for key, v in counts_of(read(f"py{k}")).items():
            py_counts[key] = py_counts.get(key, 0) + v
    c_counts: dict[str, int] = {}
    for k in range(2):
        for key, v in counts_of(read(f"c{k}")).items():
            c_counts[key] = c_counts.get(key, 0) + v
    lua_counts: dict[str, int] = {}
    for key in outs:
        if key.split("-")[0] not in lua_rts:
            continue
        for line in read(key).splitlines():
            said = answers(line)
            if said and "outcome" in said[0]:
                word = said[0]["outcome"].split(" ")[0]
                if word in LUA_WORDS or word == "other":
                    lua_counts[word] = lua_counts.get(word, 0) + 1
            elif not said and "interrupted" in line:
                # lua.c's own report of an interrupt outside the pcall
                lua_counts["interrupted_uncaught"] = (
                    lua_counts.get("interrupted_uncaught", 0) + 1
                )
    lua_counts["processes"] = len(lua_exits)
    lua_counts["killed_by_second_sigint"] = sum(
        1 for c in lua_exits.values() if c == -2
    )
    holder = counts_of(read("hold"))
    ok = (
        orphans_ttl == 0
        and py_counts.get("interrupted_in_acquire", 0) > 0
        and lua_counts.get("raised_in_with", 0) > 0
        and (
            lua_counts.get("cancelled", 0)
            + lua_counts.get("interrupted", 0)
            + lua_counts.get("interrupted_uncaught", 0)
        )
        > 0
        and c_counts.get("cancelled", 0) > 0
        and c_counts.get("timeout", 0) > 0
        and holder["acquired"] > 0
    )
    return {
        "case": 7,
        "title": "cancelled acquires (KeyboardInterrupt, Lua error in with, "
        "Lua SIGINT, C cancel callback and deadlines)",
        "expected": "0 orphan keys after one TTL",
        "as_expected": ok,
        "duration_s": dur,
        "sigints": sigints,
        "python": py_counts,
        "lua": lua_counts,
        "c": c_counts,
        "holder": holder,
        "orphans_after_run": orphans_run,
        "orphans_after_ttl": orphans_ttl,
        "summary": "python interrupted in acquire "
        f"{py_counts.get('interrupted_in_acquire')}"
        f", lua errors in with {lua_counts.get('raised_in_with')}, lua "
        f"cancelled {lua_counts.get('cancelled', 0)}, C cancelled "
        f"{c_counts.get('cancelled')} / deadline {c_counts.get('timeout')}; "
        f"orphans {orphans_run} after the run, {orphans_ttl} after one TTL",
    }
