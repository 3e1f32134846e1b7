"""Fencing inside nginx: docs/LUA-API.md's example location takes a fenced
lock in the access phase, forwards the fence upstream in a Fencing-Token
header, and releases from a timer after the response; the upstream
(hrltest.docs_backend, the HTTP recipe of docs/SAFETY.md) refuses a
fence older than one it has seen. The counter is the one Python uses."""

from __future__ import annotations

import http.client
import time
import uuid
from concurrent.futures import ThreadPoolExecutor

from pytest_redis import TOLERANT

import hiredlock


def doc_path() -> str:
    return f"/docs/{uuid.uuid4().hex[:12]}"


def fence_in(body: str) -> int:
    verdict, fence = body.split(" ")
    assert verdict == "written", body
    return int(fence)


def backend(ngx, path: str, fence: str | None, body: str):
    """A request straight to the upstream, as a stale holder would send."""
    conn = http.client.HTTPConnection("127.0.0.1", ngx.backend_port, timeout=30)
    try:
        headers = {} if fence is None else {"Fencing-Token": fence}
        conn.request("GET", f"{path}?body={body}", headers=headers)
        resp = conn.getresponse()
        return resp.status, resp.read().decode()
    finally:
        conn.close()


def wait_released(servers3, key: str) -> None:
    deadline = time.monotonic() + 5
    while servers3.count(key) and time.monotonic() < deadline:
        time.sleep(0.01)
    assert servers3.count(key) == 0


def test_the_fence_goes_upstream_in_a_header(ngx, servers3):
    path = doc_path()
    fences = []
    for k in range(3):
        r = ngx.get(path, body=f"v{k}")
        assert r.status == 200, r.body
        fences.append(fence_in(r.body))
        wait_released(servers3, "doc:" + path)  # released by the timer
    assert fences == [1, 2, 3]
    store = servers3.redis(1)
    assert store.get(f"store:doc:{path}") == b"v2"
    assert store.get(f"store:doc:{path}:fence") == b"3"
    counter = f"doc:{path}{{doc:{path}}}:fence".encode()
    assert servers3.values(counter) == [b"3"] * 3


def test_the_upstream_refuses_an_older_fence(ngx, servers3):
    path = doc_path()
    first = fence_in(ngx.get(path, body="new").body)
    # The second request may come before the first's timer released the
    # lock: its attempts that found it held count too (fences may skip).
    second = fence_in(ngx.get(path, body="newer").body)
    assert first == 1 and second > first
    # A holder paused since it got the first fence wakes up and writes.
    status, body = backend(ngx, path, str(first), "stale")
    assert (status, body) == (
        409,
        f"STALEFENCE fence {first} is older than {second}",
    )
    assert backend(ngx, path, None, "x") == (400, "a Fencing-Token header is needed")
    assert servers3.redis(1).get(f"store:doc:{path}") == b"newer"


def test_concurrent_requests_take_distinct_fences(ngx, servers3):
    path = doc_path()

    def one(k: int) -> int:
        r = ngx.get(path, body=f"w{k}")
        assert r.status == 200, r.body
        return fence_in(r.body)

    with ThreadPoolExecutor(8) as pool:
        fences = list(pool.map(one, range(24)))
    # Distinct (contended attempts that failed part way raise the counters
    # too, so there may be gaps), and the store kept the greatest.
    assert len(set(fences)) == 24
    last = servers3.redis(1).get(f"store:doc:{path}:fence")
    assert last == str(max(fences)).encode()


def test_python_and_nginx_share_the_counter(ngx, servers3):
    path = doc_path()
    client = hiredlock.Client(servers3.urls, **TOLERANT)
    with client.lock(f"doc:{path}", fenced=True) as lk:
        assert lk.fence == 1
    assert fence_in(ngx.get(path, body="a").body) == 2
    wait_released(servers3, "doc:" + path)
    with client.lock(f"doc:{path}", fenced=True) as lk:
        assert lk.fence == 3
