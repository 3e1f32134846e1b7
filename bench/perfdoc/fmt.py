"""Formatting for PERFORMANCE.md: numbers, ratios with their IQR, tables."""

from __future__ import annotations

import math

TIMES = "\u00d7"  # the multiplication sign, in "1.02x" and "2 x CPU"
DASH = "\u2013"  # the en dash: "no value", and ranges "1.01-1.03"


def fmt_rate(x):
    return DASH if x is None else f"{x:,.0f}"


def fmt_us(x):
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return DASH
    if x >= 10000:
        return f"{x / 1000:,.1f} ms"
    return f"{x:,.0f}" if x >= 100 else f"{x:.1f}"


def fmt_ratio(q, digits=3):
    if q is None:
        return DASH
    return (
        f"{q['median']:.{digits}f} ({q['p25']:.{digits}f}{DASH}{q['p75']:.{digits}f})"
    )


def mark(ok):
    return "**met**" if ok else "**missed**"


def md_table(head, rows, left=1):
    """A table whose first `left` columns (or the columns in the set
    `left`) are left-aligned, the rest right-aligned (numbers)."""
    lefts = set(range(left)) if isinstance(left, int) else left
    out = [
        "| " + " | ".join(head) + " |",
        "| "
        + " | ".join("---" if k in lefts else "---:" for k in range(len(head)))
        + " |",
    ]
    out += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    return "\n".join(out)
