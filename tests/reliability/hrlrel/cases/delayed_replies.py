"""Case 5: replies delayed past the per-node timeout (our proxy): probes
of late keys, then the workload under random delays."""

from __future__ import annotations

import os
import random
import shutil
import time

from ..fixture import Servers
from ..inject import Injector
from ..proxy import Proxy
from .common import PROBE_EPSILON, clean, healthy, one_attempt, safe, workload_run


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
                ok, err, ms, t0 = one_attempt(lk)
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
