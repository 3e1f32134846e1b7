"""The main phase: one client, back-to-back uncontended cycles of every
case, in shuffled repetitions with the raw loop between every few slices;
its analysis (paired ratios to the floor, targets) and its table."""

from __future__ import annotations

import statistics
import time

from . import REF, log
from .machine import loadavg
from .server_side import MasterProbe, on_master_1
from .stats import lat_summary, quartiles
from .targets import (
    DEPLOY_RATIOS,
    DIAGNOSTIC_RATIOS,
    FLOOR_RATIOS,
    ROUND_TRIP_TARGETS,
    TARGET_FLOORS,
    TARGETS,
)


def run_slice(workers, rb, case: dict, seconds: float, probe=None) -> dict:
    """One slice; with probe (an N = 1 case on master 1), what master 1
    spent on it too (server_side.py)."""
    if probe is not None:
        probe.before()
    if case["worker"] == "rb":
        r = rb.run(seconds)
    else:
        r = workers[case["worker"]].call(f"run {case['wcase']} {seconds}")
        r["rate"] = r["cycles"] / r["elapsed"]
    if probe is not None:
        r.update(probe.after(r["cycles"]))
    return r


def main_phase(args, cases, workers, rb, rng, env_samples) -> dict:
    ids = [c for c in cases if c != REF]
    log(
        f"main: {len(ids) + 1} cases, {args.reps} repetitions of "
        f"{args.seconds} s per case, the raw loop after every "
        f"{args.ref_every} slices"
    )
    for cid in [REF, *ids]:  # warm-up: connections, scripts, caches, JITs
        run_slice(workers, rb, cases[cid], args.warmup)
    slices = []
    lat: dict[str, list[float]] = {c: [] for c in cases}
    rb_lat: list[dict] = []
    probe = MasterProbe(workers.urls[0])
    for rep in range(args.reps):
        order = rng.sample(ids, len(ids))
        seq = []
        for i, cid in enumerate(order):
            if i % args.ref_every == 0:
                seq.append(REF)
            seq.append(cid)
        seq.append(REF)
        t_rep = time.monotonic()
        for pos, cid in enumerate(seq):
            case = cases[cid]
            r = run_slice(
                workers, rb, case, args.seconds, probe if on_master_1(case) else None
            )
            slices.append(
                {
                    "rep": rep,
                    "pos": pos,
                    "case": cid,
                    "rate": r["rate"],
                    "cycles": r["cycles"],
                    "failed": r.get("failed", 0),
                    "cpu_us_per_cycle": (r["cpu_us"] / r["cycles"])
                    if r.get("cpu_us") is not None
                    else None,
                    "master_cpu_us_per_cycle": r.get("master_cpu_us_per_cycle"),
                    "master_usec_per_call": r.get("master_usec_per_call"),
                }
            )
            if "lat" in r:
                lat[cid].extend(r["lat"])
            if "rb" in r:
                rb_lat.append(r["rb"])
        env_samples.append({"t": time.time(), "load": loadavg()})
        raw_rates = [s["rate"] for s in slices if s["rep"] == rep and s["case"] == REF]
        log(
            f"main: repetition {rep + 1}/{args.reps} in "
            f"{time.monotonic() - t_rep:.1f} s, raw "
            f"{min(raw_rates):.0f}-{max(raw_rates):.0f} cycles/s, "
            f"load {env_samples[-1]['load'][0]:.2f}"
        )
    probe.close()
    return analyse_main(args, cases, slices, lat, rb_lat)


def analyse_main(args, cases, slices, lat, rb_lat) -> dict:
    # Time of each slice relative to the raw loop around it: the mean rate
    # of the reference slices just before and just after it, divided by
    # the slice's own rate.
    rel: dict[str, dict[int, float]] = {c: {} for c in cases}
    by_rep: dict[int, list[dict]] = {}
    for s in slices:
        by_rep.setdefault(s["rep"], []).append(s)
    for rep, seq in by_rep.items():
        seq.sort(key=lambda s: s["pos"])
        refs = [i for i, s in enumerate(seq) if s["case"] == REF]
        for i, s in enumerate(seq):
            if s["case"] == REF:
                continue
            before = max(j for j in refs if j < i)
            after = min(j for j in refs if j > i)
            ref_rate = (seq[before]["rate"] + seq[after]["rate"]) / 2
            rel[s["case"]][rep] = ref_rate / s["rate"]
        rel[REF][rep] = 1.0

    def ratio(num: str, den: str) -> dict | None:
        reps = sorted(set(rel[num]) & set(rel[den]))
        if not reps:
            return None
        return quartiles([rel[num][r] / rel[den][r] for r in reps])

    out_cases = {}
    for cid, c in cases.items():
        rates = [s["rate"] for s in slices if s["case"] == cid]
        if not rates:
            continue
        cpus = [
            s["cpu_us_per_cycle"]
            for s in slices
            if s["case"] == cid and s["cpu_us_per_cycle"] is not None
        ]
        master = [
            s for s in slices if s["case"] == cid and s.get("master_cpu_us_per_cycle")
        ]
        entry = dict(c)
        if master:
            # Master 1's side of the cycle (server_side.py): the median over
            # slices of its CPU per cycle and of Redis's time per call.
            entry["master_cpu_us_per_cycle"] = statistics.median(
                s["master_cpu_us_per_cycle"] for s in master
            )
            cmds = {k for s in master for k in s["master_usec_per_call"]}
            entry["master_usec_per_call"] = {
                k: statistics.median(
                    s["master_usec_per_call"][k]
                    for s in master
                    if k in s["master_usec_per_call"]
                )
                for k in sorted(cmds)
            }
        entry.update(
            {
                "rates": [round(x, 1) for x in rates],
                "rate_median": statistics.median(rates),
                "us_per_cycle": 1e6 / statistics.median(rates),
                "cpu_us_per_cycle": statistics.median(cpus) if cpus else None,
                "failed": sum(s["failed"] for s in slices if s["case"] == cid),
                "latency_us": lat_summary(lat[cid]) if lat[cid] else None,
                "vs_floor": ratio(cid, c["floor"]) if cid != c["floor"] else None,
            }
        )
        if cid == "redis-benchmark" and rb_lat:
            entry["latency_us"] = {
                "n": None,
                "p50": statistics.median(x["set"]["p50"] for x in rb_lat),
                "p99": statistics.median(x["set"]["p99"] for x in rb_lat),
                "p999": None,
                "max": max(x["set"]["max"] for x in rb_lat),
                "note": "redis-benchmark's own SET percentiles, median over "
                "repetitions (it reports no p99.9)",
            }
            entry["rb"] = {
                k: statistics.median(x[k]["rps"] for x in rb_lat)
                for k in ("set", "evalsha")
            }
        out_cases[cid] = entry
    targets = []
    for tid, what, num, den, op, bound in TARGETS:
        q = ratio(num, den) if num in out_cases and den in out_cases else None
        if q is None:
            continue
        v = q["median"]
        met = {"<=": v <= bound, ">=": v >= bound, ">": v > bound}[op]
        t = {
            "id": tid,
            "what": what,
            "num": num,
            "den": den,
            "op": op,
            "bound": bound,
            "ratio": q,
            "met": met,
        }
        floor = TARGET_FLOORS.get(tid)
        if floor in out_cases and op == "<=":
            # What a client with no overhead over its floor would measure
            # here, in the same repetitions: past the bound, the machine
            # is what misses it.
            fq = ratio(floor, den)
            if fq is not None:
                t["floor"] = {"case": floor, "ratio": fq}
                t["floor_bound"] = fq["median"] > bound
        targets.append(t)
    for tid, what, fenced, plain, floor, bound in ROUND_TRIP_TARGETS:
        if any(c not in out_cases for c in (fenced, plain, floor)):
            continue  # a partial run (--cases) without one of them
        reps = sorted(set(rel[fenced]) & set(rel[plain]) & set(rel[floor]))
        if not reps:
            continue
        q = quartiles(
            [(rel[fenced][r] - rel[plain][r]) / (rel[floor][r] / 2) for r in reps]
        )
        targets.append(
            {
                "id": tid,
                "what": what,
                "num": fenced,
                "den": plain,
                "op": "<=",
                "bound": bound,
                "ratio": q,
                "met": q["median"] <= bound,
            }
        )
    floors = []
    for fid, what, num, den in FLOOR_RATIOS:
        q = ratio(num, den) if num in out_cases and den in out_cases else None
        if q is not None:
            floors.append({"id": fid, "what": what, "num": num, "den": den, "ratio": q})
    diagnostic = []
    for did, what, num, den, beside in DIAGNOSTIC_RATIOS:
        q = ratio(num, den) if num in out_cases and den in out_cases else None
        if q is not None:
            diagnostic.append(
                {
                    "id": did,
                    "what": what,
                    "num": num,
                    "den": den,
                    "beside": beside,
                    "ratio": q,
                }
            )
    deploy = []
    for did, what, num, den in DEPLOY_RATIOS:
        q = ratio(num, den) if num in out_cases and den in out_cases else None
        if q is not None:
            deploy.append({"id": did, "what": what, "num": num, "den": den, "ratio": q})
    # Every pair a reader may want: hiredlock against each peer at equal N.
    versus = []
    for cid, c in out_cases.items():
        if c["kind"] != "peer":
            continue
        for h in ("c", "py", "luajit", "lua5.4", "lua5.1"):
            hid = f"{h}-n{c['n']}"
            if hid in out_cases:
                q = ratio(cid, hid)
                versus.append({"peer": cid, "hiredlock": hid, "ratio": q})
    # --ab, --ab-python: this checkout's C or Python cases against the same
    # on another core or another build of the package.
    ab = [
        {"case": cid[3:], "ab": cid, "ratio": ratio(cid[3:], cid)}
        for cid in out_cases
        if cid.startswith("ab-") and cid[3:] in out_cases
    ]
    return {
        "cases": out_cases,
        "ab": ab,
        "targets": targets,
        "floor_ratios": floors,
        "diagnostic_ratios": diagnostic,
        "deploy_ratios": deploy,
        "versus": versus,
        "slices": [
            {k: (round(v, 4) if isinstance(v, float) else v) for k, v in s.items()}
            for s in slices
        ],
    }


def print_summary(main: dict) -> None:
    """The main phase's table on stdout, for a reader at the terminal."""
    print(
        f"{'case':<22}{'cycles/s':>10}{'us/cycle':>10}{'CPU us':>8}"
        f"{'p50 us':>9}{'p99 us':>9}   time ratio to floor (IQR)"
    )
    for cid, c in sorted(
        main["cases"].items(),
        key=lambda kv: (kv[1]["n"], kv[1]["kind"] != "floor", -kv[1]["rate_median"]),
    ):
        lat = c.get("latency_us") or {}
        q = c.get("vs_floor")
        ratio = (
            f"{q['median']:.3f} x {c['floor']} ({q['p25']:.3f}-{q['p75']:.3f})"
            if q
            else ""
        )
        cpu = c.get("cpu_us_per_cycle")
        print(
            f"{cid:<22}{c['rate_median']:>10.0f}{c['us_per_cycle']:>10.1f}"
            f"{cpu if cpu is not None else float('nan'):>8.1f}"
            f"{lat.get('p50') or float('nan'):>9.1f}"
            f"{lat.get('p99') or float('nan'):>9.1f}   {ratio}"
        )
    for x in main.get("ab", []):
        q = x["ratio"]
        print(
            f"A/B {x['case']} time / {x['ab']} time: {q['median']:.3f} "
            f"({q['p25']:.3f}-{q['p75']:.3f})"
        )
    for x in main.get("deploy_ratios", []) + main.get("diagnostic_ratios", []):
        q = x["ratio"]
        print(f"{x['what']}: {q['median']:.3f} ({q['p25']:.3f}-{q['p75']:.3f})")
    for cid, c in main["cases"].items():
        if c.get("master_cpu_us_per_cycle") is not None:
            calls = ", ".join(
                f"{k} {v:.2f} us/call" for k, v in c["master_usec_per_call"].items()
            )
            print(
                f"master 1 on {cid}: {c['master_cpu_us_per_cycle']:.1f} us CPU "
                f"per cycle; {calls}"
            )
    for t in main["targets"]:
        verdict = "met" if t["met"] else "MISSED"
        if not t["met"] and t.get("floor_bound"):
            verdict = (
                f"missed: floor-bound here, {t['floor']['case']} / {t['den']} "
                f"alone is {t['floor']['ratio']['median']:.3f}"
            )
        print(
            f"target {t['what']}: {t['ratio']['median']:.3f} "
            f"({t['op']} {t['bound']:g}: {verdict})"
        )
