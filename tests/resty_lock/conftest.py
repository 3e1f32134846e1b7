"""lua-resty-lock's own t/sanity.t against hiredlock.resty.lock, in a real
nginx (Debian's, with ngx_lua) driven by testnginx.py.

The .t file is lua-resty-lock's, read where it lies when the suite runs,
never copied into this repository: give it with HRL_RESTY_LOCK_T (the
sanity.t file, or a lua-resty-lock checkout holding t/sanity.t), or
HRL_RESTY_LOCK (the directory holding resty/lock.lua, as bench/ takes it;
its ../t/sanity.t is used). Without either, a lua-resty-lock checkout is
looked for beside this repository and in a ``peers`` directory beside one
of its parent directories. When none is found the tests are skipped with
a message saying so (the suite's summary line shows them skipped).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
sys.path.insert(0, str(REPO / "tests" / "fixtures"))
sys.path.insert(0, str(HERE))

# servers1: the Redis fixtures every suite shares.
pytest_plugins = ["pytest_redis"]

SANITY = Path("t") / "sanity.t"


def _candidates() -> list[Path]:
    found: list[Path] = []
    given = os.environ.get("HRL_RESTY_LOCK_T")
    if given:
        path = Path(given)
        found.append(path / SANITY if path.is_dir() else path)
    lib = os.environ.get("HRL_RESTY_LOCK")
    if lib:
        found += [Path(lib) / SANITY, Path(lib).parent / SANITY]
    for parent in REPO.parents:
        found.append(parent / "lua-resty-lock" / SANITY)
        found += sorted(parent.glob(f"*/peers/lua-resty-lock/{SANITY}"))
        found.append(parent / "peers" / "lua-resty-lock" / SANITY)
    return found


def sanity_t() -> Path | None:
    """lua-resty-lock's t/sanity.t, or None."""
    for path in _candidates():
        if path.is_file():
            return path
    return None


def rock_tree() -> str:
    """The rock as luarocks installed it for Lua 5.1 (what ngx_lua loads):
    tests/lua/build-rock.sh 5.1."""
    return os.environ.get("HRL_NGX_TREE", str(REPO / "build" / "lua" / "5.1"))
