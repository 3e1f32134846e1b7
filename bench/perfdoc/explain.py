"""Reading the targets: sentences generated from the numbers (the
profile's counts explain a ratio), not typed in."""

from __future__ import annotations

from .fmt import DASH, TIMES


def explain(d):
    """Reading the targets: generated from the numbers, not typed in."""
    main = d.get("main", {})
    t = {x["id"]: x for x in main.get("targets", [])}
    f = {x["id"]: x for x in main.get("floor_ratios", [])}
    cases = main.get("cases", {})
    prof = d.get("profile", {}).get("cases", {})
    out = []

    def vs_floor(cid):
        q = cases.get(cid, {}).get("vs_floor")
        return f"{q['median']:.3f}{TIMES}" if q else DASH

    def calls(cid):
        return prof.get(cid, {}).get("syscalls") or {}

    if "raw" in prof and "c-n1" in prof and "c-floor" in t:
        raw, c1 = prof["raw"], prof["c-n1"]
        extra = {
            k: calls("c-n1").get(k, 0) - calls("raw").get(k, 0)
            for k in set(calls("c-n1")) | set(calls("raw"))
        }
        more = ", ".join(
            f"{k} {v:+.2f}" for k, v in sorted(extra.items()) if abs(v) >= 0.05
        )
        out.append(
            f"- C against the raw loop ({t['c-floor']['ratio']['median']:.3f}"
            f"{TIMES}): per cycle hiredlock runs {c1['instructions']:,.0f} client "
            f"instructions against the loop's {raw['instructions']:,.0f}, and "
            f"{sum(calls('c-n1').values()):.2f} system calls against "
            f"{sum(calls('raw').values()):.2f} (per cycle: {more}). "
            + (
                "The getrandom() is the fresh 128-bit token every acquire needs; "
                if extra.get("getrandom", 0) >= 0.05
                else "Each acquire's fresh 128-bit token comes from the "
                "client's CSPRNG pool (no system call per token); "
            )
            + "the loop reuses one fixed token."
        )
    d_ratios = {x["id"]: x for x in main.get("diagnostic_ratios", [])}
    if "c-exact" in d_ratios and "exact-vs-raw" in f:
        out.append(server_side(d_ratios["c-exact"], f["exact-vs-raw"], cases, prof))
    if "py-floor" in t:
        line = (
            f"- Python: one Lock reused is "
            f"{t['py-floor']['ratio']['median']:.3f}{TIMES} the raw loop "
            f"({vs_floor('c-n1')} for C in the same run)"
        )
        if "py-n1" in prof and "c-n1" in prof:
            line += (
                f"; the binding adds "
                f"{prof['py-n1']['instructions'] - prof['c-n1']['instructions']:,.0f}"
                f" instructions per cycle to the C API's"
            )
        if cases.get("py-with-n1", {}).get("vs_floor"):
            line += (
                f"; a `with client.lock(...)` block per cycle (a new "
                f"Lock each time) is {vs_floor('py-with-n1')}"
            )
            if "py-with-n1" in prof:
                line += (
                    f" ({prof['py-with-n1']['instructions']:,.0f} "
                    f"instructions per cycle)"
                )
        out.append(line + ".")
    for interp in ("lua5.1", "luajit", "lua5.4"):
        key = f"{interp}-floor"
        if key not in t:
            continue
        line = (
            f"- {interp}: the API as users call it (a lock object per "
            f"acquire) is {t[key]['ratio']['median']:.3f}{TIMES} the raw loop; "
            f"one `hiredlock.core` handle reused is "
            f"{vs_floor(f'{interp}-core-reuse')}, a new core handle per "
            f"acquire without the facade {vs_floor(f'{interp}-core-n1')}"
        )
        if cases.get(f"{interp}-lean-n1", {}).get("vs_floor"):
            line += (
                f", and with a leaner facade sketched in the benchmark "
                f"(a one-field lock table, the token read when asked for) "
                f"{vs_floor(f'{interp}-lean-n1')}"
            )
        n1, ln, cn, cr = (
            prof.get(f"{interp}-{x}", {}).get("instructions")
            for x in ("n1", "lean-n1", "core-n1", "core-reuse")
        )
        if None not in (n1, cn, cr):
            line += (
                f". Instructions per cycle: {cr:,.0f} with the handle "
                f"reused, {cn - cr:+,.0f} for a new handle per acquire, "
                f"{n1 - cn:+,.0f} more for the facade ({n1:,.0f} in all)"
            )
            if ln is not None:
                line += f"; the leaner sketch {ln - cn:+,.0f} over the handle"
        out.append(line + ".")
    if "async-vs-sync" in t and "async-raw-vs-raw" in f:
        line = (
            f"- asyncio: one task is "
            f"{t['async-vs-sync']['ratio']['median']:.3f}{TIMES} the sync Python "
            f"cycle; the asyncio floor alone (the raw loop's two round trips "
            f"over a Protocol, each waiting for a future that the event loop "
            f"wakes one pass after the reply) is "
            f"{f['async-raw-vs-raw']['ratio']['median']:.3f}{TIMES} the raw loop"
        )
        if "async-raw-vs-py-raw" in f:
            line += (
                f" and {f['async-raw-vs-py-raw']['ratio']['median']:.3f}{TIMES} "
                f"the same loop over a blocking Python socket"
            )
        floor = t["async-vs-sync"].get("floor")
        if floor is not None:
            line += (
                f"; so a lock with no overhead over that floor would be "
                f"{floor['ratio']['median']:.3f}{TIMES} the sync Python cycle "
                f"here ({'past' if t['async-vs-sync'].get('floor_bound') else 'within'}"
                f" the bound of {t['async-vs-sync']['bound']:g})"
            )
        # Results of runs before issue 31 hold it as a floor ratio.
        over = t.get("async-vs-async-raw") or f.get("async-vs-async-raw")
        if over is not None:
            line += (
                f"; hiredlock.asyncio is "
                f"{over['ratio']['median']:.3f}{TIMES} that floor"
            )
        ins = [
            prof.get(c, {}).get("instructions") for c in ("py-async-n1", "py-async-raw")
        ]
        if None not in ins:
            line += (
                f" ({ins[0]:,.0f} client instructions per cycle against its "
                f"{ins[1]:,.0f})"
            )
        out.append(line + ".")
    c1, c5 = cases.get("c-n1"), cases.get("c-n5")
    if "fan5-vs-raw" in f and c1 and c5:
        fr = f["fan5-vs-raw"]["ratio"]["median"]
        cr = c5["us_per_cycle"] / c1["us_per_cycle"]
        n5 = ", ".join(
            f"{rt} {vs_floor(cid)}"
            for rt, cid in (
                ("C", "c-n5"),
                ("Python", "py-n5"),
                ("lua5.1", "lua5.1-n5"),
                ("LuaJIT", "luajit-n5"),
                ("lua5.4", "lua5.4-n5"),
            )
            if cid in cases
        )
        out.append(
            f"- N = 5 against N = 1: the raw fan-out to five masters alone "
            f"takes {fr:.2f}{TIMES} the raw N = 1 loop here, because the five "
            f"servers and the client take turns on one CPU: no client can "
            f"get N = 5 near N = 1 on this machine, so the fan-out target is "
            f"the delay proxy's (below). hiredlock's C "
            f"N = 5 cycle is {cr:.2f}{TIMES} its N = 1 cycle (median rates); "
            f"against the N = 5 floor itself: {n5}."
        )
    return "\n".join(out)


def server_side(c_exact, exact_vs_raw, cases, prof) -> str:
    """How much of the C gap is Redis running hiredlock's release: the raw
    loop with hiredlock's own commands (raw-exact) against the raw loop,
    and C against it; master 1's CPU and time per EVALSHA beside."""
    line = (
        f"- The raw loop's release is a shorter script on one key; sending "
        f"hiredlock's own commands instead (its release: the queue script on "
        f"three keys) makes the loop "
        f"{exact_vs_raw['ratio']['median']:.3f}{TIMES} the raw loop (Redis "
        f"running the longer script), and C is "
        f"{c_exact['ratio']['median']:.3f}{TIMES} that loop (the C client's "
        f"own share)"
    )
    ins = [prof.get(c, {}).get("instructions") for c in ("raw-exact", "c-n1")]
    if None not in ins:
        line += f" (client instructions per cycle: {ins[1]:,.0f} against {ins[0]:,.0f})"
    master = [(c, cases[c]) for c in ("raw", "raw-exact", "c-n1") if c in cases]
    if all(x.get("master_cpu_us_per_cycle") is not None for _, x in master):
        line += (
            ". Master 1 per cycle: "
            + "; ".join(
                f"`{c}` {x['master_cpu_us_per_cycle']:.1f} µs of CPU, "
                f"EVALSHA {x['master_usec_per_call'].get('evalsha', 0):.2f} µs"
                for c, x in master
            )
            + " (Redis's own time per call, INFO commandstats)"
        )
    return line + "."
