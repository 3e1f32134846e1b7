"""The cases of docs/RELIABILITY.md. Each takes `full` (the documented run)
or the short version (make test) and returns a result dict with
`expected` (what must hold), `as_expected` and the figures."""

from __future__ import annotations

import json
import os
import random
import shutil
import time

from . import BUILD, now_ns
from .checker import check
from .fixture import Servers
from .inject import Injector, wait_for
from .proxy import Proxy
from .workload import Workload, read_logs

# Scheduling slack on a loaded 2-CPU machine (s): for 16 workers, 5
# masters and other suites sharing it, and for the single-client probes.
EPSILON = 0.5
PROBE_EPSILON = 0.25

WORKLOAD = dict(
    ttl=2.0,
    wait=5.0,
    timeout=0.2,
    connect_timeout=0.5,
    retry_delay=0.02,
    retry_jitter=0.01,
)


def lock_keys(masters, name: str) -> int:
    """On how many running masters the lock's key exists."""
    return sum(1 for keys in masters.all_keys(name).values() if keys)


def workload_run(
    run_dir: str,
    *,
    n: int,
    duration: float,
    schedule=None,
    aof: bool = False,
    proxy: bool = False,
    workers: int = 16,
    env_for=None,
    inspect=None,
    **params,
) -> dict:
    """Runs the workload against n masters with a fault schedule, heals,
    counts orphans now and after one TTL, and checks the logs."""
    shutil.rmtree(run_dir, ignore_errors=True)
    os.makedirs(run_dir)
    p = dict(WORKLOAD, **params)
    masters = Servers(n, *(["--aof"] if aof else []))
    data = Servers(1)
    px = None
    try:
        urls = masters.urls
        if proxy:
            px = Proxy([("127.0.0.1", port) for port in masters.ports], run_dir)
            urls = px.urls
        wl = Workload(
            run_dir,
            urls,
            data,
            workers=workers,
            duration=duration,
            env_for=env_for,
            **p,
        )
        inj = Injector(masters, px, wl)
        start_at = wl.start()
        inj.start_at = start_at
        inj.end_at = start_at + int(duration * 1e9)
        inj.params = p
        th = None
        if schedule is not None:
            inj.wait_until(start_at)
            th = inj.run_in_thread(schedule)
        codes = wl.wait(duration + p["wait"] + 60)
        inj.stop.set()
        if th is not None:
            th.join(60)
        inj.heal_all()
        inj.close()
        name = p.get("lock", "rel:lock")
        orphans_run = lock_keys(masters, name)
        time.sleep(p["ttl"] + 0.2)
        orphans_ttl = lock_keys(masters, name)
        extra = inspect(masters) if inspect is not None else None
        counter = int(data.redis(1).get("counter") or 0)
        blob = data.redis(1).get("set") or b""
        elements = {e for e in blob.decode().split(",") if e}
        events = read_logs(wl.logs)
        result = check(
            events,
            counter=counter,
            elements=elements,
            wait=p["wait"],
            timeout=p["timeout"],
            epsilon=EPSILON,
            faults=inj.events,
            orphans_after_run=orphans_run,
            orphans_after_ttl=orphans_ttl,
        )
        result["n"] = n
        result["duration_s"] = duration
        result["params"] = p
        result["runtimes"] = sorted(set(wl.runtime_of.values()))
        result["worker_failures"] = {
            w: wl.stderr_of(w)[-500:] for w, c in codes.items() if c != 0
        }
        result["faults"] = [e for e in inj.events if e["ev"] == "fault"]
        result["retries"] = [e["what"] for e in inj.events if e["ev"] == "retry"]
        result["heals"] = len([e for e in inj.events if e["ev"] == "heal"])
        result["injector_errors"] = [e for e in inj.events if e["ev"] == "error"]
        if extra is not None:
            result["inspect"] = extra
        result["_events"] = events
        result["_inj"] = inj
        return result
    finally:
        if px is not None:
            px.stop()
        masters.stop()
        data.stop()


def clean(result: dict) -> dict:
    return {k: v for k, v in result.items() if not k.startswith("_")}


def healthy(r: dict) -> bool:
    """The run itself worked: every worker ran to its end, the injector
    did what it was told."""
    return not r["worker_failures"] and not r["injector_errors"] and r["acquired"] > 0


def safe(r: dict) -> bool:
    return (
        r["overlaps"] == 0
        and r["lost_acked"] == 0
        and r["counter_lost"] == 0
        and r["orphans_after_ttl"] == 0
        and r["overruns"] == 0
    )


# --- case 1 ------------------------------------------------------------------
def case1(out: str, full: bool) -> dict:
    dur = 120.0 if full else 8.0
    runs = {}
    for n in (1, 5):
        r = workload_run(os.path.join(out, f"case1-n{n}"), n=n, duration=dur)
        runs[f"n{n}"] = clean(r)
    ok = all(
        healthy(r) and safe(r) and r["orphans_after_run"] == 0 for r in runs.values()
    )
    return {
        "case": 1,
        "title": "16 workers x 1 lock, no faults",
        "expected": "0 overlaps, 0 lost, 0 orphans, no deadline overrun",
        "as_expected": ok,
        "runs": runs,
    }


# --- case 3 ------------------------------------------------------------------
def kill_restart_schedule(mode: str, count: int, period: float):
    """Kills a majority (3 of 5) right after a worker acquired, and brings
    them back: at once, after TTL + 0.5 s, or at once with AOF."""

    def schedule(inj: Injector) -> None:
        ttl = inj.params["ttl"]
        for k in range(count):
            if not inj.sleep(period if k else 1.0):
                return
            if not wait_for(
                lambda: inj.find_holder("acq", 30)[0] is not None, 10, 0.002
            ):
                continue
            nodes = random.sample(range(1, 6), 3)
            inj.log("fault", f"kill -9 {nodes}", nodes=nodes)
            if mode == "delayed":
                inj.kill(nodes)
                inj.restart(nodes, delay=ttl + 0.5)
                inj.sleep(ttl + 0.5)
                wait_for(
                    lambda: all(s == "running" for s in inj.masters.status().values()),
                    10,
                )
                # The launcher's delayed start fails when the port was taken
                # meanwhile (see Injector.restart_one): start those again.
                dead = [i for i, st in inj.masters.status().items() if st == "dead"]
                if dead:
                    inj.log("retry", f"delayed restart of {dead} failed, again")
                    inj.restart(dead)
            else:
                inj.kill(nodes)
                inj.restart(nodes)
            inj.log("heal", f"restarted {nodes} ({mode})", nodes=nodes)

    return schedule


def case3(out: str, full: bool) -> dict:
    dur = 60.0 if full else 12.0
    count = 12 if full else 4
    runs = {}
    for mode, aof in (("delayed", False), ("aof", True), ("immediate", False)):
        r = workload_run(
            os.path.join(out, f"case3-{mode}"),
            n=5,
            duration=dur,
            aof=aof,
            ttl=3.0,
            hold_ms=400,
            schedule=kill_restart_schedule(mode, count, dur / (count + 1)),
        )
        r["injections"] = len(r["faults"])
        runs[mode] = clean(r)
    good = [runs["delayed"], runs["aof"]]
    neg = runs["immediate"]
    ok = (
        all(
            healthy(r)
            and r["overlaps"] == 0
            and r["lost_acked"] == 0
            and r["counter_lost"] == 0
            and r["orphans_after_ttl"] == 0
            for r in good
        )
        and healthy(neg)
        and neg["overlaps"] > 0
    )
    return {
        "case": 3,
        "title": "masters killed -9 and restarted",
        "expected": "delay > TTL and AOF always: 0 overlaps, 0 lost; restarted "
        "at once without persistence: overlaps reported (negative control)",
        "as_expected": ok,
        "runs": runs,
        "negative_control_caught": neg["overlaps"] > 0,
    }


# --- case 4 ------------------------------------------------------------------
def case4(out: str, full: bool) -> dict:
    dur = 40.0 if full else 12.0
    count = 8 if full else 3
    ttl = 1.0
    pauses = []

    def schedule(inj: Injector) -> None:
        for k in range(count):
            if not inj.sleep(1.0 if k == 0 else dur / (count + 1) - 1.5 * ttl):
                return
            for _ in range(2000):
                wid, ev = inj.find_holder("read", 5)
                if wid is None:
                    time.sleep(0.001)
                    continue
                inj.stop_worker(wid)
                last = inj.workload.last_event(wid)
                if last["ev"] == "read" and last["t"] == ev["t"]:
                    break  # stopped inside its critical section
                inj.cont_worker(wid)
            else:
                continue
            t = now_ns()
            inj.log("fault", f"SIGSTOP holder {wid}", worker=wid)
            inj.sleep(1.5 * ttl)
            inj.cont_worker(wid)
            pauses.append({"w": wid, "stopped": t, "resumed": now_ns()})
            inj.log("heal", f"SIGCONT {wid}", worker=wid)

    r = workload_run(
        os.path.join(out, "case4"),
        n=5,
        duration=dur,
        ttl=ttl,
        timeout=0.1,
        extend_p=0.5,
        schedule=schedule,
    )
    events = r["_events"]
    per_pause = []
    for p in pauses:
        mine = []
        for e in events:  # the stale holder's calls, up to its next acquire
            if (
                e["w"] != p["w"]
                or e.get("t0", e.get("t", 0)) < p["resumed"] - 50_000_000
            ):
                continue
            if e["ev"] == "acq":
                break
            if e["ev"] in ("ext", "rel"):
                mine.append(e)
        first = mine[0] if mine else None
        # Releases of the other holders right after the stale holder's call:
        # their keys were left alone if they released fine.
        others = [
            e
            for e in events
            if e["w"] != p["w"]
            and e["ev"] == "rel"
            and first is not None
            and first["t1"] <= e["t0"] <= first["t1"] + 1e9
        ]
        per_pause.append(
            {
                "w": p["w"],
                "paused_ms": round((p["resumed"] - p["stopped"]) / 1e6, 1),
                "first_call": first["ev"] if first else None,
                "first_result": (first["err"] or "ok") if first else None,
                "next_call": (mine[1]["ev"] + ": " + (mine[1]["err"] or "ok"))
                if len(mine) > 1
                else None,
                "others_released_ok": all(e["ok"] for e in others),
                # the stale holder never deleted the new holder's key:
                "others_not_owned": sum(
                    1 for e in others if (e["err"] or "").startswith("not owned")
                ),
                "others_released": len(others),
            }
        )
    res = clean(r)
    res["pauses"] = per_pause
    not_owned = [
        x for x in per_pause if (x["first_result"] or "").startswith("not owned")
    ]
    ext_no = sum(1 for x in not_owned if x["first_call"] == "ext")
    rel_no = sum(1 for x in not_owned if x["first_call"] == "rel")
    lost = res["lost_acked"] + max(res["counter_lost"], 0)
    ok = (
        healthy(r)
        and len(per_pause) >= 1
        and len(not_owned) == len(per_pause)
        and all(x["others_not_owned"] == 0 for x in per_pause)
        and res["overlaps"] == 0
        and lost > 0
        and res["stale_writes"] >= 1
    )
    return {
        "case": 4,
        "title": "a lock holder paused (SIGSTOP) for 1.5 x TTL",
        "expected": "its extend/release say not owned, the new holder's key is "
        "left alone; the unfenced counter loses updates and the "
        "checker reports it (negative control)",
        "as_expected": ok,
        "runs": {"n5": res},
        "extend_not_owned": ext_no,
        "release_not_owned": rel_no,
        "negative_control_caught": lost > 0,
    }


# --- reporting ---------------------------------------------------------------
def runs_of(res: dict) -> list[dict]:
    return list(res.get("runs", {}).values())


def one_line(res: dict) -> str:
    if "error" in res:
        return "error: " + res["error"].strip().splitlines()[-1]
    parts = []
    for name, r in res.get("runs", {}).items():
        if "overlaps" in r:
            parts.append(
                f"{name}: {r['acquired']}/{r['acquire_calls']} acquired, "
                f"{r['overlaps']} overlaps, {r['lost_acked']}+"
                f"{max(r['counter_lost'], 0)} lost, orphans "
                f"{r['orphans_after_run']}/{r['orphans_after_ttl']}, "
                f"{r['overruns']} overruns"
            )
    for k in ("summary",):
        if k in res:
            parts.append(res[k])
    return "; ".join(parts)


def summary_line(results: list[dict], bad: str | None = None) -> str:
    """One line for the suite: cases as expected, violations where none are
    allowed (the negative controls excluded), negative controls caught."""
    ok = sum(1 for r in results if r["as_expected"])
    overlaps = lost = 0
    neg_total = neg_caught = 0
    for res in results:
        for name, r in res.get("runs", {}).items():
            if res["case"] == 4 or (res["case"] == 3 and name == "immediate"):
                continue  # negative controls: violations are the point
            overlaps += r.get("overlaps", 0)
            lost += r.get("lost_acked", 0) + max(r.get("counter_lost", 0), 0)
        if "negative_control_caught" in res:
            neg_total += 1
            neg_caught += bool(res["negative_control_caught"])
    line = (
        f"reliability: {ok} of {len(results)} cases as expected, "
        f"{overlaps} overlaps where none allowed, {lost} lost updates where "
        f"none allowed, {neg_caught} of {neg_total} negative controls caught"
    )
    return line + (f"; {bad}" if bad else "")


# --- case 2 ------------------------------------------------------------------
MODES = ["refused", "killed", "paused", "blackholed"]


def case2(out: str, full: bool) -> dict:
    import hiredlock

    timeout, ttl = 0.1, 3.0
    masters = Servers(5)
    px = Proxy([("127.0.0.1", p) for p in masters.ports], out)
    inj = Injector(masters, px)
    client = hiredlock.Client(px.urls, timeout=timeout, connect_timeout=0.5)
    combos = []
    for mask in range(32):
        if full:
            combos += [(mask, m) for m in [*MODES, "mixed"]]
        else:
            combos.append((mask, ([*MODES, "mixed"])[mask % 5]))
    rows = []
    try:
        for mask, mode in combos:
            down = [i for i in range(1, 6) if mask >> (i - 1) & 1]
            how = {
                i: (MODES[k % 4] if mode == "mixed" else mode)
                for k, i in enumerate(down)
            }
            groups = {m: [i for i in down if how[i] == m] for m in MODES}
            if groups["refused"]:
                inj.proxy_mode(groups["refused"], "refuse")
            if groups["blackholed"]:
                inj.proxy_mode(groups["blackholed"], "blackhole")
            if groups["killed"]:
                inj.kill(groups["killed"])
            if groups["paused"]:
                inj.pause(groups["paused"])
            name = f"c2:{mode}:{mask}"
            lk = client.lock(name, ttl=ttl)
            err = None
            t0 = time.monotonic()
            try:
                ok = lk.acquire(blocking=False)
            except hiredlock.LockError as e:
                ok, err = False, str(e)
            ms = (time.monotonic() - t0) * 1000
            up = [i for i in range(1, 6) if i not in down]
            left = sum(1 for i in up if masters.redis(i).exists(name))
            if ok:
                lk.release()
            # heal
            if groups["killed"]:
                inj.restart(groups["killed"])
            if groups["paused"]:
                inj.resume(groups["paused"])
            inj.proxy_mode(groups["refused"] + groups["blackholed"], "pass")
            late = 0
            if groups["paused"]:
                time.sleep(0.02)
                late = sum(1 for i in groups["paused"] if masters.redis(i).exists(name))
            rows.append(
                {
                    "mask": mask,
                    "mode": mode,
                    "down": len(down),
                    "ok": ok,
                    "ms": round(ms, 1),
                    "err": err,
                    "keys_left_on_up": 0 if ok else left,
                    "late_keys": late,
                }
            )
        time.sleep(ttl + 0.2)
        after_ttl = sum(len(k) for k in masters.all_keys("c2:*").values())
    finally:
        px.stop()
        masters.stop()
        inj.close()
    eps_ms = PROBE_EPSILON * 1000
    wrong = [r for r in rows if r["ok"] != (5 - r["down"] >= 3)]
    slow_ok = [r for r in rows if r["ok"] and r["ms"] > timeout * 1000 + eps_ms]
    slow_fail = [
        r for r in rows if not r["ok"] and r["ms"] > 2 * timeout * 1000 + eps_ms
    ]
    left = [r for r in rows if r["keys_left_on_up"]]
    by_mode = {}
    for m in [*MODES, "mixed"]:
        rs = [r for r in rows if r["mode"] == m]
        if rs:
            by_mode[m] = {
                "subsets": len(rs),
                "acquired": sum(r["ok"] for r in rs),
                "max_ms_ok": max((r["ms"] for r in rs if r["ok"]), default=None),
                "max_ms_failed": max(
                    (r["ms"] for r in rs if not r["ok"]), default=None
                ),
                "late_keys": sum(r["late_keys"] for r in rs),
            }
    sample_err = next(
        (r["err"] for r in rows if r["err"] and r["mode"] == "mixed"), None
    )
    ok = not wrong and not slow_ok and not slow_fail and not left and after_ttl == 0
    return {
        "case": 2,
        "title": "every subset of the 5 masters unavailable",
        "expected": "acquired iff >= 3 reachable; success <= timeout + eps, failure "
        "<= 2 x timeout + eps (attempt + its release round); no key left "
        "on a reachable master by a failed acquire; late keys gone "
        "after one TTL",
        "as_expected": ok,
        "timeout_ms": timeout * 1000,
        "epsilon_ms": eps_ms,
        "combinations": len(rows),
        "wrong_outcome": len(wrong),
        "over_bound": len(slow_ok) + len(slow_fail),
        "keys_left": len(left),
        "keys_after_ttl": after_ttl,
        "by_mode": by_mode,
        "sample_error": sample_err,
        "summary": f"{len(rows)} combinations, {len(wrong)} wrong outcomes, "
        f"{len(slow_ok) + len(slow_fail)} over the bound, "
        f"{len(left)} with keys left, {after_ttl} keys after TTL",
        "rows": rows,
    }


# --- case 5 ------------------------------------------------------------------
def watch_key(masters, nodes, name: str, seconds: float, t0: float) -> dict:
    """Polls name on nodes directly (not through the proxy) and returns,
    per node, when the key appeared and disappeared (ms from t0)."""
    seen: dict[int, list] = {}
    while time.monotonic() - t0 < seconds:
        t = (time.monotonic() - t0) * 1000
        for i in nodes:
            there = masters.redis(i).exists(name)
            span = seen.get(i)
            if there and span is None:
                seen[i] = [t, None]
            elif not there and span is not None and span[1] is None:
                span[1] = t
        time.sleep(0.005)
    return seen


def case5(out: str, full: bool) -> dict:
    import hiredlock

    timeout, ttl, delay_ms = 0.1, 2.0, 300
    probe_dir = os.path.join(out, "case5-probe")
    shutil.rmtree(probe_dir, ignore_errors=True)
    os.makedirs(probe_dir)
    masters = Servers(5)
    px = Proxy([("127.0.0.1", p) for p in masters.ports], probe_dir)
    probes = []
    try:
        client = hiredlock.Client(px.urls, timeout=timeout, connect_timeout=0.5)
        for k in range(5 if full else 2):
            for delayed in ([1, 2, 3], [4, 5]):
                for i in delayed:
                    px.set(i, "delay", delay_ms)
                name = f"c5:probe:{k}:{len(delayed)}"
                lk = client.lock(name, ttl=ttl)
                err = None
                t0 = time.monotonic()
                try:
                    ok = lk.acquire(blocking=False)
                except hiredlock.LockError as e:
                    ok, err = False, str(e)
                ms = (time.monotonic() - t0) * 1000
                if ok:
                    lk.release()
                seen = watch_key(
                    masters, delayed, name, ttl + 0.5 + delay_ms / 1000, t0
                )
                for i in delayed:
                    px.set(i, "pass")
                gone = [
                    s[1] if s[1] is not None else float("inf") for s in seen.values()
                ]
                lifetimes = [g - s[0] for g, s in zip(gone, seen.values())]
                probes.append(
                    {
                        "delayed": delayed,
                        "ok": ok,
                        "ms": round(ms, 1),
                        "err": err,
                        "late_keys": len(seen),
                        "max_late_key_ms": round(max(lifetimes), 1) if lifetimes else 0,
                        "last_gone_ms": round(max(gone), 1) if gone else 0,
                        "keys_after": sum(
                            masters.redis(i).exists(name) for i in range(1, 6)
                        ),
                    }
                )
    finally:
        px.stop()
        masters.stop()

    def schedule(inj: Injector) -> None:
        k = 0
        while inj.sleep(1.0):
            nodes = random.sample(range(1, 6), 3 if k % 2 == 0 else 2)
            inj.log("fault", f"delay {3 * 200} ms on {nodes}", nodes=nodes)
            inj.proxy_mode(nodes, "delay", 600)
            if not inj.sleep(1.5):
                return
            inj.proxy_mode(nodes, "pass")
            inj.log("heal", f"no delay on {nodes}", nodes=nodes)
            k += 1

    dur = 60.0 if full else 12.0
    r = clean(
        workload_run(
            os.path.join(out, "case5"), n=5, duration=dur, proxy=True, schedule=schedule
        )
    )
    maj = [p for p in probes if len(p["delayed"]) == 3]
    mino = [p for p in probes if len(p["delayed"]) == 2]
    eps = PROBE_EPSILON * 1000
    # A late SET lands at most delay (+ eps) after the attempt began and
    # lives at most one TTL from then.
    probe_ok = (
        all(not p["ok"] and p["ms"] <= 2 * timeout * 1000 + eps for p in maj)
        and all(p["ok"] and p["ms"] <= timeout * 1000 + eps for p in mino)
        and all(
            p["last_gone_ms"] <= delay_ms + ttl * 1000 + eps and p["keys_after"] == 0
            for p in probes
        )
    )
    ok = probe_ok and healthy(r) and safe(r)
    return {
        "case": 5,
        "title": "replies delayed past the per-node timeout (proxy)",
        "expected": "majority delayed: the attempt fails within 2 x timeout + eps; "
        "late keys gone within the TTL; under load 0 overlaps, 0 lost",
        "as_expected": ok,
        "probe_timeout_ms": timeout * 1000,
        "probe_delay_ms": delay_ms,
        "probe_ttl_ms": ttl * 1000,
        "probes": probes,
        "runs": {"n5": r},
        "summary": f"probes: majority delayed failed {sum(not p['ok'] for p in maj)}/"
        f"{len(maj)}, late keys {sum(p['late_keys'] for p in probes)} "
        f"(longest {max((p['max_late_key_ms'] for p in probes), default=0)} ms)",
    }


# --- case 8 ------------------------------------------------------------------
LIBFAKETIME = "/usr/lib/x86_64-linux-gnu/faketime/libfaketimeMT.so.1"


def case8(out: str, full: bool) -> dict:
    run_dir = os.path.join(out, "case8")
    stamp = os.path.join(out, "case8.faketime")
    os.makedirs(out, exist_ok=True)
    with open(stamp, "w") as f:
        f.write("+0\n")
    faked = {0, 1, 3, 5}  # python, lua5.1, luajit, lua5.4

    def env_for(i: int) -> dict:
        if i not in faked:
            return {}
        return {
            "LD_PRELOAD": LIBFAKETIME,
            "FAKETIME_TIMESTAMP_FILE": stamp,
            "FAKETIME_NO_CACHE": "1",
            "FAKETIME_DONT_FAKE_MONOTONIC": "1",
        }

    def schedule(inj: Injector) -> None:
        third = (inj.end_at - inj.start_at) / 3
        for k, offset in ((1, "+1h"), (2, "-1h")):
            if not inj.wait_until(inj.start_at + int(k * third)):
                return
            with open(stamp, "w") as f:
                f.write(offset + "\n")
            inj.log("fault", f"wall clock {offset} on the faked workers")
        inj.sleep(third / 1e9)

    dur = 60.0 if full else 12.0
    r = workload_run(run_dir, n=5, duration=dur, schedule=schedule, env_for=env_for)
    events = r["_events"]
    jumps = {}
    for wid in sorted({e["w"] for e in events}):
        offs = [
            e["wall"] - e["t0"] / 1e9
            for e in events
            if e["w"] == wid and e["ev"] == "acq"
        ]
        if not offs:
            continue
        base = offs[0]
        levels = sorted({round((o - base) / 60) * 60 for o in offs})
        jumps[wid] = levels
    faked_ids = [w for w in jumps if int(w[1:3]) in faked]
    real_ids = [w for w in jumps if int(w[1:3]) not in faked]
    saw = all(jumps[w] == [-3600, 0, 3600] for w in faked_ids) and len(
        faked_ids
    ) == len(faked)
    steady = all(jumps[w] == [0] for w in real_ids)
    res = clean(r)
    res["wall_offsets_s"] = jumps
    ok = healthy(r) and safe(res) and saw and steady
    faked_acq = [e for e in events if e["ev"] == "acq" and int(e["w"][1:3]) in faked]
    return {
        "case": 8,
        "title": "client wall clock jumped +1 h, then -1 h (libfaketime)",
        "expected": "the faked workers see the jumps in their wall clock; 0 overlaps, "
        "0 lost (only CLOCK_MONOTONIC is used)",
        "as_expected": ok,
        "runs": {"n5": res},
        "faked_workers_saw_jumps": saw,
        "faked_workers": faked_ids,
        "faked_acquired": sum(1 for e in faked_acq if e["ok"]),
        "summary": f"faked workers' wall-clock levels: "
        f"{sorted({tuple(jumps[w]) for w in faked_ids})}",
    }


# --- case 9 ------------------------------------------------------------------
def case9(out: str, full: bool) -> dict:
    faults = [
        ("pause", 2),
        ("readonly", 2),
        ("oom", 2),
        ("noscript", 5),
        ("pause", 3),
        ("readonly", 3),
        ("oom", 3),
    ]

    def schedule(inj: Injector) -> None:
        rounds = 3 if full else 1
        for _ in range(rounds):
            for kind, count in faults:
                if not inj.sleep(1.0):
                    return
                nodes = random.sample(range(1, 6), count)
                inj.log("fault", f"{kind} on {len(nodes)} masters", nodes=nodes)
                if kind == "pause":
                    inj.pause(nodes)
                elif kind == "readonly":
                    inj.readonly(nodes)
                elif kind == "oom":
                    inj.oom(nodes)
                else:
                    for _ in range(10):
                        inj.script_flush(nodes)
                        inj.sleep(0.15)
                    inj.log("heal", f"{kind} on {len(nodes)} masters", nodes=nodes)
                    continue
                inj.sleep(1.5)
                if kind == "pause":
                    inj.resume(nodes)
                elif kind == "readonly":
                    inj.writable(nodes)
                else:
                    inj.no_oom(nodes)
                inj.log("heal", f"{kind} on {len(nodes)} masters", nodes=nodes)

    def commandstats(masters) -> dict:
        calls = {"eval": 0, "evalsha": 0}
        for i in range(1, 6):
            info = masters.redis(i).info("commandstats")
            for cmd in calls:
                calls[cmd] += info.get(f"cmdstat_{cmd}", {}).get("calls", 0)
        return calls

    dur = (len(faults) * 3 * 2.6 + 3) if full else (len(faults) * 2.6 + 2)
    r = workload_run(
        os.path.join(out, "case9"),
        n=5,
        duration=dur,
        schedule=schedule,
        inspect=commandstats,
    )
    res = clean(r)
    rec = [x for x in res["recoveries"] if x["ms"] is not None]
    ok = (
        healthy(r)
        and safe(res)
        and len(rec) == len(res["recoveries"])
        and res["inspect"]["eval"] > 0
    )
    return {
        "case": 9,
        "title": "error replies (READONLY, OOM, NOSCRIPT) and paused masters",
        "expected": "minority: no effect on safety; majority: acquires fail fast with "
        "the reason, then recover after the heal; 0 overlaps, 0 lost",
        "as_expected": ok,
        "runs": {"n5": res},
        "summary": f"EVAL fallbacks after NOSCRIPT: {res['inspect']['eval']}; "
        f"max recovery {res['max_recovery_ms']} ms",
    }


# --- case 6 ------------------------------------------------------------------
def case6(out: str, full: bool) -> dict:
    import subprocess
    import sys

    from . import HERE
    from .workload import RUNTIMES, runtime_env

    rounds_a, rounds_b = (300, 20) if full else (25, 3)
    name = "c6:race"
    masters = Servers(5)
    data = Servers(1)
    d = data.redis(1)
    procs = []
    os.makedirs(out, exist_ok=True)
    # The racers' output, kept open for them; closed at the end.
    errlog = open(os.path.join(out, "case6.stderr"), "w")  # noqa: SIM115
    try:
        ids = []
        for i in range(16):
            rt = RUNTIMES[i % len(RUNTIMES)]
            wid = f"r{i:02d}"
            # Each racer lists the masters in another order, so their SETs
            # reach the masters in different orders and votes split.
            urls = ",".join(masters.urls[i % 5 :] + masters.urls[: i % 5])
            if rt == "python":
                argv = [
                    sys.executable,
                    os.path.join(HERE, "racer.py"),
                    wid,
                    urls,
                    data.unix_paths[0],
                    name,
                ]
            else:
                argv = [
                    rt,
                    os.path.join(HERE, "lua", "racer.lua"),
                    wid,
                    urls,
                    str(data.ports[0]),
                    name,
                ]
            procs.append(
                subprocess.Popen(
                    argv, env=runtime_env(rt), stdout=errlog, stderr=errlog
                )
            )
            ids.append(wid)
        for _ in ids:
            if d.blpop("ready", 30) is None:
                raise RuntimeError("a racer did not start")

        def go(msg: str) -> int:
            """Everyone starts 50 ms from now, on the monotonic clock."""
            t = now_ns() + 50_000_000
            pipe = d.pipeline(transaction=True)
            for wid in ids:
                pipe.rpush(f"go:{wid}", f"{msg} {t}")
            pipe.execute()
            return t

        def collect(rnd: str, timeout: float) -> list[list[str]]:
            got = []
            for _ in ids:
                item = d.blpop(f"res:{rnd}", timeout)
                if item is None:
                    raise RuntimeError(f"round {rnd}: a racer did not answer")
                got.append(item[1].decode().split(" "))
            return got

        a_rows = []
        for k in range(rounds_a):
            rnd = f"A{k}"
            go(f"A {rnd}")
            got = collect(rnd, 30)
            winners = [g for g in got if g[1] == "won"]
            keys = [masters.redis(i).get(name) for i in range(1, 6)]
            tok = winners[0][4].encode() if len(winners) == 1 else None
            stray = sum(1 for v in keys if v is not None and v != tok)
            if winners:
                for w in winners:
                    d.rpush(f"rel:{w[0]}", "1")
                for _ in winners:
                    d.blpop(f"relres:{rnd}", 30)
            left = sum(1 for i in range(1, 6) if masters.redis(i).exists(name))
            a_rows.append(
                {
                    "winners": len(winners),
                    "granted_to_winner": sum(
                        1 for v in keys if v is not None and v == tok
                    ),
                    "stray_keys": stray,
                    "left_after_release": left,
                    "errors": sorted({g[4] for g in got if g[1] == "lost"}),
                }
            )
        b_rows = []
        for k in range(rounds_b):
            rnd = f"B{k}"
            t_go = go(f"B {rnd}")
            got = collect(rnd, 60)
            wins = sorted(int(g[3]) for g in got if g[1] == "won")
            b_rows.append(
                {
                    "won": len(wins),
                    "first_ms": round((wins[0] - t_go) / 1e6, 1) if wins else None,
                    "last_ms": round((wins[-1] - t_go) / 1e6, 1) if wins else None,
                }
            )
        pipe = d.pipeline(transaction=True)
        for wid in ids:
            pipe.rpush(f"go:{wid}", "quit")
        pipe.execute()
        for p in procs:
            p.wait(30)
        after = sum(1 for i in range(1, 6) if masters.redis(i).exists(name))
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
        masters.stop()
        data.stop()
        errlog.close()
    split = sum(1 for r in a_rows if r["winners"] == 0)
    double = sum(1 for r in a_rows if r["winners"] > 1)
    stray = sum(r["stray_keys"] for r in a_rows)
    left = sum(r["left_after_release"] for r in a_rows)
    partial = sum(1 for r in a_rows if r["winners"] == 1 and r["granted_to_winner"] < 5)
    firsts = sorted(r["first_ms"] for r in b_rows if r["first_ms"] is not None)
    all_won = sum(1 for r in b_rows if r["won"] == 16)
    bound_ms = 10_000
    ok = (
        double == 0
        and stray == 0
        and left == 0
        and after == 0
        and len(firsts) == rounds_b
        and max(firsts) <= bound_ms
        and all_won == rounds_b
        and split < rounds_a
    )
    return {
        "case": 6,
        "title": "16 clients racing on N = 5 (split votes)",
        "expected": "never two winners; after a round only the winner's key is on "
        "the masters (losers' partial keys released); a winner within the "
        "wait every time",
        "as_expected": ok,
        "single_attempt_rounds": rounds_a,
        "split_vote_rounds": split,
        "two_winner_rounds": double,
        "rounds_losers_held_partial_keys": partial,
        "stray_partial_keys": stray,
        "keys_left_after_release": left,
        "waiting_rounds": rounds_b,
        "first_winner_ms": {
            "p50": percentile_simple(firsts, 50),
            "max": max(firsts) if firsts else None,
        },
        "all_16_won_rounds": all_won,
        "last_winner_ms_max": max(
            (r["last_ms"] for r in b_rows if r["last_ms"]), default=None
        ),
        "rows_a": a_rows,
        "rows_b": b_rows,
        "summary": f"{rounds_a} single-attempt rounds: {split} split votes "
        "(no winner), "
        f"{partial} won with partial keys elsewhere, {double} "
        f"double winners, {stray} stray partial keys; {rounds_b} waiting "
        f"rounds: first winner after max {max(firsts) if firsts else None} ms",
    }


def percentile_simple(values, p):
    from .checker import percentile

    return percentile(values, p)


# --- case 7 ------------------------------------------------------------------
def case7(out: str, full: bool) -> dict:
    import signal
    import subprocess
    import sys

    from . import HERE
    from .workload import runtime_env

    dur = 60.0 if full else 10.0
    ttl, name = 2.0, "c7:lock"
    run_dir = os.path.join(out, "case7")
    shutil.rmtree(run_dir, ignore_errors=True)
    os.makedirs(run_dir)
    masters = Servers(5)
    urls = ",".join(masters.urls)
    procs, outs = {}, {}

    def spawn(key: str, argv: list[str], rt: str) -> None:
        f = open(os.path.join(run_dir, f"{key}.out"), "a")  # noqa: SIM115 (closed below)
        outs.setdefault(key, f)
        procs[key] = subprocess.Popen(
            argv, env=runtime_env(rt), stdout=f, stderr=subprocess.STDOUT
        )
        procs[key].key = key

    py = [sys.executable, os.path.join(HERE, "canceller.py")]
    lua_rts = ["lua5.1", "luajit", "lua5.4"]
    lua_exits: dict[str, int] = {}
    try:
        t_end = time.monotonic() + dur
        spawn("hold", [*py, "hold", str(dur), name, urls], "python")
        for k in range(3):
            spawn(f"py{k}", [*py, "cancel", str(dur), name, urls], "python")
        for k in range(2):
            spawn(
                f"c{k}",
                [os.path.join(BUILD, "c", "canceller"), str(dur), name, *masters.urls],
                "python",
            )
        lua_gen = {rt: 0 for rt in lua_rts}

        def ready(key: str) -> bool:
            with open(os.path.join(run_dir, f"{key}.out")) as f:
                return f.readline().startswith("ready")

        def lua_spawn(rt: str) -> None:
            left = t_end - time.monotonic()
            key = f"{rt}-{lua_gen[rt]}"
            lua_gen[rt] += 1
            spawn(
                key,
                [
                    rt,
                    os.path.join(HERE, "lua", "canceller.lua"),
                    f"{left:.3f}",
                    name,
                    urls,
                ],
                rt,
            )
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
        for key, v in json.loads(read(f"py{k}").strip().splitlines()[-1]).items():
            py_counts[key] = py_counts.get(key, 0) + v
    c_counts: dict[str, int] = {}
    for k in range(2):
        for key, v in json.loads(read(f"c{k}").strip().splitlines()[-1]).items():
            c_counts[key] = c_counts.get(key, 0) + v
    lua_counts: dict[str, int] = {}
    for key in outs:
        if key.split("-")[0] in lua_rts:
            for line in read(key).splitlines():
                word = line.split(" ")[0]
                if word in (
                    "ran",
                    "raised_in_with",
                    "cancelled",
                    "interrupted",
                    "timeout",
                    "end",
                    "other",
                ):
                    lua_counts[word] = lua_counts.get(word, 0) + 1
                elif "interrupted" in line:
                    lua_counts["interrupted_uncaught"] = (
                        lua_counts.get("interrupted_uncaught", 0) + 1
                    )
    lua_counts["processes"] = len(lua_exits)
    lua_counts["killed_by_second_sigint"] = sum(
        1 for c in lua_exits.values() if c == -2
    )
    holder = json.loads(read("hold").strip().splitlines()[-1])
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
