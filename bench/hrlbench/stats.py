"""The statistics of the benchmark: nearest-rank percentiles, latency
summaries, quartiles of ratios."""

from __future__ import annotations

import math
import statistics


def percentile(sorted_values: list[float], p: float) -> float:
    """Nearest-rank percentile of already sorted values."""
    if not sorted_values:
        return float("nan")
    k = max(0, math.ceil(p / 100 * len(sorted_values)) - 1)
    return sorted_values[min(k, len(sorted_values) - 1)]


def lat_summary(samples: list[float]) -> dict:
    s = sorted(samples)
    return {
        "n": len(s),
        "p50": percentile(s, 50),
        "p99": percentile(s, 99),
        "p999": percentile(s, 99.9),
        "max": s[-1] if s else float("nan"),
    }


def quartiles(values: list[float]) -> dict:
    s = sorted(values)
    return {
        "median": statistics.median(s),
        "p25": percentile(s, 25),
        "p75": percentile(s, 75),
        "n": len(s),
    }
