"""How ``hiredlock run`` keeps COMMAND from outliving it (Linux).

COMMAND runs in a session of its own (its process group is its pid), so
that a loss stops all of it, a shell's children too. Nothing would tie that
group to hiredlock: killed by SIGKILL (the OOM killer, ``timeout -s KILL``),
hiredlock would leave COMMAND running while the lock expires, and a second
``hiredlock run`` of the same job would start beside it. Two things tie it:

- COMMAND's first process gets ``PR_SET_PDEATHSIG`` = SIGKILL: the kernel
  kills it when hiredlock dies (set before exec, and checked against a
  parent that died even before that).
- A watcher, ``sh`` in a session of its own that ignores every signal it
  can, reads a pipe hiredlock holds the only write end of. hiredlock writes
  ``done`` once it no longer needs COMMAND's group guarded (COMMAND ended);
  an end of file without it means hiredlock died, and the watcher kills
  COMMAND's whole process group with SIGKILL.

What escapes: a process of COMMAND's that leaves its process group
(``setsid``, ``setpgid``), and the watcher itself killed by SIGKILL at the
same time as hiredlock (then only COMMAND's first process dies, by the
kernel's parent-death signal).
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import subprocess

_PR_SET_PDEATHSIG = 1

# The watcher: $1 is COMMAND's process group.
_WATCHER = """\
trap '' HUP INT QUIT TERM TSTP TTIN TTOU USR1 USR2 PIPE
IFS= read -r word
[ "$word" = done ] || kill -s KILL -- "-$1" 2>/dev/null
"""


def _prctl():
    """libc's prctl, looked up before any fork (never in the child)."""
    try:
        return ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):  # not glibc/musl Linux
        return None


class Guarded:
    """COMMAND's process, started so that it dies with hiredlock."""

    def __init__(self, command: list[str], env: dict[str, str] | None) -> None:
        prctl = _prctl()
        parent = os.getpid()

        def die_with_parent() -> None:  # in the child, between fork and exec
            if prctl is not None:
                prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
            if os.getppid() != parent:  # hiredlock died before prctl
                os._exit(1)

        # A session of its own: a loss stops all of the command (a shell's
        # children too), and a terminal's Ctrl-C reaches it once, through us.
        self.proc = subprocess.Popen(
            command, start_new_session=True, env=env, preexec_fn=die_with_parent
        )
        self.pgid = self.proc.pid
        read_end, self._write_end = os.pipe()
        try:
            self._watcher = subprocess.Popen(
                ["sh", "-c", _WATCHER, "hiredlock-guard", str(self.pgid)],
                stdin=read_end,
                stdout=subprocess.DEVNULL,
                start_new_session=True,
            )
        except OSError:
            self._watcher = None  # no sh: the parent-death signal alone
        finally:
            os.close(read_end)

    def signal(self, signum: int) -> None:
        """Signals the command's process group while any of it is left (the
        group outlives its leader as long as one member runs)."""
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.pgid, signum)

    def release(self) -> None:
        """The group needs no guarding any more (the command ended): the
        watcher exits without killing anything."""
        if self._write_end < 0:
            return
        with contextlib.suppress(OSError):
            os.write(self._write_end, b"done\n")
        os.close(self._write_end)
        self._write_end = -1
        if self._watcher is not None:
            with contextlib.suppress(subprocess.TimeoutExpired):
                self._watcher.wait(5)
