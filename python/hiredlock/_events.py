"""The core's events (docs/OPERATING.md) as records of the ``logging``
logger ``hiredlock``: WARNING for a lost lease or a failed renewal, INFO
for masters going and coming back and for gone waiters a release skipped,
DEBUG for slow waits. The level and the words are the core's, the same in
every runtime; the event itself rides along as ``record.hiredlock_event``
(a dict: kind, level, message, name, master, ms, count, status, detail)
for structured handlers.

The core queues events where Python cannot run (its renewer thread, its
mutexes); they are handed over here by the thread whose call made them, as
it returns, and by the hiredlock-on-lost daemon thread for a lease's
renewals. Nothing is logged on the fast path: an uncontended acquire and
release report no event.
"""

from __future__ import annotations

import logging
from typing import Any

from . import _core

logger = logging.getLogger("hiredlock")
# A library's logger: silent until the program configures logging (no
# stderr output from logging's last-resort handler).
logger.addHandler(logging.NullHandler())

LEVELS = {"warning": logging.WARNING, "info": logging.INFO, "debug": logging.DEBUG}


def emit(client: Any) -> None:
    """Logs the events client has queued (called by the core's binding)."""
    events, dropped = client._take_events()
    for event in events:
        level = LEVELS.get(event["level"], logging.INFO)
        if logger.isEnabledFor(level):
            logger.log(level, "%s", event["message"], extra={"hiredlock_event": event})
    if dropped:
        logger.warning("%d events were dropped: the client's queue was full", dropped)


_core._set_event_sink(emit)
