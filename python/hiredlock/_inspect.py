"""Inspections (docs/OPERATING.md): who holds a lock and who waits for it,
as each master has it, and the quorum's view; the core reads and judges
(``Client.inspect``), this only gives the fields names and prints them
(``hiredlock status``)."""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Sequence
from typing import Any, Union

Name = Union[str, bytes]


@dataclasses.dataclass(frozen=True)
class Waiter:
    """A queued waiter, as one master has it."""

    token: str  #: its token's first 8 characters
    age: float  #: seconds since it queued (its host's clock against the master's)
    lease: float  #: seconds its entry lives without a new try; <= 0: gone, skipped
    owner: str | None  #: its owner label


@dataclasses.dataclass(frozen=True)
class Hold:
    """A hold of a read-write lock or semaphore: a read, the write, a permit."""

    token: str  #: its token's first 8 characters
    hold: str  #: "read", "write", or the permit's number ("1".."permits")
    ttl: float  #: seconds it lasts (on the quorum: at best, as validity)
    owner: str | None  #: its owner label
    holding: int = 1  #: masters it is on (the inspection's list)


@dataclasses.dataclass(frozen=True)
class MasterState:
    """What one master has of a lock."""

    master: str  #: "host:port" or the socket path
    ok: bool  #: it answered
    error: str | None  #: why not ("connection failed: ...")
    present: bool  #: the lock key exists
    token: str | None  #: the first 8 characters of its value ("(list)": not a lock)
    ttl: float | None  #: seconds left; -1.0: no TTL; None: no key (or no answer)
    fence: int | None  #: the name's fence counter
    owner: str | None  #: the holder's owner label
    queued: int  #: entries in the waiting queue
    waiters: tuple[Waiter, ...]  #: the first of them, in order
    #: "mutex", "read-write lock", "semaphore", "none" (no key), "other"
    kind: str = "none"
    hold_count: int = 0  #: live holds (a read-write lock's, a semaphore's)
    holds: tuple[Hold, ...] = ()  #: the first 16 of them, by token


@dataclasses.dataclass(frozen=True)
class Inspection:
    """A lock as its masters have it, and the quorum's view of it.

    ``state`` is ``"held"`` (one token is on a quorum of masters), ``"free"``
    (none is, nor could be with the masters that did not answer) or
    ``"unknown"`` (too few answered to tell).
    """

    name: Name
    state: str
    held: bool
    token: str | None  #: the token on the most masters (first 8 characters)
    owner: str | None  #: its owner label
    validity: float | None  #: held: seconds it stays on a quorum at best
    fence: int | None  #: the highest fence counter
    quorum: int
    answered: int  #: masters that answered
    holding: int  #: masters the token is on
    masters: tuple[MasterState, ...]
    #: what the name is, as most masters that answered have it: "mutex",
    #: "read-write lock", "semaphore", "none" (no key) or "other"
    kind: str = "none"
    #: a read-write lock's or semaphore's holds on a quorum, by token
    holds: tuple[Hold, ...] = ()

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Inspection:
        masters = tuple(
            MasterState(
                **{
                    **m,
                    "waiters": tuple(Waiter(**w) for w in m["waiters"]),
                    "holds": tuple(Hold(**h) for h in m.get("holds", ())),
                }
            )
            for m in d["masters"]
        )
        holds = tuple(Hold(**h) for h in d.get("holds", ()))
        return cls(**{**d, "masters": masters, "holds": holds})

    def as_dict(self) -> dict[str, Any]:
        """A dict for JSON: names as text (bytes decoded, invalid bytes
        escaped), no validity as None."""
        d = dataclasses.asdict(self)
        d["name"] = _text(self.name)
        if d["validity"] is not None and math.isinf(d["validity"]):
            d["validity"] = None
        return d


def _text(name: Name) -> str:
    if isinstance(name, bytes):
        return name.decode("utf-8", "backslashreplace")
    return name


def _seconds(v: float | None) -> str:
    if v is None:
        return "-"
    if v < 0:
        return "no TTL"
    return f"{v:.3f}s"


def _hold_name(hold: str) -> str:
    return hold if hold in ("read", "write") else f"permit {hold}"


def render_json(inspections: Sequence[Inspection]) -> str:
    return json.dumps([i.as_dict() for i in inspections], indent=2)


def render_table(inspections: Sequence[Inspection]) -> str:
    """The inspections for people: one block per lock."""
    out: list[str] = []
    for ins in inspections:
        if out:
            out.append("")
        holds = ins.kind in ("read-write lock", "semaphore")
        head = f"{_text(ins.name)}: {ins.state}"
        if holds:
            head = f"{_text(ins.name)} ({ins.kind}): {ins.state}"
            n = len(ins.holds)
            head += f", {n} hold{'' if n == 1 else 's'} on a quorum"
        elif ins.held:
            valid = "no expiry" if ins.validity is None or math.isinf(ins.validity) \
                else f"valid {ins.validity:.3f}s at best"  # fmt: skip
            who = f" by {ins.token}" + (f" ({ins.owner})" if ins.owner else "")
            head += f"{who}, {valid}"
        head += (
            f"; {ins.holding} of {len(ins.masters)} masters hold it, "
            f"{ins.answered} answered (quorum {ins.quorum})"
        )
        if ins.fence is not None:
            head += f"; fence {ins.fence}"
        out.append(head)
        for h in ins.holds:
            label = f"  {h.owner}" if h.owner else ""
            out.append(
                f"  {_hold_name(h.hold)} {h.token}  valid {h.ttl:.3f}s at best"
                f"  on {h.holding} of {len(ins.masters)}{label}"
            )
        rows = [("MASTER", "KEY", "TTL", "FENCE", "OWNER", "QUEUED")]
        for m in ins.masters:
            if not m.ok:
                rows.append((m.master, "unreachable", "-", "-", m.error or "", "-"))
                continue
            key = m.token or "-"
            if m.kind in ("read-write lock", "semaphore"):
                key = f"{m.hold_count} hold{'' if m.hold_count == 1 else 's'}"
            rows.append(
                (
                    m.master,
                    key,
                    _seconds(m.ttl),
                    str(m.fence) if m.fence is not None else "-",
                    m.owner or "-",
                    str(m.queued),
                )
            )
        widths = [max(len(r[k]) for r in rows) for k in range(len(rows[0]) - 1)]
        for r in rows:
            cells = [c.ljust(w) for c, w in zip(r, widths)]
            out.append("  " + "  ".join([*cells, r[-1]]).rstrip())
        first = next((m for m in ins.masters if m.ok and m.waiters), None)
        if first is not None:
            out.append(f"  waiting (as {first.master} has them):")
            for n, w in enumerate(first.waiters, 1):
                state = f"lease {w.lease:.1f}s" if w.lease > 0 else "gone"
                label = f"  {w.owner}" if w.owner else ""
                out.append(
                    f"    {n}. {w.token}  queued {w.age:.1f}s ago  {state}{label}"
                )
            if first.queued > len(first.waiters):
                out.append(f"    ... and {first.queued - len(first.waiters)} more")
    return "\n".join(out)
