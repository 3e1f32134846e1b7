"""The Python bad-input table, part 3: calls in the wrong state, servers
that answer with errors, networks that fail (rows as described in
__init__.py; the ENV rows need tests/reliability/hrlrel/badenv.py)."""

from __future__ import annotations

import os

from . import ENV, OK


def acquire_on(x, var, name="bad:srv"):
    return x.client(x.env[var]).lock(name, ttl=5).acquire(timeout=0.2)


def held_then(x, action, name):
    lk = x.lock(name, ttl=5)
    assert lk.acquire(blocking=False)
    return action(lk)


def released_then(x, action):
    lk = x.lock("bad:rel", ttl=5)
    assert lk.acquire(blocking=False)
    lk.release()
    return action(lk)


def wrongtype_acquire(x):
    x.inspect().delete("bad:list")
    x.inspect().lpush("bad:list", "x")
    return x.lock("bad:list", ttl=5).acquire(blocking=False)


def wrongtype_release(x):
    x.inspect().delete("bad:list2")
    lk = x.lock("bad:list2", ttl=5)
    assert lk.acquire(blocking=False)
    r = x.inspect()
    r.delete("bad:list2")
    r.lpush("bad:list2", "x")
    return lk.release()


def after_fork(x):
    c = x.client()
    lk = c.lock("bad:fork", ttl=5)
    assert lk.acquire(blocking=False)
    lk.release()
    pid = os.fork()
    if pid == 0:  # the child: the inherited client opens its own connections
        code = 0
        try:
            lk2 = c.lock("bad:fork", ttl=5)
            code = 0 if lk2.acquire(blocking=False) else 1
            lk2.release()
        except BaseException:
            code = 2
        os._exit(code)
    _, status = os.waitpid(pid, 0)
    return f"child acquired and released: {os.waitstatus_to_exitcode(status) == 0}"


def held_after_fork(x):
    lk = x.lock("bad:fork2", ttl=5)
    assert lk.acquire(blocking=False)
    pid = os.fork()
    if pid == 0:
        try:
            lk.release()  # the child releases the lock it inherited
            os._exit(0)
        except BaseException:
            os._exit(1)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    return lk.release()  # ... so the parent's release finds it gone


ROWS: list[tuple] = [
    ("state", "release() without acquire", lambda x: x.lock().release(), "NotOwned",
     "not held", OK),
    ("state", "release() twice", lambda x: released_then(x, lambda lk: lk.release()),
     "NotOwned", "not held", OK),
    ("state", "extend() after release",
     lambda x: released_then(x, lambda lk: lk.extend()), "NotOwned", "not held", OK),
    ("state", "acquire(blocking=False) on a held object",
     lambda x: held_then(
         x, lambda lk: (lk.acquire(blocking=False), lk.release())[0], "bad:h"),
     "returns", "False", OK),
    ("state", "calls in a fork() child (inherited client)", after_fork, "returns",
     "child acquired and released: True", OK),
    ("state", "release after the fork() child released it", held_after_fork,
     "NotOwned", "not owned", OK),
    ("server", "OOM (maxmemory 1)", lambda x: acquire_on(x, "HRL_BAD_OOM"),
     "LockError", "server error: 0 of 1 masters answered (1 needed)", ENV),
    ("server", "READONLY (a replica)", lambda x: acquire_on(x, "HRL_BAD_RO"),
     "LockError", "READONLY", ENV),
    ("server", "BUSY (a script runs)", lambda x: acquire_on(x, "HRL_BAD_BUSY"),
     "LockError", "BUSY", ENV),
    ("server", "LOADING (scripted reply)", lambda x: acquire_on(x, "HRL_BAD_LOADING"),
     "LockError", "LOADING", ENV),
    ("server", "NOAUTH (no password given)",
     lambda x: acquire_on(x, "HRL_BAD_NOAUTH"), "ConnectionError",
     "authentication failed", ENV),
    ("server", "WRONGPASS", lambda x: acquire_on(x, "HRL_BAD_WRONGPASS"),
     "ConnectionError", "WRONGPASS", ENV),
    ("server", "WRONGTYPE: the name holds a list (acquire)", wrongtype_acquire,
     "returns", "False", OK),
    ("server", "WRONGTYPE: the key became a list (release)", wrongtype_release,
     "NotOwned", "not owned", OK),
    ("network", "connection refused", lambda x: acquire_on(x, "HRL_BAD_REFUSED"),
     "ConnectionError", "connection refused", ENV),
    ("network", "connection reset", lambda x: acquire_on(x, "HRL_BAD_RESET"),
     "ConnectionError", "reset", ENV),
    ("network", "unix socket that does not exist",
     lambda x: acquire_on(x, "HRL_BAD_MISSING_SOCK"), "ConnectionError",
     "no such file or directory", ENV),
]  # fmt: skip
