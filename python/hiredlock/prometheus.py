"""A Prometheus collector of hiredlock clients' counters
(``pip install hiredlock[prometheus]``)::

    import prometheus_client
    import hiredlock
    from hiredlock.prometheus import HiredlockCollector

    client = hiredlock.Client(urls)
    prometheus_client.REGISTRY.register(HiredlockCollector(client))

The metrics (docs/OPERATING.md lists them; nginx's ``hiredlock.prometheus()``
renders the same names) are read from ``client.stats()`` at each scrape:
the core counts them per client, without a lock, from every thread. A
collector of several clients tells them apart by the ``client`` label
(``name=`` given to :meth:`HiredlockCollector.add`, else ``"0"``, ``"1"``,
...). An asyncio client (``hiredlock.asyncio.Client``) is collected the same
way.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from prometheus_client.core import CounterMetricFamily, HistogramMetricFamily
from prometheus_client.registry import Collector

PREFIX = "hiredlock"


class HiredlockCollector(Collector):
    """Collects the counters of the clients given (and added later)."""

    def __init__(self, *clients: Any) -> None:
        self._clients: list[tuple[str, Any]] = []
        for client in clients:
            self.add(client)

    def add(self, client: Any, name: str | None = None) -> None:
        """Collects client too, labelled ``client=name``."""
        self._clients.append(
            (name if name is not None else str(len(self._clients)), client)
        )

    def collect(self) -> Iterator[Any]:
        labels = ["client"]
        acquires = CounterMetricFamily(
            f"{PREFIX}_acquires",
            "Acquires by outcome: acquired, busy (timed out), cancelled, "
            "failed (reason: the error)",
            labels=[*labels, "result", "reason"],
        )
        waits = HistogramMetricFamily(
            f"{PREFIX}_acquire_seconds",
            "How long acquires took, waits included",
            labels=labels,
        )
        counters = {
            key: CounterMetricFamily(f"{PREFIX}_{metric}", doc, labels=labels)
            for key, metric, doc in SIMPLE
        }
        renewals = CounterMetricFamily(
            f"{PREFIX}_renewals",
            "Lease renewals: ok, or failed while the lease was still valid",
            labels=[*labels, "result"],
        )
        masters = CounterMetricFamily(
            f"{PREFIX}_master_failures",
            "Rounds a master failed: unreachable (refused, reset, timed "
            "out) or error (an error reply)",
            labels=[*labels, "master", "kind"],
        )
        for name, client in self._clients:
            s = client.stats()
            for result in ("acquired", "busy", "cancelled"):
                acquires.add_metric([name, result, ""], s[result])
            for reason, n in s["failed"].items():
                acquires.add_metric([name, "failed", reason], n)
            cumulative, buckets = 0, []
            for bound, n in zip([*s["wait_bounds"], float("inf")], s["wait_buckets"]):
                cumulative += n
                le = "+Inf" if bound == float("inf") else repr(bound)
                buckets.append((le, cumulative))
            waits.add_metric([name], buckets, s["wait_sum"])
            for key, _, _ in SIMPLE:
                counters[key].add_metric([name], s[key])
            renewals.add_metric([name, "ok"], s["renewals"])
            renewals.add_metric([name, "failed"], s["renewals_failed"])
            for m in s["masters"]:
                masters.add_metric([name, m["master"], "unreachable"], m["unreachable"])
                masters.add_metric([name, m["master"], "error"], m["errors"])
        yield acquires
        yield waits
        yield from counters.values()
        yield renewals
        yield masters


# stats() key, metric name (without _total), help
SIMPLE = (
    ("waited", "waits", "Acquires that queued for the lock"),
    ("released", "releases", "Releases confirmed by a quorum"),
    ("handoffs", "handoffs", "Releases that handed the lock to the next waiter"),
    ("dead_waiters", "dead_waiters", "Queued waiters a hand-off skipped: gone"),
    ("extended", "extends", "Extends confirmed by a quorum"),
    (
        "losses",
        "losses",
        "Holds lost: leases, and releases/extends that found the key not ours",
    ),
    ("inspections", "inspections", "Inspections (status, inspect)"),
)
