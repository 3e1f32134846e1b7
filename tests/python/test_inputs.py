"""Bad input: every row of the Python bad-input table (tests/python/
bad_inputs) that needs no misbehaving server, one test a row: TypeError or
ValueError naming the argument, before any I/O, and the boundary values
that are accepted. tests/reliability runs the same table with the rows
that need misbehaving servers as well, and counts them."""

from __future__ import annotations

import bad_inputs
import pytest

ROWS = bad_inputs.rows(up_to=bad_inputs.OK)


@pytest.fixture(scope="module")
def ctx(servers1):
    url = servers1.urls[0]
    return bad_inputs.Ctx(
        url, servers1.unix_paths[0], url.replace("127.0.0.1", "localhost")
    )


@pytest.mark.parametrize("row", ROWS, ids=[f"{r[0]}: {r[1]}" for r in ROWS])
def test_bad_input(ctx, row):
    result = bad_inputs.run(row, ctx)
    assert result["as_expected"], f"want {result['expected']}, got {result['got']}"
