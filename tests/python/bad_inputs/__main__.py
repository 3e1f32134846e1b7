"""The reliability side of the Python bad-input table: every row against
the HRL_BAD_* servers (tests/reliability/hrlrel/badenv.py), the outcomes as
JSON for docs/RELIABILITY.md.

    cd tests/python && python3 -m bad_inputs OUT.json

Exits non-zero when a row does not give what it should.
"""

from __future__ import annotations

import json
import sys

from . import Ctx, rows, run


def main() -> None:
    ctx = Ctx.from_environ()
    out = [run(r, ctx) for r in rows()]
    bad = [r for r in out if not r["as_expected"]]
    for r in bad:
        print(
            f"bad inputs (python): NOT as expected: {r['input']}: "
            f"want {r['expected']}, got {r['got']}"
        )
    with open(sys.argv[1], "w") as f:
        json.dump({"runtime": "python", "rows": out}, f, indent=1)
    print(f"bad inputs (python): {len(out) - len(bad)} of {len(out)} as expected")
    sys.exit(1 if bad else 0)


main()
