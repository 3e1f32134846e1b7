"""The profile phase: client instructions (callgrind) and system calls
(strace) per cycle, deterministic."""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

from . import REPO, log
from .cases import PROFILE_CASES, QUICK_PROFILE_CASES
from .pool import Worker


def counted(case: dict, urls, cpu, wrap, k: int, base: int) -> None:
    """A fresh worker (under wrap) runs base cycles, then k more."""
    w = Worker(case["worker"], urls, cpu, wrap)
    try:
        w.call(f"count {case['wcase']} {base}")
        if k:
            w.call(f"count {case['wcase']} {k}")
    finally:
        w.close()


def callgrind_total(path: Path) -> int:
    text = path.read_text()
    m = re.search(r"^(?:summary|totals):\s+(\d+)", text, re.M)
    return int(m.group(1))


def strace_calls(path: Path) -> dict[str, int]:
    calls = {}
    for line in path.read_text().splitlines():
        tok = line.split()
        if len(tok) >= 5 and tok[0][0].isdigit() and tok[-1] != "total":
            calls[tok[-1]] = int(tok[3])
    return calls


def profile_phase(args, cases, urls) -> dict:
    """Deterministic client-side costs: instructions (callgrind) and system
    calls (strace) per cycle, each the difference between a run of `base`
    cycles and one of base + k, so start-up cancels out."""
    base, k = 200, args.profile_cycles
    tmp = REPO / "build" / "bench" / "profile"
    tmp.mkdir(parents=True, exist_ok=True)
    out = {"cycles_base": base, "cycles": k, "cases": {}}
    # Python's start-up depends on its hash seed; fix it, so both runs of
    # a pair start alike.
    os.environ["PYTHONHASHSEED"] = "0"
    have_valgrind = shutil.which("valgrind") is not None
    have_strace = shutil.which("strace") is not None
    wanted = (
        args.cases.split(",")
        if args.cases
        else (QUICK_PROFILE_CASES if args.quick else PROFILE_CASES)
    )
    for cid in wanted:
        if cid not in cases:
            continue
        case = cases[cid]
        entry = {}
        if have_valgrind:
            totals = []
            for cycles in (0, k):
                f = tmp / f"{cid}.{cycles}.callgrind"
                wrap = [
                    "valgrind",
                    "--tool=callgrind",
                    "--quiet",
                    "--smc-check=all-non-file",
                    f"--callgrind-out-file={f}",
                ]
                counted(case, urls, args.cpu, wrap, cycles, base)
                totals.append(callgrind_total(f))
            entry["instructions"] = (totals[1] - totals[0]) / k
        if have_strace:
            counts = []
            for cycles in (0, k):
                f = tmp / f"{cid}.{cycles}.strace"
                wrap = ["strace", "-f", "-c", "-o", str(f)]
                counted(case, urls, args.cpu, wrap, cycles, base)
                counts.append(strace_calls(f))
            entry["syscalls"] = {
                name: (counts[1].get(name, 0) - counts[0].get(name, 0)) / k
                for name in set(counts[0]) | set(counts[1])
                if counts[1].get(name, 0) != counts[0].get(name, 0)
            }
        out["cases"][cid] = entry
        log(
            f"profile: {cid}: "
            + (
                f"{entry['instructions']:,.0f} instructions/cycle, "
                if "instructions" in entry
                else ""
            )
            + (
                f"{sum(entry['syscalls'].values()):.2f} syscalls/cycle"
                if "syscalls" in entry
                else ""
            )
        )
    return out
