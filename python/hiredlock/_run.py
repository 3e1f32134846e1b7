"""``hiredlock run``: the cluster-wide flock(1), for cron jobs and scripts.

Takes the lock (an auto-renewed lease), runs the command, renews the lock
while it runs, releases it when the command exits, and exits with the
command's status. Installed as the ``hiredlock`` console script and run by
``python -m hiredlock``.
"""

from __future__ import annotations

import argparse
import logging
import os
import signal
import sys
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager

from . import _status
from ._client import DEFAULT_TTL, Client
from ._core import LockError, LockLost, __version__
from ._default import split_urls, urls_from_env
from ._guard import Guarded
from ._lock import Lock

EXIT_BUSY = 1  # flock's, and -E changes it
EXIT_USAGE = 2
EXIT_UNAVAILABLE = 69  # sysexits EX_UNAVAILABLE: no quorum of masters
EXIT_LOST = 75  # sysexits EX_TEMPFAIL: the hold was lost; try again
EXIT_CANNOT_EXECUTE = 126
EXIT_NOT_FOUND = 127
KILL_AFTER = 10.0

# Passed on to the command; SIGKILL and SIGSTOP cannot be caught. Before
# the command starts (waiting for the lock, -w), they end hiredlock instead,
# after the acquire left the lock's queue (exit 128+N).
FORWARDED = (
    signal.SIGINT,
    signal.SIGTERM,
    signal.SIGHUP,
    signal.SIGQUIT,
    signal.SIGUSR1,
    signal.SIGUSR2,
)

DESCRIPTION = """\
Run COMMAND while holding the lock NAME on the Redis masters: the
cluster-wide flock(1) for cron jobs and shell scripts. The lock is an
auto-renewed lease: renewed about every third of its TTL while COMMAND
runs, released when COMMAND exits. A crashed hiredlock leaves it to expire
after one TTL."""

MASTERS = """\
masters:
  --url may be given once per master (or as a comma-separated list; a URL
  listing several addresses, redis+cluster://a,b,c or
  redis+sentinel://s1,s2/service, is one master); the default is
  $HIREDLOCK_URLS (the same list), else $HIREDLOCK_URL, else
  redis://127.0.0.1:6379, as for hiredlock.default_client(). URLs are
  redis://[[user]:password@]host[:port][/db] or
  unix://[[user]:password@]/path[?db=N] (docs/DEPLOYMENTS.md has the rest).
  Every user of the machine can read --url in the process list (ps,
  /proc/PID/cmdline): give URLs with a password in $HIREDLOCK_URLS or in a
  file only you can read (--url-file FILE: one or more URLs a line, # for
  comments) instead."""

EPILOG = f"""\
{MASTERS}

when the lock is lost while COMMAND runs:
  (a renewal found it taken, no quorum of masters renewed it before its
  validity ran out, or --max-hold passed) COMMAND's process group gets
  SIGTERM, then SIGKILL after --kill-after seconds if COMMAND is still
  running (and what it left running once it exits), and hiredlock exits with
  --lost-exit-code whatever COMMAND's own status.

signals:
  COMMAND runs in a session of its own (setsid: no controlling terminal), so
  that a loss stops all of it, children included. SIGINT, SIGTERM, SIGHUP,
  SIGQUIT, SIGUSR1 and SIGUSR2 sent to hiredlock (a Ctrl-C at its terminal)
  are passed on to COMMAND's process group; hiredlock goes on waiting for
  COMMAND to exit and releases the lock then. Before COMMAND starts (while
  -w waits), they end hiredlock, with 128+N, leaving nothing in the lock's
  queue. Ctrl-Z (SIGTSTP) stops COMMAND's group and hiredlock, SIGCONT
  (fg, bg) resumes both; the lock is not renewed while hiredlock is
  stopped, and when it expired meanwhile COMMAND gets SIGTERM before it
  runs on, as on any loss.

  COMMAND dies with hiredlock: killed by SIGKILL (the OOM killer, timeout
  -s KILL), hiredlock takes COMMAND's process group with it (its first
  process by the kernel's parent-death signal, the rest by a watcher
  process), so no second run can start beside it once the lock expires. A
  process that leaves COMMAND's process group (setsid) is not covered;
  neither is hiredlock stopped by SIGSTOP (it cannot be caught: COMMAND
  runs on unrenewed, and gets SIGTERM once hiredlock resumes and finds the
  lock lost).

flock(1)'s options:
  -n/--nonblock fails at once when the lock is busy (the default; -w waits),
  -w -1 waits until it is free, -c CMD runs CMD through sh -c, -E and -v as
  flock's. -v also says how long the lock took, and when a renewal failed
  (the lock still valid) or the lock was lost.

exit status:
  COMMAND's status, or 128+N when a signal N ended it
  {EXIT_BUSY:<5} the lock was busy for the whole wait (--conflict-exit-code)
  {EXIT_USAGE:<5} bad usage
  {EXIT_UNAVAILABLE:<5} the masters could not be reached (no quorum), or refused
  {EXIT_LOST:<5} the lock was lost while COMMAND ran (--lost-exit-code)
  {EXIT_CANNOT_EXECUTE:<5} COMMAND could not be executed
  {EXIT_NOT_FOUND:<5} COMMAND was not found

at most N copies:
  --permits N takes a permit of the semaphore NAME instead of its lock: at
  most N commands run at once under NAME, each on a permit of its own (an
  auto-renewed lease like the lock; a crashed hiredlock's permit expires
  after one TTL). Every run of NAME should give the same N.

fencing:
  --fence-env VAR takes a fenced lock and puts its fencing token (a decimal
  integer, greater than that of every earlier grant of NAME) in COMMAND's
  environment as $VAR, for the resource that COMMAND writes to to check (see
  hiredlock.fenced_write and docs/SAFETY.md)."""


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}") from None
    if value != value or value in (float("inf"), float("-inf")):
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}")
    return value


def _exit_code(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an exit status: {text!r}") from None
    if not 0 <= value <= 255:
        raise argparse.ArgumentTypeError(f"exit status must be 0..255, got {value}")
    return value


def _permits(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="hiredlock",
        description="Distributed locks on Redis (Redlock) from the shell.",
    )
    version = f"hiredlock {__version__}"
    parser.add_argument("--version", action="version", version=version)
    commands = parser.add_subparsers(dest="subcommand", metavar="COMMAND")
    commands.required = True
    run = commands.add_parser(
        "run",
        usage="hiredlock run [options] NAME -- COMMAND [ARGS...]",
        help="run a command while holding a lock (a cluster-wide flock)",
        description=DESCRIPTION,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add = run.add_argument
    add("--version", action="version", version=version)
    add("-w", "--wait", "--timeout", type=_seconds, default=0.0, metavar="SECONDS",
        help="how long to wait for the lock when it is busy (default 0: fail at "
             "once; -1: until it is free)")  # fmt: skip
    add("-n", "--nonblock", "--no-wait", action="store_true",
        help="fail at once when the lock is busy (as -w 0)")  # fmt: skip
    add("-c", "--command", dest="shell_command", metavar="CMD",
        help="run CMD through sh -c instead of COMMAND")  # fmt: skip
    add("-E", "--conflict-exit-code", type=_exit_code, default=EXIT_BUSY,
        metavar="N",
        help=f"exit status when the lock is busy (default {EXIT_BUSY})")  # fmt: skip
    add("-t", "--ttl", type=_seconds, default=DEFAULT_TTL, metavar="SECONDS",
        help=f"the lock's TTL (default {DEFAULT_TTL:g}): renewed every third of "
             "it, and how long it outlives a crashed hiredlock")  # fmt: skip
    add("--max-hold", type=_seconds, default=0.0, metavar="SECONDS",
        help="hold the lock at most this long: then it is lost and COMMAND is "
             "stopped as on any loss (default 0: no cap)")  # fmt: skip
    add("-u", "--url", action="append", default=[], metavar="URL",
        help="a master's URL; repeat (or separate with commas) for N "
             "masters (visible in the process list: see --url-file)")  # fmt: skip
    add("--url-file", action="append", default=[], metavar="FILE",
        help="read the masters' URLs from FILE, one or more a line, keeping "
             "their passwords out of the process list")  # fmt: skip
    add("-k", "--kill-after", type=_seconds, default=KILL_AFTER, metavar="SECONDS",
        help="after a loss, SIGKILL COMMAND this long after SIGTERM (default "
             f"{KILL_AFTER:g})")  # fmt: skip
    add("--lost-exit-code", type=_exit_code, default=EXIT_LOST, metavar="N",
        help=f"exit status when the lock was lost (default {EXIT_LOST})")  # fmt: skip
    add("--permits", type=_permits, metavar="N",
        help="run while holding one of N permits of the semaphore NAME (at "
             "most N copies at once), not its lock")  # fmt: skip
    add("--fence-env", metavar="VAR",
        help="take a fenced lock and pass its fencing token to COMMAND as "
             "$VAR")  # fmt: skip
    add("--owner", metavar="LABEL",
        help="write an owner label beside the lock, shown by hiredlock status "
             "(%%h: this host, %%p: hiredlock's pid; e.g. --owner "
             "'reindex@%%h:%%p')")  # fmt: skip
    add("-v", "--verbose", action="store_true",
        help="say on stderr how long the lock took, when it is busy, taken, "
             "renewed late, lost and released")  # fmt: skip
    add("name", metavar="NAME", help="the lock's name")
    add("command", nargs=argparse.REMAINDER, metavar="-- COMMAND [ARGS...]",
        help="the command to run and its arguments")  # fmt: skip
    _status.add_parser(commands, MASTERS)
    return parser


def _urls_in_file(path: str) -> list[str]:
    """The URLs of a --url-file: one or more a line (as --url), blank lines
    and lines beginning with # left out."""
    with open(path, encoding="utf-8") as f:
        lines = [line.strip() for line in f]
    return [
        url for line in lines if line and not line.startswith("#")
        for url in split_urls(line)
    ]  # fmt: skip


def _say(text: str) -> None:
    print(f"hiredlock: {text}", file=sys.stderr, flush=True)


def _status_of(returncode: int) -> int:
    """A shell's view of how the command ended: 128+N for signal N."""
    return 128 - returncode if returncode < 0 else returncode


class _Interrupted(BaseException):
    """A signal ended hiredlock before the command started (raised by the
    handler, so that a waiting acquire stops and leaves the queue)."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


@contextmanager
def _handlers(handler: object, signals: Sequence[int]) -> Iterator[None]:
    """Installs handler for signals, restoring the previous ones after."""
    previous = {sig: signal.signal(sig, handler) for sig in signals}
    try:
        yield
    finally:
        for sig, old in previous.items():
            signal.signal(sig, old)


class _Runner:
    """One run: the lease, the command's process, and what happened."""

    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.mu = threading.Lock()
        self.guarded: Guarded | None = None
        self.lock: Lock | None = None
        self.lost_reason: str | None = None
        self.killer: threading.Timer | None = None
        # Signals that came while the command was being started: passed on
        # once it has a process group.
        self.starting = False
        self.pending: list[int] = []

    def on_signal(self, signum: int, frame: object) -> None:
        """SIGTERM and co. (installed before the acquire, as long as the
        command runs): before the command starts, they end hiredlock
        (raised where the acquire waits, which then leaves the queue);
        afterwards they are passed on to the command. Never takes a lock:
        it runs on the main thread, between any two of its instructions."""
        guarded = self.guarded
        if guarded is not None:
            guarded.signal(signum)
        elif self.starting:
            self.pending.append(signum)
        else:
            raise _Interrupted(signum)

    def on_lost(self, lock: Lock) -> None:
        """The lease was lost (the on_lost thread, or the main thread when
        it found the lock expired on resuming): stop the command, once."""
        try:
            lock.check()
            reason = "lost"
        except LockLost as err:
            reason = str(err)
        with self.mu:
            if self.lost_reason is not None:
                return  # told already
            self.lost_reason = reason
            guarded = self.guarded
        if guarded is None:
            return  # the command never starts
        _say(f"lock {self.args.name!r} {reason}: stopping the command (SIGTERM)")
        guarded.signal(signal.SIGTERM)
        self.killer = threading.Timer(self.args.kill_after, self._kill, (guarded,))
        self.killer.daemon = True
        self.killer.start()

    def _kill(self, guarded: Guarded) -> None:
        if guarded.proc.poll() is None:
            _say(
                f"the command outlived --kill-after {self.args.kill_after:g} s: SIGKILL"
            )
            guarded.signal(signal.SIGKILL)

    def start(
        self, lock: Lock, command: list[str], env: dict[str, str] | None
    ) -> int | None:
        """Starts the command unless the lease was lost already; an exit
        status when it cannot run."""
        with self.mu:
            self.lock = lock
            if self.lost_reason is not None:
                _say(f"lock {self.args.name!r} {self.lost_reason} before the "
                     "command started")  # fmt: skip
                return self.args.lost_exit_code
            self.starting = True
            try:
                self.guarded = Guarded(command, env)
            except FileNotFoundError:
                _say(f"{command[0]}: command not found")
                return EXIT_NOT_FOUND
            except OSError as err:
                _say(f"{command[0]}: {err.strerror}")
                return EXIT_CANNOT_EXECUTE
            finally:
                self.starting = False
        for signum in self.pending:
            self.guarded.signal(signum)
        return None

    def _stop(self, signum: int, frame: object) -> None:
        """Ctrl-Z: stops the command's group (SIGSTOP: a group without a
        terminal ignores SIGTSTP) and hiredlock, as a job stops."""
        assert self.guarded is not None
        self.guarded.signal(signal.SIGSTOP)
        os.kill(os.getpid(), signal.SIGSTOP)  # returns once continued
        self._resume(signal.SIGCONT, frame)

    def _resume(self, signum: int, frame: object) -> None:
        """SIGCONT: the command goes on, unless the lock expired while we
        were stopped (no renewal ran): then it gets SIGTERM first, before
        it can run a moment unprotected."""
        assert self.guarded is not None and self.lock is not None
        if not self.lock.locked():
            self.on_lost(self.lock)
        self.guarded.signal(signal.SIGCONT)

    def wait(self) -> int:
        """Waits for the command (on_signal passes signals on to it)."""
        guarded = self.guarded
        assert guarded is not None
        proc = guarded.proc
        try:
            with (
                _handlers(self._stop, (signal.SIGTSTP,)),
                _handlers(self._resume, (signal.SIGCONT,)),
            ):
                while True:
                    try:
                        status = _status_of(proc.wait())
                        break
                    except KeyboardInterrupt:  # a handler replaced ours: go on
                        continue
            with self.mu:
                lost = self.lost_reason is not None
            if lost:
                # What the command left behind runs unprotected: stop it too.
                guarded.signal(signal.SIGKILL)
        finally:
            if self.killer is not None:
                self.killer.cancel()
            guarded.release()
        return status


class _Narrator(logging.Handler):
    """-v: the events of the lock (a renewal that failed while it was still
    valid, a loss, masters going and coming) on stderr, as they come."""

    def __init__(self, name: str) -> None:
        super().__init__(logging.INFO)
        self.name_bytes = name.encode() if isinstance(name, str) else name

    def emit(self, record: logging.LogRecord) -> None:
        event = getattr(record, "hiredlock_event", None)
        if event is None or event["name"] not in (None, self.name_bytes):
            return
        if event["kind"] == "lost":
            return  # said when the command is stopped
        _say(event["message"])


def _command_of(args: argparse.Namespace, parser: argparse.ArgumentParser) -> list[str]:
    command = list(args.command)
    if command and command[0] == "--":
        command = command[1:]
    if args.shell_command is not None:
        if command:
            parser.error("-c CMD and a COMMAND after NAME: give one of them")
        return ["/bin/sh", "-c", args.shell_command]
    if not command:
        parser.error("a COMMAND to run is needed after NAME (NAME -- COMMAND ...)")
    return command


def run(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    command = _command_of(args, parser)
    if args.wait < 0 and args.wait != -1:
        parser.error(f"-w: a wait is >= 0 seconds, or -1 (forever); got {args.wait:g}")
    if args.nonblock:
        if args.wait != 0:
            parser.error("-n and -w: give one of them")
        args.wait = 0.0
    if args.fence_env is not None and (
        not args.fence_env or "=" in args.fence_env or "\0" in args.fence_env
    ):
        parser.error(f"--fence-env: {args.fence_env!r} is not a variable name")
    try:
        urls = _urls(args)
    except _UrlFileError as err:
        _say(str(err))
        return EXIT_USAGE
    runner = _Runner(args)
    # SIGINT stays Python's (KeyboardInterrupt) while the lock is taken;
    # the others are ours from before the acquire waits until the command
    # ended.
    caught = [sig for sig in FORWARDED if sig != signal.SIGINT]
    try:
        with _handlers(runner.on_signal, caught):
            return _run_locked(args, runner, urls, command)
    except _Interrupted as stop:
        return 128 + stop.signum


def _run_locked(
    args: argparse.Namespace, runner: _Runner, urls: list[str], command: list[str]
) -> int:
    """Takes the lock and runs the command under it; _Interrupted when a
    signal ends hiredlock before the command starts (the lock released)."""
    try:
        client = Client(urls or urls_from_env())
        settings = dict(
            auto_renew=True,
            max_hold=args.max_hold,
            on_lost=runner.on_lost,
            fenced=args.fence_env is not None,
            owner=args.owner,
        )
        if args.permits is None:
            lock = client.lock(args.name, args.ttl, **settings)
        else:
            sem = client.semaphore(args.name, args.permits, args.ttl, **settings)
            lock = sem.permit()
    except (ValueError, TypeError) as err:
        _say(str(err))
        return EXIT_USAGE
    if args.verbose:
        narrator = _Narrator(args.name)
        logging.getLogger("hiredlock").addHandler(narrator)
        if logging.getLogger("hiredlock").getEffectiveLevel() > logging.INFO:
            logging.getLogger("hiredlock").setLevel(logging.INFO)
    started = time.monotonic()
    try:
        if args.wait == 0:
            held = lock.acquire(blocking=False)
        else:
            held = lock.acquire(timeout=-1 if args.wait < 0 else args.wait)
    except _Interrupted:
        # The acquire stopped and left the queue; one that succeeded just
        # before the signal was seen gives the lock back.
        _release_quietly(lock)
        raise
    except ValueError as err:
        _say(str(err))
        return EXIT_USAGE
    except LockError as err:
        _say(f"lock {args.name!r}: {err}")
        return EXIT_UNAVAILABLE
    except KeyboardInterrupt:
        # Ctrl-C while waiting, or while the lock was being taken: acquire()
        # released what it took before raising. Nothing is held.
        return 128 + signal.SIGINT
    took = time.monotonic() - started
    if not held:
        if args.verbose:
            _say(f"lock {args.name!r} is busy (waited {took:.3f} s)")
        return args.conflict_exit_code
    if args.verbose:
        held_what = "" if lock.permit is None else f" permit {lock.permit}"
        _say(
            f"lock {args.name!r}{held_what} taken after {took:.3f} s"
            f" (token {lock.token})"
        )
    env = None
    if args.fence_env is not None:
        env = {**os.environ, args.fence_env: str(lock.fence)}
    # From here on Ctrl-C is ours too: passed on to the command once it
    # has a process group (Python's KeyboardInterrupt, raised inside the
    # command's start, left a half-started command and a held lock).
    with _handlers(runner.on_signal, (signal.SIGINT,)):
        return _start_and_wait(args, runner, lock, command, env)


def _start_and_wait(
    args: argparse.Namespace,
    runner: _Runner,
    lock: Lock,
    command: list[str],
    env: dict[str, str] | None,
) -> int:
    """Runs the command under the held lock, then releases it."""
    try:
        status = runner.start(lock, command, env)
    except _Interrupted:
        _release_quietly(lock)
        raise
    if status is None:
        status = runner.wait()
    if runner.lost_reason is not None:
        return args.lost_exit_code
    try:
        lock.release()
    except LockLost as err:
        _say(f"lock {args.name!r} {err} before the command ended")
        return args.lost_exit_code
    except LockError as err:
        # The command ran under the lock to its end; the keys expire alone.
        _say(f"releasing lock {args.name!r} failed: {err}")
    else:
        if args.verbose:
            _say(f"lock {args.name!r} released")
    return status


def _release_quietly(lock: Lock) -> None:
    if lock.locked():
        try:
            lock.release()
        except LockError as err:
            _say(f"releasing lock {lock.name!r} failed: {err}")


class _UrlFileError(ValueError):
    """A --url-file that cannot be read (the message names it)."""


def _urls(args: argparse.Namespace) -> list[str]:
    """The masters of --url (each one or a list) and --url-file options."""
    urls = [u for url in args.url for u in split_urls(url)]
    for path in args.url_file:
        try:
            urls += _urls_in_file(path)
        except OSError as err:
            raise _UrlFileError(f"--url-file {path}: {err.strerror or err}") from None
    return urls


def _client(args: argparse.Namespace) -> Client:
    """hiredlock status's client: --url's and --url-file's masters, else
    the environment's."""
    return Client(_urls(args) or urls_from_env())


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.subcommand == "status":
        return _status.run(args, _client)
    return run(args, parser)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
