"""Collects the figures of the last scripts/fuzz.sh run (libFuzzer's
-print_final_stats lines in BUILD_DIR/<target>.log) into one result file.

  python3 fuzz_figures.py build/fuzz OUT.json
"""

import json
import os
import sys
import time


def main() -> int:
    build, out = sys.argv[1], sys.argv[2]
    targets = {}
    for target in ("parser", "url", "protocol", "handshake"):
        log = os.path.join(build, f"{target}.log")
        if not os.path.exists(log):
            continue
        stats, crashes = {}, 0
        with open(log, errors="replace") as f:
            for line in f:
                if line.startswith("stat::"):
                    key, _, value = line[6:].partition(":")
                    stats[key.strip()] = int(value.strip())
                if "==ERROR" in line or "deadly signal" in line or "Timeout" in line:
                    crashes += 1
        corpus = os.path.join(build, "corpus", target)
        artifacts = os.path.join(build, "artifacts", target)
        targets[target] = {
            "executions": stats.get("number_of_executed_units"),
            "exec_per_s": stats.get("average_exec_per_sec"),
            "new_units": stats.get("new_units_added"),
            "peak_rss_mb": stats.get("peak_rss_mb"),
            "slowest_unit_s": stats.get("slowest_unit_time_sec"),
            "corpus_files": len(os.listdir(corpus)) if os.path.isdir(corpus) else 0,
            "crashes_leaks_timeouts": crashes
            + (len(os.listdir(artifacts)) if os.path.isdir(artifacts) else 0),
        }
    with open(out, "w") as f:
        json.dump(
            {"targets": targets, "finished": time.strftime("%Y-%m-%d %H:%M:%S")},
            f,
            indent=1,
        )
    bad = [
        t
        for t, v in targets.items()
        if v["crashes_leaks_timeouts"] or (v["executions"] or 0) < 1_000_000
    ]
    print(
        f"fuzz figures: {len(targets) - len(bad)} of {len(targets)} targets at "
        f">= 10^6 executions with no crash, leak or timeout"
    )
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
