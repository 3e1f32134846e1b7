"""Threads: one Client shared by many, and one Lock object shared by many
(threading.Lock's rules: held by the object, released by any thread)."""

from __future__ import annotations

import threading
import time

import pytest
from pytest_redis import TOLERANT

import hiredlock

fast_retries = {**TOLERANT, "retry_delay": 0.002, "retry_jitter": 0.002}


def run_threads(n, target):
    errors = []

    def guarded(i):
        try:
            target(i)
        except BaseException as err:  # reported by the test thread
            errors.append(err)

    threads = [threading.Thread(target=guarded, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert not any(t.is_alive() for t in threads)
    assert errors == []


def test_sixteen_threads_on_one_client_never_hold_at_once(servers, name):
    c = hiredlock.Client(servers.urls, **fast_retries)
    guard = threading.Lock()
    inside = []
    max_inside = [0]
    rounds = 20

    def worker(i):
        for _ in range(rounds):
            with c.lock(name, ttl=10, timeout=60):
                with guard:
                    inside.append(i)
                    max_inside[0] = max(max_inside[0], len(inside))
                time.sleep(0.0005)
                with guard:
                    inside.remove(i)

    run_threads(16, worker)
    assert max_inside[0] == 1
    assert servers.count(name) == 0


def test_threads_sharing_one_lock_object_take_turns(servers, name):
    c = hiredlock.Client(servers.urls, **fast_retries)
    lk = c.lock(name, ttl=10)
    counter = {"value": 0, "max": 0, "inside": 0}

    def worker(i):
        for _ in range(25):
            assert lk.acquire(timeout=60)
            try:
                counter["inside"] += 1
                counter["max"] = max(counter["max"], counter["inside"])
                value = counter["value"]
                time.sleep(0.0002)
                counter["value"] = value + 1
                counter["inside"] -= 1
            finally:
                lk.release()

    run_threads(4, worker)
    assert counter["value"] == 100 and counter["max"] == 1
    assert servers.count(name) == 0


def test_acquire_on_a_held_object_waits_like_threading_lock(client, name):
    lk = client.lock(name, ttl=10)
    assert lk.acquire()
    assert lk.acquire(blocking=False) is False
    start = time.monotonic()
    assert lk.acquire(timeout=0.2) is False
    assert 0.19 <= time.monotonic() - start < 0.6
    assert lk.locked()  # still the first hold
    # Another thread's release lets a waiting acquire in, with a new token.
    first_token = lk.token
    timer = threading.Timer(0.2, lk.release)
    timer.start()
    start = time.monotonic()
    assert lk.acquire(timeout=5)
    assert 0.19 <= time.monotonic() - start < 1.0
    assert lk.token != first_token
    timer.join()
    lk.release()


def test_acquire_on_a_held_object_gets_it_once_its_validity_runs_out(client, name):
    # 2 s, not 0.3 s: a TTL caps each master's reply deadline at a tenth of
    # it, and a loaded machine's Redis missed 30 ms.
    lk = client.lock(name, ttl=2)
    assert lk.acquire()
    start = time.monotonic()
    assert lk.acquire(timeout=5)  # the first hold expires: the lock is free
    assert 1.9 <= time.monotonic() - start < 3.2
    lk.release()


def test_release_from_another_thread_during_an_acquire_is_not_held(client, name):
    holder = client.lock(name, ttl=10)
    assert holder.acquire()
    lk = client.lock(name, ttl=10)
    results = []
    t = threading.Thread(target=lambda: results.append(lk.acquire(timeout=0.5)))
    t.start()
    time.sleep(0.1)
    with pytest.raises(hiredlock.NotOwned, match=r"^not held$"):
        lk.release()  # the other thread is acquiring: nothing is held yet
    assert not lk.locked() and lk.validity == 0.0
    t.join()
    assert results == [False]
    holder.release()


def test_network_waits_release_the_gil(client, name):
    holder = client.lock(name, ttl=10)
    assert holder.acquire()
    counted = []
    stop = threading.Event()

    def spin():
        n = 0
        while not stop.is_set():
            n += 1
        counted.append(n)

    t = threading.Thread(target=spin)
    t.start()
    try:
        assert client.lock(name).acquire(timeout=0.5) is False
    finally:
        stop.set()
        t.join()
    holder.release()
    assert counted[0] > 10000  # the other thread ran during the wait


def test_calls_without_a_wait_release_the_gil_when_other_threads_run(fresh5, name):
    # A process with one thread keeps the GIL through an attempt, a release
    # or an extend (nobody could take it; lock.c only_thread); with a
    # second thread it is released as always: here a paused master makes
    # each call last a per-master timeout, and the other thread must run
    # meanwhile.
    t = 0.3
    c = hiredlock.Client(fresh5.urls[0], connect_timeout=1.0, timeout=t)
    lk = c.lock(name, ttl=10)
    assert lk.acquire(blocking=False)  # connected before the pause
    box = [0]
    ran: list[int] = []
    stop = threading.Event()

    def spin():
        while not stop.is_set():
            box[0] += 1

    spinner = threading.Thread(target=spin)
    spinner.start()
    before = box[0]
    time.sleep(t)  # what the spinner does in t with the GIL free
    free = box[0] - before
    fresh5.pause(1)
    try:
        for call in (lk.extend, lk.release, lambda: lk.acquire(False)):
            before = box[0]
            start = time.monotonic()
            with pytest.raises(hiredlock.ConnectionError):
                call()
            assert time.monotonic() - start >= t - 0.01
            ran.append(box[0] - before)
    finally:
        fresh5.resume(1)
        stop.set()
        spinner.join()
    # Holding the GIL through a call lets the spinner run one switch
    # interval (5 ms) of the 0.3 s at most.
    assert min(ran) > free / 4, (free, ran)
