"""A Python workload worker: loops "acquire; read the shared counter and set
(on the data server, never faulted); sleep 0-20 ms (+ hold); write them back
plus one element; [extend;] release" until its time is up, logging every
step as one JSON line with CLOCK_MONOTONIC nanoseconds (time.monotonic_ns,
the clock the core and the Lua workers read too).

  python3 worker.py CONFIG_JSON

CONFIG: id, urls, data (unix socket of the data server), lock, ttl, wait,
timeout, connect_timeout, retry_delay, retry_jitter, duration, hold_ms,
extend_p, seed, log, start_at (monotonic ns to start at).
The "set" is one string value of "element," items so that its write-back
is a real read-modify-write: an overlap loses elements, as it loses
increments of the counter.
"""

import json
import os
import random
import select
import sys
import time

import redis

import hiredlock


def pause(seconds: float) -> None:
    """time.sleep without clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME),
    which libfaketime 0.9.10 breaks (EINVAL) when it leaves the monotonic
    clock alone, as case 8 has it do."""
    select.select([], [], [], seconds)


def main() -> None:
    cfg = json.loads(sys.argv[1])
    rnd = random.Random(cfg["seed"])
    wid = cfg["id"]
    log = open(cfg["log"], "a", buffering=1)  # noqa: SIM115 (for the process's life)

    def emit(ev: dict) -> None:
        ev["w"] = wid
        log.write(json.dumps(ev, separators=(",", ":")) + "\n")

    data = redis.Redis(unix_socket_path=cfg["data"], socket_timeout=30)
    client = hiredlock.Client(
        cfg["urls"],
        connect_timeout=cfg["connect_timeout"],
        timeout=cfg["timeout"],
        retry_delay=cfg["retry_delay"],
        retry_jitter=cfg["retry_jitter"],
    )
    lk = client.lock(cfg["lock"], ttl=cfg["ttl"])
    emit(
        {
            "ev": "start",
            "rt": "python",
            "pid": os.getpid(),
            "t": time.monotonic_ns(),
            "wall": time.time(),
        }
    )
    while time.monotonic_ns() < cfg["start_at"]:
        pause(0.001)
    end = time.monotonic_ns() + int(cfg["duration"] * 1e9)
    seq = 0
    while time.monotonic_ns() < end:
        t0 = time.monotonic_ns()
        wall = time.time()
        err = None
        try:
            ok = lk.acquire(timeout=cfg["wait"])
            if not ok:
                err = "timeout"
        except hiredlock.LockError as e:
            ok, err = False, str(e)
        t1 = time.monotonic_ns()
        ev = {"ev": "acq", "t0": t0, "t1": t1, "ok": ok, "err": err, "wall": wall}
        if ok:
            v = lk.validity
            tv = time.monotonic_ns()
            # validity is whole ms, rounded down: vu is an upper bound.
            ev.update(tok=lk.token, vu=tv + int(v * 1e9) + 1_000_000)
        emit(ev)
        if not ok:
            if err != "timeout":
                pause(0.01)  # no quorum: do not spin
            continue
        seq += 1
        elem = f"{wid}:{seq}"
        counter = int(data.get("counter") or 0)
        blob = data.get("set") or b""
        emit({"ev": "read", "t": time.monotonic_ns(), "c": counter})
        pause(rnd.uniform(0, 0.02) + cfg["hold_ms"] / 1000)
        t0 = time.monotonic_ns()
        pipe = data.pipeline(transaction=True)
        pipe.set("counter", counter + 1)
        pipe.set("set", blob + elem.encode() + b",")
        pipe.execute()
        emit(
            {
                "ev": "write",
                "t0": t0,
                "t1": time.monotonic_ns(),
                "c": counter + 1,
                "e": elem,
            }
        )
        if rnd.random() < cfg["extend_p"]:
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
            lk = client.lock(cfg["lock"], ttl=cfg["ttl"])
    emit({"ev": "end", "t": time.monotonic_ns()})


if __name__ == "__main__":
    main()
