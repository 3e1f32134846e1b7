"""What the cases share: the scheduling slack, the workload's defaults, a
workload run against masters with a fault schedule, and the verdicts."""

from __future__ import annotations

import os
import shutil
import time

from ..checker import check
from ..fixture import Servers
from ..inject import Injector
from ..proxy import Proxy
from ..workload import Workload, read_logs

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
    modes=None,
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
            modes=modes,
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


def one_attempt(lk) -> tuple[bool, str | None, float, float]:
    """One acquire without waiting, timed: (acquired, error text, ms, and
    when it began on the monotonic clock)."""
    import hiredlock

    err = None
    t0 = time.monotonic()
    try:
        ok = lk.acquire(blocking=False)
    except hiredlock.LockError as e:
        ok, err = False, str(e)
    return ok, err, (time.monotonic() - t0) * 1000, t0


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
