"""A racer of case 6 (Python): waits for "go" on the data server, then
races the others for the lock.

  python3 racer.py ID URLS DATA_SOCKET LOCK

Messages on go:ID: "A ROUND AT" one attempt, hold until told to release (on
rel:ID); "B ROUND AT" keep trying up to 10 s, hold 20 ms, release; "quit".
Each outcome goes to res:ROUND as "ID won|lost T0 T1 TOKEN|ERR"
(CLOCK_MONOTONIC ns). AT: the monotonic ns at which all start.
"""

import select
import sys
import time

import redis

import hiredlock


def main() -> None:
    wid, urls, data_sock, name = (
        sys.argv[1],
        sys.argv[2].split(","),
        sys.argv[3],
        sys.argv[4],
    )
    data = redis.Redis(unix_socket_path=data_sock, socket_timeout=60)
    client = hiredlock.Client(
        urls, timeout=0.5, connect_timeout=1.0, retry_delay=0.05, retry_jitter=0.04
    )
    data.rpush("ready", wid)
    while True:
        _, msg = data.blpop(f"go:{wid}", 0)
        phase, _, rest = msg.decode().partition(" ")
        if phase == "quit":
            return
        rnd, _, at = rest.partition(" ")
        at = int(at)  # everyone starts at this monotonic instant
        left = (at - time.monotonic_ns()) / 1e9 - 0.002
        if left > 0:
            select.select([], [], [], left)
        while time.monotonic_ns() < at:
            pass
        lk = client.lock(name, ttl=5)
        t0 = time.monotonic_ns()
        try:
            won = lk.acquire(blocking=False) if phase == "A" else lk.acquire(timeout=10)
            err = "timeout"
        except hiredlock.LockError as e:
            won, err = False, str(e).split(":")[0]
        t1 = time.monotonic_ns()
        what = f"won {t0} {t1} {lk.token}" if won else f"lost {t0} {t1} {err}"
        if won and phase == "B":
            select.select([], [], [], 0.02)
            lk.release()
        data.rpush(f"res:{rnd}", f"{wid} {what}")
        if won and phase == "A":
            data.blpop(f"rel:{wid}", 0)
            lk.release()
            data.rpush(f"relres:{rnd}", "ok")


if __name__ == "__main__":
    main()
