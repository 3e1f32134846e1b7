"""perfdoc: PERFORMANCE.md and performance.png from one bench/harness.py
result file (bench/report.py is the command). Every number comes from the
JSON; nothing here is a measurement.

fmt         number and table formatting
plot        performance.png
context     title, the run, the method
main_phase  targets, the tables per N, peers, A/B (explain: their reading)
phases      profile, paused, memory, leases, rwsem
waiting     contention, the nginx stampede, the delay proxy
"""

from __future__ import annotations

from . import context, main_phase, phases, waiting
from .plot import plot

__all__ = ["plot", "render"]


def render(d: dict, png_name: str) -> str:
    """The whole PERFORMANCE.md, section by section."""
    lines = context.title(d, png_name)
    for section in (
        context.the_run,
        context.method,
        main_phase.targets,
        main_phase.main_table,
        main_phase.ab,
        phases.profile,
        phases.paused,
        waiting.contention,
        waiting.stampede,
        waiting.delay,
        phases.memory,
        phases.leases,
        phases.rwsem,
    ):
        lines += section(d)
    return "\n".join(lines) + "\n"
