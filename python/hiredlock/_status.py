"""``hiredlock status NAME [NAME...] [--json]``: who holds the locks and who
waits for them (docs/OPERATING.md). A read-only inspection of each name on
every master (``Client.inspect``): nothing is written, no lock is taken.
"""

from __future__ import annotations

import argparse
import sys

from ._core import LockError
from ._inspect import Inspection, render_json, render_table

EXIT_HELD = 0
EXIT_FREE = 1
EXIT_UNAVAILABLE = 69  # sysexits EX_UNAVAILABLE: too few masters answered
EXIT_USAGE = 2

EPILOG = f"""\
exit status (the worst of the names'):
  {EXIT_HELD:<5} every lock is held
  {EXIT_FREE:<5} a lock is free
  {EXIT_UNAVAILABLE:<5} too few masters answered to tell whether a lock is held
  {EXIT_USAGE:<5} bad usage

The table shows, for each lock, the quorum's view (held by which token and
owner label, for how long at best) and what each master has: the token's
first 8 characters, its TTL, the fence counter, the owner label, how many
wait; then the waiters in line (as the first master that has any lists
them): when each queued, how long its place lasts without a new try, its
label. --json prints the same as a list of objects, one per name."""


def add_parser(commands: argparse._SubParsersAction, masters_help: str) -> None:
    status = commands.add_parser(
        "status",
        usage="hiredlock status [options] NAME [NAME...]",
        help="who holds a lock and who waits for it (read only)",
        description=__doc__.split("\n\n")[0].replace("``", ""),
        epilog=EPILOG + "\n\n" + masters_help,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    status.add_argument("-u", "--url", action="append", default=[], metavar="URL",
                        help="a master's URL; repeat (or separate with commas) "
                             "for N masters (visible in the process list: see "
                             "--url-file)")  # fmt: skip
    status.add_argument("--url-file", action="append", default=[], metavar="FILE",
                        help="read the masters' URLs from FILE, one or more a "
                             "line, keeping their passwords out of the "
                             "process list")  # fmt: skip
    status.add_argument("--json", action="store_true",
                        help="print JSON instead of a table")  # fmt: skip
    status.add_argument("names", nargs="+", metavar="NAME", help="a lock's name")


def exit_status(inspections: list[Inspection]) -> int:
    if any(i.state == "unknown" for i in inspections):
        return EXIT_UNAVAILABLE
    if any(i.state == "free" for i in inspections):
        return EXIT_FREE
    return EXIT_HELD


def run(args: argparse.Namespace, client_of: object) -> int:
    try:
        client = client_of(args)  # type: ignore[operator]
        inspections = [client.inspect(name) for name in args.names]
    except (ValueError, TypeError) as err:
        print(f"hiredlock: {err}", file=sys.stderr)
        return EXIT_USAGE
    except LockError as err:  # pragma: no cover: inspect reports, not raises
        print(f"hiredlock: {err}", file=sys.stderr)
        return EXIT_UNAVAILABLE
    if args.json:
        print(render_json(inspections))
    else:
        print(render_table(inspections))
    return exit_status(inspections)
