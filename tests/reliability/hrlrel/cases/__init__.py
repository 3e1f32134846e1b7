"""The cases of docs/RELIABILITY.md, one module each. Each caseN takes
`full` (the documented run) or the short version (make test) and returns a
result dict with `expected` (what must hold), `as_expected` and the
figures; run.py calls them by number."""

from __future__ import annotations

from .cancelled_acquires import case7
from .clock_jumps import case8
from .delayed_replies import case5
from .error_replies import case9
from .holds import case10
from .killed_masters import case3
from .no_faults import case1
from .paused_holder import case4
from .racing_clients import case6
from .summary import one_line, summary_line
from .unavailable_subsets import case2

__all__ = [
    "case1",
    "case2",
    "case3",
    "case4",
    "case5",
    "case6",
    "case7",
    "case8",
    "case9",
    "case10",
    "one_line",
    "summary_line",
]
