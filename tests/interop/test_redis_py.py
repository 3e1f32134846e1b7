"""hiredlock.redis_py (redis-py's Lock API over hiredlock) among the other
runtimes on one name: a redis_py.Lock or AsyncLock holding it excludes
hiredlock's Lock (sync and asyncio), C, plain Lua (LuaJIT, Lua 5.4) and
nginx (hiredlock's cosocket driver and hiredlock.resty.lock), and the
reverse; a release from any of them wakes its waiter. One master: a
redis-py client speaks to one server."""

from __future__ import annotations

import asyncio
import sys
import threading
import time

import pytest
import redis
import redis.asyncio
from pytest_redis import TOLERANT
from test_interop import PATIENT, fresh_name, token_of

from conftest import REPO, RUNTIMES
from hiredlock import redis_py

sys.path.insert(0, str(REPO / "tests" / "resty_lock"))
import testnginx

FLAVOURS = ["sync", "asyncio"]


@pytest.fixture(autouse=True)
def tolerant():
    redis_py.configure(**TOLERANT)
    yield
    redis_py.configure()


class RedisPyHolder:
    """redis_py.Lock, or AsyncLock on a loop of its own (in a thread), with
    the calls the tests make."""

    def __init__(self, flavour: str, url: str) -> None:
        self.flavour = flavour
        self.url = url
        if flavour == "sync":
            self.redis = redis.Redis.from_url(url)
        else:
            self.loop = asyncio.new_event_loop()
            self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
            self.thread.start()
            self.redis = redis.asyncio.Redis.from_url(url)

    def _run(self, call):
        if self.flavour == "sync":
            return call()
        return asyncio.run_coroutine_threadsafe(call(), self.loop).result(30)

    def lock(self, name: bytes, **options):
        cls = redis_py.Lock if self.flavour == "sync" else redis_py.AsyncLock
        return self.redis.lock(
            name, timeout=10, thread_local=False, lock_class=cls, **options
        )

    def acquire(self, lk, **options) -> bool:
        return self._run(lambda: lk.acquire(**options))

    def release(self, lk) -> None:
        self._run(lk.release)

    def close(self) -> None:
        if self.flavour == "sync":
            self.redis.close()
        else:
            self._run(self.redis.aclose)
            self.loop.call_soon_threadsafe(self.loop.stop)
            self.thread.join(10)
            self.loop.close()


@pytest.fixture(params=FLAVOURS)
def holder(request, servers1):
    h = RedisPyHolder(request.param, servers1.urls[0])
    yield h
    h.close()


@pytest.mark.parametrize("runtime", RUNTIMES)
def test_a_redis_py_lock_excludes_the_other_runtime_and_the_reverse(
    agents, servers1, holder, runtime
):
    name = fresh_name()
    other = agents(runtime, servers1.urls)
    lk = holder.lock(name)
    assert holder.acquire(lk, blocking=False)
    assert servers1.get(1, name) == lk.local.token
    assert other.acquire(name, 10, 0) == "err timeout"
    holder.release(lk)
    token = token_of(other.acquire(name, 10, 0))
    assert not holder.acquire(lk, blocking=False)
    assert not holder.acquire(lk, blocking_timeout=0.3)
    assert servers1.get(1, name) == token.encode()
    assert other.release() == "ok"
    assert holder.acquire(lk, blocking=False)
    holder.release(lk)


@pytest.mark.parametrize("runtime", RUNTIMES)
def test_a_release_by_the_other_runtime_wakes_a_redis_py_waiter(
    agents, servers1, holder, runtime
):
    name = fresh_name()
    other = agents(runtime, servers1.urls)
    token_of(other.acquire(name, 30, 0))
    threading.Timer(0.3, other.release).start()
    lk = holder.lock(name, sleep=PATIENT, blocking_timeout=PATIENT)
    t0 = time.monotonic()
    assert holder.acquire(lk)
    assert time.monotonic() - t0 < 5  # woken: not its sleep, nor the TTL
    holder.release(lk)


# nginx: hiredlock's cosocket driver (/hold) and hiredlock.resty.lock
# (/resty, the dictionary "d" a namespace: its key k is the name "d:k"),
# their masters from HIREDLOCK_URL.
NGINX_CONFIG = """
        location = /hold {
            content_by_lua_block {
                local args = ngx.req.get_uri_args()
                local client = require("hiredlock").new(os.getenv("HIREDLOCK_URL"),
                    { timeout = 0.5, connect_timeout = 1 })
                local lock, err = client:acquire(args.name, { ttl = 10,
                    timeout = tonumber(args.timeout) or 0 })
                if not lock then
                    ngx.status = 409
                    return ngx.print(err)
                end
                if args.keep ~= "1" then
                    lock:release()
                end
                ngx.print("ok ", lock.token)
            }
        }
        location = /resty {
            content_by_lua_block {
                local args = ngx.req.get_uri_args()
                local resty_lock = require "hiredlock.resty.lock"
                local lock = resty_lock:new("d", { exptime = 10,
                    timeout = tonumber(args.timeout) or 0 })
                local elapsed, err = lock:lock(args.key)
                if not elapsed then
                    ngx.status = 409
                    return ngx.print(err)
                end
                local token = lock:hold().token
                if args.keep ~= "1" then
                    lock:unlock()
                end
                ngx.print("ok ", token)
            }
        }
"""


@pytest.fixture(scope="module")
def nginx(servers1):
    tree = REPO / "build" / "lua" / "5.1"
    http = (
        f'    lua_package_path "{tree}/share/lua/5.1/?.lua;'
        f'{tree}/share/lua/5.1/?/init.lua;;";\n'
        f'    lua_package_cpath "{tree}/lib/lua/5.1/?.so;;";'
    )
    server = testnginx.BlockServer(
        http, NGINX_CONFIG, {"HIREDLOCK_URL": servers1.urls[0]}
    )
    yield server
    server.close()


def ask(nginx, path: str) -> tuple[int | None, str]:
    answer = nginx.request(f"GET {path}")
    return answer.status, answer.body


def test_a_redis_py_lock_excludes_nginx_and_the_reverse(nginx, servers1, holder):
    name = fresh_name()
    lk = holder.lock(name)
    assert holder.acquire(lk, blocking=False)
    assert ask(nginx, f"/hold?name={name.decode()}&timeout=0.3") == (409, "timeout")
    holder.release(lk)
    status, body = ask(nginx, f"/hold?name={name.decode()}&keep=1")
    assert status == 200, body
    assert servers1.get(1, name) == body.split()[1].encode()
    assert not holder.acquire(lk, blocking=False)
    servers1.redis(1).delete(name)

    # hiredlock.resty.lock's key "k" of the dictionary "d" is the name "d:k".
    key = fresh_name().decode()
    lk = holder.lock(f"d:{key}".encode())
    assert holder.acquire(lk, blocking=False)
    assert ask(nginx, f"/resty?key={key}") == (409, "timeout")
    holder.release(lk)
    status, body = ask(nginx, f"/resty?key={key}&keep=1")
    assert status == 200, body
    assert servers1.get(1, f"d:{key}") == body.split()[1].encode()
    assert not holder.acquire(lk, blocking=False)
    servers1.redis(1).delete(f"d:{key}")
