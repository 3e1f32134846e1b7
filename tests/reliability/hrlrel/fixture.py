"""The shared Redis launcher, tests/fixtures/redis-fixture: the only way the
harness starts, kills, pauses and restarts Redis, through the Python class
every suite shares (tests/fixtures/redis_fixture.py)."""

from __future__ import annotations

import os
import sys

from . import ROOT

sys.path.insert(0, os.path.join(ROOT, "tests", "fixtures"))

from redis_fixture import LAUNCHER
from redis_fixture import Servers as _Servers

__all__ = ["LAUNCHER", "Servers"]


class Servers(_Servers):
    def stop(self, check: bool = False) -> None:
        """Called from finally blocks: a launcher that fails to stop must
        not hide the case's own error."""
        super().stop(check)
