"""A history of holds under faults, checked: permits of a semaphore and
reads and writes of a read-write lock taken by many threads (each with its
own client) on five masters while masters are paused in turn. Each hold
is a window from the moment acquire returned to the moment release began,
cut at the validity the library reported; at no instant may more windows
than permits be open, nor a write's beside any other. The negative
control keeps a holder past its validity (windows measured to its
release instead): the same check must report it."""

from __future__ import annotations

import contextlib
import random
import threading
import time

from pytest_redis import TOLERANT

import hiredlock


def most_at_once(windows: list[tuple[float, float, str]]) -> tuple[int, bool]:
    """The most windows open at one instant, and whether a write's window
    ever shared an instant with another window."""
    events = []
    for start, end, kind in windows:
        if end > start:
            events.append((start, 1, kind))
            events.append((end, -1, kind))
    events.sort(key=lambda e: (e[0], e[1]))  # an end before a start at a tie
    open_now: dict[str, int] = {"read": 0, "write": 0, "permit": 0}
    most, write_shared = 0, False
    for _, step, kind in events:
        open_now[kind] += step
        total = sum(open_now.values())
        most = max(most, total)
        if open_now["write"] and total > 1:
            write_shared = True
    return most, write_shared


def run_history(servers, name, make_hold, workers: int, seconds: float):
    """Threads acquire, hold a little and release make_hold(client, k)'s
    holds for `seconds` while one master after another is paused; the
    windows of the holds."""
    windows: list[tuple[float, float, str]] = []
    mu = threading.Lock()
    stop = time.monotonic() + seconds

    def work(k: int) -> None:
        client = hiredlock.Client(servers.urls, **TOLERANT)
        rnd = random.Random(k)
        while time.monotonic() < stop:
            hold = make_hold(client, k)
            try:
                if not hold.acquire(timeout=1):
                    continue
            except hiredlock.ConnectionError:
                continue
            start = time.monotonic()
            valid_until = start + hold.validity
            time.sleep(rnd.uniform(0, 0.03))
            end = min(time.monotonic(), valid_until)
            with mu:
                windows.append((start, end, hold.mode))
            # A failed release ends the hold all the same; its keys expire.
            with contextlib.suppress(hiredlock.LockError):
                hold.release()

    threads = [threading.Thread(target=work, args=(k,)) for k in range(workers)]
    for t in threads:
        t.start()
    node = 0
    while time.monotonic() < stop:
        node = node % servers.n + 1
        servers.pause(node)
        time.sleep(0.3)
        servers.resume(node)
        time.sleep(0.2)
    for t in threads:
        t.join(30)
    return windows


def test_permits_never_exceed_the_count_under_pauses(servers5, name):
    windows = run_history(
        servers5,
        name,
        lambda client, k: client.semaphore(name, 3, 2).permit(),
        workers=6,
        seconds=4,
    )
    most, _ = most_at_once(windows)
    assert len(windows) > 50  # the history is worth checking
    assert most <= 3, most


def test_a_write_is_never_beside_another_hold_under_pauses(servers5, name):
    def hold(client, k):
        rw = client.rwlock(name, 2)
        return rw.write() if k < 2 else rw.read()

    windows = run_history(servers5, name, hold, workers=6, seconds=4)
    most, write_shared = most_at_once(windows)
    assert sum(kind == "write" for _, _, kind in windows) > 5
    assert most > 1  # reads did share
    assert not write_shared


def test_the_check_catches_a_holder_kept_past_its_validity(servers5, name):
    """Negative control: a permit held past its TTL (a paused holder) is
    taken by others; counted until its release, it is a violation the
    check reports; counted to its validity, as the library reports it,
    there is none."""
    client = hiredlock.Client(servers5.urls, **TOLERANT)
    sem = client.semaphore(name, 1, 0.3)
    stale = sem.acquire(blocking=False)
    assert stale is not None
    start = time.monotonic()
    valid_until = start + stale.validity
    other = sem.acquire(timeout=5)  # granted once the stale TTL ran out
    assert other is not None
    other_start = time.monotonic()
    time.sleep(0.05)
    other_end = time.monotonic()
    other.release()
    stale_release = time.monotonic()  # the paused holder wakes up now
    kept = [(start, stale_release, "permit"), (other_start, other_end, "permit")]
    valid = [(start, valid_until, "permit"), (other_start, other_end, "permit")]
    assert most_at_once(kept)[0] == 2  # caught
    assert most_at_once(valid)[0] == 1
