"""Bad inputs, Python: the one table of every bad input the Python API is
checked against, and how a row is run. Two consumers:

- tests/python/test_inputs.py (the Python suite) runs every row that needs
  no server or one healthy master (NONE, OK), one pytest case a row;
- `python3 -m bad_inputs OUT.json` (run from tests/python by
  tests/reliability/run_bad.py) runs every row, the ones that need the
  misbehaving servers of tests/reliability/hrlrel/badenv.py too (ENV), and
  writes the observed outcomes that docs/RELIABILITY.md counts.

A row: (category, input, call, kind, message, need). call(ctx) makes the
call; kind is the exception's class name, "ok" (accepted, the value does
not matter) or "returns" (its value, as text, must match); message must be
in the error text, or match it as a regular expression when it starts
with "^".
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field

NONE, OK, ENV = "none", "ok", "env"  # what a row needs, in that order
NEEDS = (NONE, OK, ENV)
# A URL nothing answers on: rows that must fail before any I/O use it.
NOWHERE = "redis://127.0.0.1:1"


@dataclass
class Ctx:
    """What rows call against: the healthy master (url, unix socket, the
    same master spelt localhost) and, for ENV rows, the HRL_BAD_* servers."""

    ok: str
    ok_sock: str = ""
    dup: str = ""
    env: dict = field(default_factory=dict)

    @classmethod
    def from_environ(cls) -> Ctx:
        e = os.environ
        return cls(e["HRL_BAD_OK"], e["HRL_BAD_OK_SOCK"], e["HRL_BAD_DUP"], dict(e))

    def client(self, url: str | None = None, **kw):
        import hiredlock

        return hiredlock.Client(
            url or self.ok, **{"timeout": 0.5, "connect_timeout": 0.5, **kw}
        )

    def lock(self, name="bad:x", **kw):
        return self.client().lock(name, **kw)

    def inspect(self):
        import redis

        return redis.Redis(unix_socket_path=self.ok_sock)


def matches(message: str, text: str) -> bool:
    if message.startswith("^"):
        return re.search(message, text) is not None
    return message in text


def run(row, ctx: Ctx) -> dict:
    """Runs one row; its outcome as the reliability report shows it."""
    category, label, fn, kind, message, _need = row
    try:
        value = fn(ctx)
        got_kind = "returns" if kind == "returns" else "ok"
        text = value if isinstance(value, str) else repr(value)
    except BaseException as e:  # every outcome is recorded
        got_kind, text = type(e).__name__, str(e)
    return {
        "category": category,
        "input": label,
        "expected": kind + (f": {message}" if message else ""),
        "got": "accepted" if got_kind == "ok" else f"{got_kind}: {text}",
        "as_expected": got_kind == kind and matches(message, text),
    }


def rows(up_to: str = ENV) -> list[tuple]:
    """The table, or the rows whose need is at most up_to."""
    from . import arguments, deploy, options, states

    table = arguments.ROWS + options.ROWS + states.ROWS + deploy.ROWS
    return [r for r in table if NEEDS.index(r[5]) <= NEEDS.index(up_to)]
