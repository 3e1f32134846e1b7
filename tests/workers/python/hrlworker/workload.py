"""workload: the reliability workload loop. Loops "acquire; read the
shared counter and set (on the data server, never faulted); sleep 0-20 ms
(+ hold); write them back plus one element; [extend;] release" until its
time is up, logging every step as one JSON line with CLOCK_MONOTONIC
nanoseconds (time.monotonic_ns, the clock the core and the Lua worker read
too). Answers {"done": true} at the end.

    workload id=ID lock=NAME ttl=S wait=S duration=S hold_ms=MS extend_p=P
             seed=N log=PATH start_at=NS data=SOCKET [fenced=1]
             [client options]

The "set" is one string value of "element," items so that its write-back
is a real read-modify-write: an overlap loses elements, as it loses
increments of the counter.

mode=read|write|permit [permits=N] takes holds of the read-write lock or
semaphore NAME instead of its mutex (reliability case 10): no data is
read or written (readers and permits share the name by design), a "read"
event marks the hold's critical section, and acquire events say the mode
("m"); the case checks the windows' kinds and counts.

fenced=1 takes fenced locks and checks the fence at the data server: the
read (MGET) and the write-back (MSET) each go through
hiredlock.fenced_write with the hold's fence, so a holder whose lock was
taken since (a newer fence was seen, at a read or a write) is refused;
that is logged as a "refused" event, and the worker moves on to its
release.
"""

from __future__ import annotations

import json
import os
import random
import select
import time

from .wire import CLIENT_OPTIONS, seconds


def pause(secs: float) -> None:
    """time.sleep without clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME),
    which libfaketime 0.9.10 breaks (EINVAL) when it leaves the monotonic
    clock alone, as reliability case 8 has it do."""
    select.select([], [], [], secs)


def workload(urls: list[str], opts: dict[str, str]) -> dict:
    import redis

    import hiredlock

    rnd = random.Random(int(opts["seed"]))
    wid = opts["id"]
    ttl, wait = float(opts["ttl"]), float(opts["wait"])
    hold_ms, extend_p = float(opts["hold_ms"]), float(opts["extend_p"])
    log = open(opts["log"], "a", buffering=1)  # noqa: SIM115 (for the loop's life)

    def emit(ev: dict) -> None:
        ev["w"] = wid
        log.write(json.dumps(ev, separators=(",", ":")) + "\n")

    data = redis.Redis(unix_socket_path=opts["data"], socket_timeout=30)
    fenced = opts.get("fenced") == "1"
    client = hiredlock.Client(urls, **seconds(opts, *CLIENT_OPTIONS))

    mode = opts.get("mode", "lock")
    permits = int(opts["permits"]) if "permits" in opts else None

    def new_lock() -> hiredlock.Lock:
        if mode != "lock":
            return hiredlock.Lock(
                client, opts["lock"], ttl, fenced=fenced, mode=mode, permits=permits
            )
        return client.lock(opts["lock"], ttl=ttl, fenced=fenced)

    lk = new_lock()

    def run(*command: str | bytes | int) -> object:
        """A command on the data server, fenced when the lock is."""
        if not fenced:
            return data.execute_command(*command)
        return hiredlock.fenced_write(data, "fence", lk.fence, *command)

    def critical_section(elem: str) -> None:
        """Read the counter and set, sleep, write them back plus elem."""
        value, blob = run("MGET", "counter", "set")
        counter, blob = int(value or 0), blob or b""
        emit({"ev": "read", "t": time.monotonic_ns(), "c": counter})
        pause(rnd.uniform(0, 0.02) + hold_ms / 1000)
        t0 = time.monotonic_ns()
        run("MSET", "counter", counter + 1, "set", blob + elem.encode() + b",")
        emit(
            {
                "ev": "write",
                "t0": t0,
                "t1": time.monotonic_ns(),
                "c": counter + 1,
                "e": elem,
            }
        )

    emit(
        {
            "ev": "start",
            "rt": "python",
            "pid": os.getpid(),
            "t": time.monotonic_ns(),
            "wall": time.time(),
        }
    )
    while time.monotonic_ns() < int(opts["start_at"]):
        pause(0.001)
    end = time.monotonic_ns() + int(float(opts["duration"]) * 1e9)
    seq = 0
    while time.monotonic_ns() < end:
        t0 = time.monotonic_ns()
        wall = time.time()
        err = None
        try:
            ok = lk.acquire(timeout=wait)
            if not ok:
                err = "timeout"
        except hiredlock.LockError as e:
            ok, err = False, str(e)
        t1 = time.monotonic_ns()
        ev = {"ev": "acq", "t0": t0, "t1": t1, "ok": ok, "err": err, "wall": wall}
        if mode != "lock":
            ev["m"] = mode
        if ok:
            v = lk.validity
            tv = time.monotonic_ns()
            # validity is whole ms, rounded down: vu is an upper bound.
            ev.update(tok=lk.token, vu=tv + int(v * 1e9) + 1_000_000)
            if fenced:
                ev["f"] = lk.fence
        emit(ev)
        if not ok:
            if err != "timeout":
                pause(0.01)  # no quorum: do not spin
            continue
        seq += 1
        elem = f"{wid}:{seq}"
        try:
            if mode != "lock":
                # A hold: its critical section is the sleep alone.
                emit({"ev": "read", "t": time.monotonic_ns(), "c": 0})
                pause(rnd.uniform(0, 0.02) + hold_ms / 1000)
            else:
                critical_section(elem)
        except hiredlock.StaleFence as e:
            emit({"ev": "refused", "t": time.monotonic_ns(), "err": str(e)})
        if rnd.random() < extend_p:
            t0 = time.monotonic_ns()
            try:
                lk.extend()
                ev = {"ev": "ext", "ok": True, "err": None}
                v = lk.validity
                ev["vu"] = time.monotonic_ns() + int(v * 1e9) + 1_000_000
            except hiredlock.LockError as e:
                ev = {"ev": "ext", "ok": False, "err": str(e)}
            ev.update(t0=t0, t1=time.monotonic_ns())
            emit(ev)
        t0 = time.monotonic_ns()
        try:
            lk.release()
            ok, err = True, None
        except hiredlock.LockError as e:
            ok, err = False, str(e)
        emit({"ev": "rel", "t0": t0, "t1": time.monotonic_ns(), "ok": ok, "err": err})
        if not ok:
            # A transport failure keeps it held locally (it expires with
            # its TTL): the next cycle uses a new Lock object.
            lk = new_lock()
    emit({"ev": "end", "t": time.monotonic_ns()})
    log.close()
    return {"done": True, "acquired": seq}
