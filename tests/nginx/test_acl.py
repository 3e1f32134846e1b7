"""An ACL user with only a lock's rights (docs/DEPLOYMENTS.md, "ACL users")
inside nginx: the cosocket driver's AUTH user password, then acquire,
release and EVAL after NOSCRIPT within the rules; a key outside the
pattern is refused as a permission refusal naming the command and key
(not an authentication failure), in the words of every runtime."""

from __future__ import annotations

import uuid


def test_the_documented_rules_are_enough(ngx, acl_server):
    name = f"ngx-acl:{uuid.uuid4().hex[:8]}"
    r = ngx.get("/lock", c="acl", name=name, keep="1")
    assert r.status == 200, r.body
    assert acl_server.get(1, "locks:" + name) == r.headers["X-Token"].encode()
    acl_server.redis(1).delete("locks:" + name)
    acl_server.redis(1).script_flush()  # NOSCRIPT, then EVAL
    for _ in range(4):
        r = ngx.get("/lock", c="acl", name=name, extend="20")
        assert r.status == 200, r.body
        assert r.headers["X-Extend"] == "true"
    assert acl_server.count("locks:" + name) == 0


def test_outside_the_key_pattern(ngx):
    r = ngx.get("/lock", c="acl_other", name="x")
    assert r.status == 409
    assert r.body.startswith("permission denied:") and "NOPERM" in r.body
    assert r.body.endswith("; refused: SET on 'other:x'")
