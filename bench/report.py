#!/usr/bin/env python3
"""Renders one bench/harness.py result file as PERFORMANCE.md and
performance.png. Every number in them comes from the JSON; nothing here is
a measurement.

    python3 bench/report.py bench/results/<date>.json [--docs docs]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from perfdoc import plot, render  # bench/perfdoc, beside this script

REPO = Path(__file__).resolve().parents[1]


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("results")
    p.add_argument("--docs", default=str(REPO / "docs"))
    args = p.parse_args()
    src = Path(args.results).resolve()
    d = json.loads(src.read_text())
    d["_source"] = str(src.relative_to(REPO)) if src.is_relative_to(REPO) else str(src)
    docs = Path(args.docs)
    docs.mkdir(parents=True, exist_ok=True)
    png = docs / "performance.png"
    if "main" in d:  # the plot is of the main phase
        plot(d, png)
    (docs / "PERFORMANCE.md").write_text(render(d, png.name))
    print(f"bench: wrote {docs / 'PERFORMANCE.md'} and {png}")


if __name__ == "__main__":
    main()
