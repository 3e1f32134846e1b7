"""No leaks: reference counts, Python memory, process memory and file
descriptors stay flat over many cycles, objects and failures."""

from __future__ import annotations

import gc
import os
import sys
import tracemalloc

import pytest
from pytest_redis import TOLERANT

import hiredlock


def rss_kib():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") // 1024


def open_fds():
    return len(os.listdir("/proc/self/fd"))


def test_100k_acquire_release_cycles_leak_nothing(servers1):
    c = hiredlock.Client(servers1.unix_urls[0], **TOLERANT)
    name = "leak:cycles"
    lk = c.lock(name)
    for _ in range(2000):  # warm up: connections, caches, freelists
        assert lk.acquire(blocking=False)
        lk.release()
    gc.collect()
    refs = (sys.getrefcount(lk), sys.getrefcount(c), sys.getrefcount(name))
    blocks = sys.getallocatedblocks()
    rss = rss_kib()
    tracemalloc.start()
    before = tracemalloc.take_snapshot()
    for _ in range(100_000):
        lk.acquire(blocking=False)
        lk.release()
        lk.locked()
        lk.validity  # noqa: B018 - the getters must not leak either
        lk.token  # noqa: B018
    after = tracemalloc.take_snapshot()
    tracemalloc.stop()
    gc.collect()
    assert (sys.getrefcount(lk), sys.getrefcount(c), sys.getrefcount(name)) == refs
    grown = sum(s.size_diff for s in after.compare_to(before, "filename"))
    assert grown < 64 * 1024
    assert sys.getallocatedblocks() - blocks < 200
    assert rss_kib() - rss < 1024
    assert servers1.count(name) == 0


def test_objects_and_failures_leak_nothing(servers1):
    url = servers1.urls[0]

    def churn():
        c = hiredlock.Client([url], key_prefix="p:", **TOLERANT)
        for i in range(20):
            lk = c.lock(f"leak:{i}", ttl=1, timeout=0.5)
            with lk:
                lk.extend(2)
            with pytest.raises(hiredlock.NotOwned):
                lk.release()
            with pytest.raises(ValueError):
                c.lock("")
            with pytest.raises(TypeError):
                c.lock(None)
            with pytest.raises(ValueError):
                lk.acquire(False, 1)
        dead = hiredlock.Client("redis://127.0.0.1:1")
        with pytest.raises(hiredlock.ConnectionError):
            dead.lock("x").acquire(blocking=False)

    for _ in range(20):
        churn()
    gc.collect()
    fds = open_fds()
    blocks = sys.getallocatedblocks()
    rss = rss_kib()
    for _ in range(200):
        churn()
    gc.collect()
    assert open_fds() == fds
    assert sys.getallocatedblocks() - blocks < 200
    assert rss_kib() - rss < 1024
