"""A burst of waiting acquires of one name in one nginx worker (a cache
stampede): the first try goes alone, and the others send theirs once its
round is over (hiredlock/driver/first_try.lua), so the winner's reply is
read before the worker runs everyone else's try. Counted in rounds the
worker ran, not timed: without the rule every try of the burst is out
before the first reply is read."""

from __future__ import annotations

import uuid

import pytest

N = 10


def burst(ngx, **args) -> tuple[int, int, list[str]]:
    name = f"burst:{uuid.uuid4().hex[:12]}"
    r = ngx.get("/burst", name=name, n=N, **args)
    assert r.status == 200, r.body
    rounds, granted, errors = r.body.split(" ", 2)
    return int(rounds), int(granted), [e for e in errors.split(",") if e]


@pytest.mark.parametrize("config", ["c3", "patient1"])
@pytest.mark.parametrize("fresh", ["0", "1"])
def test_the_first_try_of_a_burst_is_answered_before_the_others_go(
    ngx, servers3, config, fresh
):
    rounds, granted, errors = burst(ngx, c=config, fresh=fresh, timeout=10)
    assert (granted, errors) == (N, [])
    # 1 (its own) when the worker runs nothing else; N and more when every
    # waiter's try went out first
    assert 1 <= rounds < N


def test_acquires_without_a_wait_go_at_once(ngx, servers3):
    rounds, granted, errors = burst(ngx, c="c3", timeout=0)
    assert granted >= 1 and granted + len(errors) == N
    assert rounds >= N


def test_first_tries_whose_owners_never_end_are_swept_and_replaced(ngx):
    # first_try.lua's record of 1000 abandoned first tries (their requests
    # aborted mid-round, past their rounds' bound): swept as it grows, and
    # the name's next acquire goes at once instead of parking behind one
    entries, again = ngx.get("/abandon", n=1000).body.split()
    assert int(entries) < 200
    assert again == "new"
