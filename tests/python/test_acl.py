"""An ACL user allowed only what a lock needs (docs/DEPLOYMENTS.md, "ACL
users"), through redis://user:password@...: the documented rules are
enough for acquire, extend and release (EVAL after NOSCRIPT too); a key
outside the pattern, or a command the rules leave out, is a
PermissionDenied (a LockError and a PermissionError, never a
ConnectionError: retrying cannot help) naming the command and key, in the
sync and the asyncio API alike."""

from __future__ import annotations

import asyncio

import pytest
from pytest_redis import TOLERANT
from redis_fixture import Servers

import hiredlock
import hiredlock.asyncio

# The line DEPLOYMENTS.md gives, for the key prefix "locks:".
LOCK_RULES = (
    "resetkeys ~locks:* resetchannels &locks:hiredlock:wake:* -@all +set +eval"
    " +evalsha +get +del +pexpire +exists +pttl +time +zadd +zrange +zrem +hset"
    " +hget +hdel +publish +subscribe"
)


@pytest.fixture(scope="module")
def acl_server():
    s = Servers(1, "--acl-user", "locker:pw", "--acl-rules", LOCK_RULES)
    yield s
    s.stop()


def client(server, prefix="locks:"):
    url = f"redis://locker:pw@127.0.0.1:{server.ports[0]}"
    return hiredlock.Client(url, key_prefix=prefix, **TOLERANT)


def test_the_documented_rules_are_enough(acl_server, name):
    lk = client(acl_server).lock(name)
    for flush in (False, True, False):
        with lk:
            assert acl_server.get(1, "locks:" + name) == lk.token.encode()
            lk.extend(20)
            if flush:
                acl_server.redis(1).script_flush()  # NOSCRIPT, then EVAL
    assert acl_server.count("locks:" + name) == 0


def test_permission_denied_is_its_own_error():
    assert issubclass(hiredlock.PermissionDenied, hiredlock.LockError)
    assert issubclass(hiredlock.PermissionDenied, PermissionError)
    assert not issubclass(hiredlock.PermissionDenied, ConnectionError)
    assert hiredlock.asyncio.PermissionDenied is hiredlock.PermissionDenied


def test_outside_the_key_pattern(acl_server, name):
    with pytest.raises(hiredlock.PermissionDenied) as caught:
        client(acl_server, "other:").lock(name).acquire(blocking=False)
    text = str(caught.value)
    assert text.startswith("permission denied: 0 of 1 masters answered")
    assert "NOPERM" in text
    assert text.endswith(f"; refused: SET on 'other:{name}'")
    assert not isinstance(caught.value, ConnectionError)


def test_a_command_left_out(acl_server, name):
    acl_server.redis(1).execute_command("ACL", "SETUSER", "locker", "-pexpire")
    try:
        lk = client(acl_server).lock(name)
        with lk, pytest.raises(hiredlock.PermissionDenied) as caught:
            lk.extend()
        assert "can't run this command" in str(caught.value)
        assert str(caught.value).endswith(
            f"; refused: the extend script on 'locks:{name}'"
        )
    finally:
        acl_server.redis(1).execute_command("ACL", "SETUSER", "locker", "+pexpire")


def test_asyncio_says_the_same(acl_server, name):
    async def main():
        url = f"redis://locker:pw@127.0.0.1:{acl_server.ports[0]}"
        async with hiredlock.asyncio.Client(
            url, key_prefix="other:", **TOLERANT
        ) as aclient:
            with pytest.raises(hiredlock.PermissionDenied) as caught:
                await aclient.lock(name).acquire(blocking=False)
        return str(caught.value)

    text = asyncio.run(main())
    with pytest.raises(hiredlock.PermissionDenied) as sync:
        client(acl_server, "other:").lock(name).acquire(blocking=False)
    assert text == str(sync.value)
