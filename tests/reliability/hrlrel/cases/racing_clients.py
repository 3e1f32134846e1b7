"""Case 6: 16 clients racing on N = 5 (split votes)."""

from __future__ import annotations

import os

from .. import now_ns, workers
from ..checker import percentile
from ..fixture import Servers
from ..workload import RUNTIMES

# The racers' client: a late master must not make a round a split vote.
RACER_CLIENT = dict(
    timeout=0.5, connect_timeout=1.0, retry_delay=0.05, retry_jitter=0.04
)


def case6(out: str, full: bool) -> dict:
    rounds_a, rounds_b = (300, 20) if full else (25, 3)
    name = "c6:race"
    masters = Servers(5)
    racers = []
    os.makedirs(out, exist_ok=True)
    # The racers' stderr, kept open for them; closed at the end.
    errlog = open(os.path.join(out, "case6.stderr"), "w")  # noqa: SIM115
    try:
        for i in range(16):
            # Each racer lists the masters in another order, so their SETs
            # reach the masters in different orders and votes split.
            urls = masters.urls[i % 5 :] + masters.urls[: i % 5]
            rt = RUNTIMES[i % len(RUNTIMES)]
            racers.append(workers.start(rt, urls, stderr=errlog))
        for r in racers:
            r.call(workers.command("client", **RACER_CLIENT))

        def race(phase: str) -> tuple[int, list[dict]]:
            """Everyone tries at once, 50 ms from now on the monotonic
            clock; returns that instant and every racer's outcome."""
            t = now_ns() + 50_000_000
            line = workers.command("race", phase=phase, name=name, at=t)
            for r in racers:
                r.send(line)
            return t, [r.read() for r in racers]

        a_rows = []
        for _ in range(rounds_a):
            _, got = race("A")
            winners = [k for k, g in enumerate(got) if g["won"]]
            keys = [masters.redis(i).get(name) for i in range(1, 6)]
            tok = got[winners[0]]["token"].encode() if len(winners) == 1 else None
            stray = sum(1 for v in keys if v is not None and v != tok)
            for k in winners:
                racers[k].call("release")
            left = sum(1 for i in range(1, 6) if masters.redis(i).exists(name))
            a_rows.append(
                {
                    "winners": len(winners),
                    "granted_to_winner": sum(
                        1 for v in keys if v is not None and v == tok
                    ),
                    "stray_keys": stray,
                    "left_after_release": left,
                    "errors": sorted({g["err"] for g in got if not g["won"]}),
                }
            )
        b_rows = []
        for _ in range(rounds_b):
            t_go, got = race("B")
            wins = sorted(g["t1"] for g in got if g["won"])
            b_rows.append(
                {
                    "won": len(wins),
                    "first_ms": round((wins[0] - t_go) / 1e6, 1) if wins else None,
                    "last_ms": round((wins[-1] - t_go) / 1e6, 1) if wins else None,
                }
            )
        for r in racers:
            r.close(timeout=30)
        after = sum(1 for i in range(1, 6) if masters.redis(i).exists(name))
    finally:
        for r in racers:
            if r.proc.poll() is None:
                r.proc.kill()
                r.proc.wait()
        masters.stop()
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
            "p50": percentile(firsts, 50),
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
