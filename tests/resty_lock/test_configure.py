"""hiredlock.resty.lock inside nginx beyond what sanity.t covers: masters
set once from init_by_lua by configure() (no HIREDLOCK_URL), the
dictionary name as the Redis namespace, a lock that waits and is woken by
the release of a request in flight, and a lock in a phase without
cosockets."""

from __future__ import annotations

import threading
import time

import pytest
import testnginx

from conftest import rock_tree

CONFIG = """
        location = /lock {
            content_by_lua_block {
                local args = ngx.req.get_uri_args()
                local resty_lock = require "hiredlock.resty.lock"
                local lock = resty_lock:new(args.dict, { exptime = 10,
                    timeout = tonumber(args.timeout) or 0 })
                local elapsed, err = lock:lock(args.key)
                if not elapsed then
                    ngx.status = 409
                    return ngx.print(err)
                end
                ngx.sleep(tonumber(args.hold) or 0)
                local token = lock:hold().token
                if args.keep ~= "1" then
                    assert(lock:unlock() == 1)
                end
                ngx.print(elapsed, " ", token)
            }
        }
        location = /log_phase {
            content_by_lua_block { ngx.print("body") }
            log_by_lua_block {
                local lock = require("hiredlock.resty.lock"):new("d")
                local elapsed, err = lock:lock("k")
                ngx.log(ngx.WARN, "in log phase: ", tostring(elapsed), ", ", err)
            }
        }
"""


@pytest.fixture(scope="module")
def nginx(servers1):
    tree = rock_tree()
    http = "\n".join(
        [
            f'    lua_package_path "{tree}/share/lua/5.1/?.lua;'
            f'{tree}/share/lua/5.1/?/init.lua;;";',
            f'    lua_package_cpath "{tree}/lib/lua/5.1/?.so;;";',
            "    init_by_lua_block {",
            '        require("hiredlock.resty.lock").configure('
            f'"{servers1.urls[0]}", {{ timeout = 0.5, connect_timeout = 1 }})',
            "    }",
        ]
    )
    server = testnginx.BlockServer(http, CONFIG, {})  # no HIREDLOCK_URL
    yield server
    server.close()


def test_configured_from_init_by_lua_with_the_dictionary_as_namespace(nginx, servers1):
    answer = nginx.request("GET /lock?dict=orders&key=42&keep=1")
    assert answer.status == 200, answer.body + answer.error_log[-2000:]
    elapsed, token = answer.body.split()
    assert elapsed == "0"
    assert servers1.get(1, "orders:42") == token.encode()
    assert nginx.request("GET /lock?dict=orders&key=42").body == "timeout"
    servers1.redis(1).delete("orders:42")


def test_a_waiter_is_woken_by_the_release_of_another_request(nginx, servers1):
    first: list[testnginx.Answer] = []
    holder = threading.Thread(
        target=lambda: first.append(nginx.request("GET /lock?dict=w&key=k&hold=0.5"))
    )
    holder.start()
    time.sleep(0.2)
    t0 = time.monotonic()
    answer = nginx.request("GET /lock?dict=w&key=k&timeout=5")
    took = time.monotonic() - t0
    holder.join()
    assert first[0].status == 200 and answer.status == 200, answer.body
    elapsed = float(answer.body.split()[0])
    assert 0.1 < elapsed < 2.0  # woken at the release, 0.3 s on
    assert took < 2.5
    assert servers1.get(1, "w:k") is None


def test_a_phase_without_cosockets_says_so(nginx):
    answer = nginx.request("GET /log_phase")
    assert answer.status == 200
    assert "in log phase: nil, cosockets unavailable in the log phase" in (
        answer.error_log
    )
