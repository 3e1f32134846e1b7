"""The one-line verdicts run.py prints: per case, and for the suite."""

from __future__ import annotations


def runs_of(res: dict) -> list[dict]:
    return list(res.get("runs", {}).values())


def one_line(res: dict) -> str:
    if "error" in res:
        return "error: " + res["error"].strip().splitlines()[-1]
    parts = []
    for name, r in res.get("runs", {}).items():
        if "overlaps" in r:
            parts.append(
                f"{name}: {r['acquired']}/{r['acquire_calls']} acquired, "
                f"{r['overlaps']} overlaps, {r['lost_acked']}+"
                f"{max(r['counter_lost'], 0)} lost, orphans "
                f"{r['orphans_after_run']}/{r['orphans_after_ttl']}, "
                f"{r['overruns']} overruns"
            )
    for k in ("summary",):
        if k in res:
            parts.append(res[k])
    return "; ".join(parts)


def summary_line(results: list[dict], bad: str | None = None) -> str:
    """One line for the suite: cases as expected, violations where none are
    allowed (the negative controls excluded), negative controls caught."""
    ok = sum(1 for r in results if r["as_expected"])
    overlaps = lost = 0
    neg_total = neg_caught = 0
    for res in results:
        for name, r in res.get("runs", {}).items():
            if res["case"] == 4 or (res["case"] == 3 and name == "immediate"):
                continue  # negative controls: violations are the point
            if not (res["case"] == 10 and name == "negative"):
                overlaps += r.get("overlaps", 0)
            lost += r.get("lost_acked", 0) + max(r.get("counter_lost", 0), 0)
        if "negative_control_caught" in res:
            neg_total += 1
            neg_caught += bool(res["negative_control_caught"])
    line = (
        f"reliability: {ok} of {len(results)} cases as expected, "
        f"{overlaps} overlaps where none allowed, {lost} lost updates where "
        f"none allowed, {neg_caught} of {neg_total} negative controls caught"
    )
    return line + (f"; {bad}" if bad else "")
