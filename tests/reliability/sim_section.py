"""The "Simulation" section of docs/RELIABILITY.md: the model's text
(tests/sim/MODEL.md, kept beside the simulator it describes) around the
figures of the last `make sim` (results/sim.json)."""

from __future__ import annotations

import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))
MODEL = os.path.join(HERE, "..", "sim", "MODEL.md")


def _figures(s: dict) -> list[str]:
    commit = s.get("git_commit", "")[:7] or "?"
    dirty = " (with uncommitted changes)" if s.get("git_modified") else ""
    cov = s.get("coverage", {})
    reached = f"{cov.get('reached', '?')} of {cov.get('listed', '?')}"
    grants = f"{s['grants']} ({s['fenced_grants']})"
    out = [
        "### Figures of the last run",
        "",
        f"`make sim` on commit {commit}{dirty}, finished {s.get('finished', '?')}, "
        f"{s.get('machine', '?')}, load average {s.get('load_average', '?')} "
        "(other work shared the CPUs: the figure per CPU second is the one to "
        "compare):",
        "",
        "| schedules | seeds | wall s | schedules/s | CPU s "
        "| schedules per CPU s | events a schedule | grants (fenced) "
        "| violations | protocol states reached |",
        "|---|---|---|---|---|---|---|---|---|---|",
        f"| {s['schedules']} | {s['seeds']} | {s['seconds']:.0f} "
        f"| {s['per_second']:.0f} | {s.get('cpu_seconds', 0):.0f} "
        f"| {s.get('per_cpu_second', 0):.0f} | {s['events_per_schedule']:.0f} "
        f"| {grants} | **{s['violations']}** | {reached} |",
        "",
    ]
    if "max_free_part" in s:
        out += [
            "Closest to the liveness bound: a name free for "
            f"{100 * s['max_free_part']:.0f} % of it while a waiter waited "
            f"(seed {s['max_free_seed']}). Longest a holder's release, extend "
            "or renewal waited for its client's mutex behind other locks' "
            f"rounds (the built-in driver's shape): {s['max_mutex_wait_ms']:.0f} "
            f"ms (seed {s['max_mutex_wait_seed']}; issue 24 wants none).",
            "",
        ]
    mutants = s.get("mutants", [])
    if mutants:
        out += [
            "Each mutant plants one bug; the run hunts seeds from 1 until one "
            "fails an invariant that the shipped code passes on the same seed:",
            "",
            "| mutant | the bug | in | caught by seed | after schedules | as |",
            "|---|---|---|---|---|---|",
        ]
        for m in mutants:
            where = "the core (mutant.h)" if m["core"] else "the scripts (model)"
            if m["seed"]:
                seed = str(m["seed"])
            elif not m.get("observable", True):
                seed = "not caught (a rare schedule: below)"
            else:
                seed = "**not caught**"
            out.append(
                f"| {m['name']} | {m['what']} | {where} | {seed} | {m['tried']} "
                f"| {m['violation'] or '-'} |"
            )
        out.append("")
    return out


def sim_section(results: str) -> list[str]:
    with open(MODEL) as f:
        text = f.read()
    intro, rest = text.split("<!-- figures -->")
    model, findings = rest.split("<!-- findings -->")
    out = ["## Simulation", "", intro.strip(), ""]
    path = os.path.join(results, "sim.json")
    if os.path.exists(path):
        with open(path) as f:
            out += _figures(json.load(f))
    else:
        out += ["No simulation figures yet: `make sim` writes them.", ""]
    out += [model.strip(), "", findings.strip(), ""]
    return out
