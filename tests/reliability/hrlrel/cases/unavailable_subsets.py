"""Case 2: every subset of the 5 masters unavailable (refused, killed,
paused, blackholed, mixed)."""

from __future__ import annotations

import time

from ..fixture import Servers
from ..inject import Injector
from ..proxy import Proxy
from .common import PROBE_EPSILON, one_attempt

MODES = ["refused", "killed", "paused", "blackholed"]


def case2(out: str, full: bool) -> dict:
    import hiredlock

    timeout, ttl = 0.1, 3.0
    masters = Servers(5)
    px = Proxy([("127.0.0.1", p) for p in masters.ports], out)
    inj = Injector(masters, px)
    client = hiredlock.Client(px.urls, timeout=timeout, connect_timeout=0.5)
    # Connections opened first, by a waiting acquire (a handshake slower
    # than the 100 ms timeout, through the proxy on a loaded machine,
    # carries over to its next round): the combinations are about masters
    # going away, and a cold client's single attempt failed the all-up one
    # whenever its first handshake took longer than the timeout.
    warm = client.lock("c2:warm", ttl=ttl)
    if warm.acquire(timeout=5):
        warm.release()
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
            ok, err, ms, _ = one_attempt(lk)
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
