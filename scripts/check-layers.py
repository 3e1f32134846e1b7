#!/usr/bin/env python3
"""Checks that the C core's layers include one way: api -> driver -> proto.

core/src/proto/ is the sans-I/O protocol: it includes no header of the
driver or the API, and no socket, poll, hiredis or file header (its
randomness comes from the driver, through hrl_config.entropy).
core/src/driver/ (the built-in poll/hiredis driver) may include proto but
not the API. core/src/api/ (the public calls) may include both. Prints the
edges between layers; exits 1 on a violation.

    scripts/check-layers.py
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "core" / "src"
LAYERS = ["proto", "driver", "api"]  # each may include those before it
INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]', re.MULTILINE)
# What "no I/O" rules out in proto/: sockets, polling, hiredis, and files
# (open(), getrandom(): the entropy a client needs is the driver's to give,
# proto/random.c takes it through hrl_config.entropy).
IO_HEADERS = re.compile(
    r"^(sys/socket\.h|sys/uio\.h|poll\.h|sys/poll\.h|sys/epoll\.h|sys/select\.h"
    r"|netinet/.*|arpa/.*|netdb\.h|hiredis/.*|hiredis\.h|openssl/.*"
    r"|fcntl\.h|sys/random\.h|sys/stat\.h|dirent\.h)$"
)


def layer_of_include(src_layer: str, target: str) -> str | None:
    """The core layer a quoted include names, or None (public or other)."""
    first = target.split("/", 1)[0]
    if first in LAYERS and "/" in target:
        return first
    if (SRC / src_layer / target).exists():
        return src_layer
    return None


def main() -> int:
    problems: list[str] = []
    edges: set[tuple[str, str]] = set()
    files = sorted(p for p in SRC.rglob("*") if p.suffix in (".c", ".h"))
    for path in files:
        rel = path.relative_to(SRC)
        layer = rel.parts[0]
        if layer not in LAYERS:
            problems.append(f"{rel}: outside {', '.join(LAYERS)}")
            continue
        allowed = LAYERS[: LAYERS.index(layer) + 1]
        for kind, target in INCLUDE.findall(path.read_text(encoding="utf-8")):
            if kind == "<":
                if layer == "proto" and IO_HEADERS.match(target):
                    problems.append(f"{rel}: proto/ includes an I/O header <{target}>")
                continue
            to = layer_of_include(layer, target)
            if to is None:
                if not target.startswith("hiredlock"):
                    problems.append(f'{rel}: includes "{target}", found nowhere')
                continue
            if to != layer:
                edges.add((layer, to))
            if to not in allowed:
                problems.append(f'{rel}: {layer}/ includes "{target}" ({to}/)')
    graph = ", ".join(f"{a} -> {b}" for a, b in sorted(edges)) or "none"
    for problem in problems:
        print(f"layers: {problem}")
    verdict = "ok" if not problems else f"{len(problems)} violation(s)"
    print(f"layers: {verdict}: {len(files)} files; edges {graph}")
    return 0 if not problems else 1


if __name__ == "__main__":
    sys.exit(main())
