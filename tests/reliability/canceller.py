"""Case 7, the Python side: "hold" keeps the lock busy (acquire, hold
150 ms, release); "cancel" loops on acquires that the harness interrupts
with SIGINT (KeyboardInterrupt) at random moments. Prints its counts as
one JSON line at the end.

  python3 canceller.py hold|cancel SECONDS LOCK URLS
"""

import json
import select
import sys
import time

import hiredlock


def main() -> None:
    mode, seconds, name, urls = (
        sys.argv[1],
        float(sys.argv[2]),
        sys.argv[3],
        sys.argv[4],
    )
    client = hiredlock.Client(
        urls.split(","),
        timeout=0.2,
        connect_timeout=0.5,
        retry_delay=0.02,
        retry_jitter=0.01,
    )
    counts = {
        "acquired": 0,
        "timeout": 0,
        "interrupted_in_acquire": 0,
        "interrupted_elsewhere": 0,
        "errors": 0,
    }
    end = time.monotonic() + seconds
    print("ready", flush=True)  # the harness interrupts only from now on
    while True:
        stage = "other"
        try:
            if time.monotonic() >= end:
                break
            lk = client.lock(name, ttl=2)
            stage = "acquire"
            ok = lk.acquire(timeout=5)
            stage = "other"
            if not ok:
                counts["timeout"] += 1
                continue
            counts["acquired"] += 1
            select.select([], [], [], 0.15 if mode == "hold" else 0.005)
            lk.release()
        except KeyboardInterrupt:
            key = (
                "interrupted_in_acquire"
                if stage == "acquire"
                else "interrupted_elsewhere"
            )
            counts[key] += 1
        except hiredlock.LockError:
            counts["errors"] += 1
    print(json.dumps(counts), flush=True)


if __name__ == "__main__":
    main()
