"""The fenced examples of README.md and docs/*.md, each with its marker.

Every fenced block (```lang ... ```) is preceded by an HTML comment that
says what it is, invisible when the page is rendered:

    <!-- example: run [option...] -->     a program the docs suite runs
    <!-- example: file PATH -->           a file a later runnable example of
                                          the same page uses (an nginx
                                          config's Lua module)
    <!-- example: fragment [why] -->      a listing, a grammar, a sketch, or a
                                          command the suites run otherwise

Options of run: id=NAME (a session later examples continue), after=NAME
(runs NAME's code first, as one program: the quick start defines `client`,
the next example uses it), lua5.4 (Lua 5.4 only: `<close>`), main (C: the
body of main()), get=PATH and expect=TEXT (nginx: a request and what its
body must contain), stock (nginx: also as Debian's stock nginx.conf would
include it). A block without a marker is an error: a new example must say
whether it runs.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path

MARKER = re.compile(r"^\s*<!--\s*example:\s*(.*?)\s*-->\s*$")
FENCE = re.compile(r"^(\s*)(```+)\s*([\w+-]*)(.*)$")


@dataclass
class Example:
    page: Path
    line: int  # of the opening fence, 1-based
    lang: str
    code: str
    kind: str  # run, file, fragment
    options: dict[str, str] = field(default_factory=dict)
    flags: set[str] = field(default_factory=set)
    path: str = ""  # file: where it goes

    @property
    def where(self) -> str:
        return f"{self.page.name}:{self.line}"


class Unmarked(Exception):
    pass


def _marker(lines: list[str], fence_at: int) -> str | None:
    """The marker on the nearest non-blank line above the fence."""
    i = fence_at - 1
    while i >= 0 and not lines[i].strip():
        i -= 1
    if i < 0:
        return None
    m = MARKER.match(lines[i])
    return m.group(1) if m else None


def _parse_marker(example: Example, text: str) -> None:
    kind = text.split(None, 1)[0] if text else ""
    if kind not in ("run", "file", "fragment"):
        raise Unmarked(f"{example.where}: bad marker <!-- example: {text} -->")
    example.kind = kind
    if kind == "fragment":
        return  # the rest is why, for the reader
    words = shlex.split(text)
    if example.kind == "file":
        if len(words) != 2:
            raise Unmarked(f"{example.where}: file needs one PATH")
        example.path = words[1]
        return
    for word in words[1:]:
        key, eq, value = word.partition("=")
        if eq:
            example.options[key] = value
        else:
            example.flags.add(key)


def extract(page: Path) -> list[Example]:
    """Every fenced block of page, with its marker; Unmarked when one has
    none (or a bad one)."""
    lines = page.read_text(encoding="utf-8").split("\n")
    found: list[Example] = []
    problems: list[str] = []
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        indent, ticks, lang = m.group(1), m.group(2), m.group(3)
        start = i
        body: list[str] = []
        i += 1
        while i < len(lines) and not lines[i].strip().startswith(ticks):
            line = lines[i]
            body.append(line[len(indent) :] if line.startswith(indent) else line)
            i += 1
        i += 1  # the closing fence
        example = Example(page, start + 1, lang, "\n".join(body) + "\n", "")
        marker = _marker(lines, start)
        if marker is None:
            problems.append(f"{example.where}: a ```{lang} block without a marker")
            continue
        try:
            _parse_marker(example, marker)
        except Unmarked as e:
            problems.append(str(e))
            continue
        found.append(example)
    if problems:
        raise Unmarked("\n".join(problems))
    return found
