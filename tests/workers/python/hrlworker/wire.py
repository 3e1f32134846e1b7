"""The line protocol, Python side: one command a line on stdin, words
separated by blanks, options as key=value words; every answer is one JSON
line on stdout (tests/workers/README.md)."""

from __future__ import annotations

import json
import sys


def out(obj: dict) -> None:
    sys.stdout.write(json.dumps(obj, separators=(",", ":")) + "\n")
    sys.stdout.flush()


def parse(line: str) -> tuple[str | None, list[str], dict[str, str]]:
    """A command line as (command, positional words, key=value options)."""
    words = line.split()
    if not words:
        return None, [], {}
    args = [w for w in words[1:] if "=" not in w]
    opts = dict(w.split("=", 1) for w in words[1:] if "=" in w)
    return words[0], args, opts


def seconds(opts: dict[str, str], *names: str) -> dict[str, float]:
    """The named options present in opts, as floats (hiredlock's seconds)."""
    return {k: float(opts[k]) for k in names if k in opts}


CLIENT_OPTIONS = ("connect_timeout", "timeout", "retry_delay", "retry_jitter")
