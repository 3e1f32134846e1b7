"""What `pip install .` ships: the installed package, its version, its
exception hierarchy, its stubs."""

from __future__ import annotations

import builtins
import inspect
import re
from pathlib import Path

import hiredlock
from hiredlock import _core

REPO = Path(__file__).resolve().parents[2]


def test_the_installed_package_is_under_test():
    # The suite runs from outside the checkout: this is the installed copy,
    # not python/hiredlock from the source tree.
    assert REPO / "python" not in Path(hiredlock.__file__).resolve().parents


def test_version_comes_from_the_c_header():
    header = (REPO / "core" / "include" / "hiredlock.h").read_text()
    version = re.search(r'#define HIREDLOCK_VERSION "([^"]+)"', header).group(1)
    assert hiredlock.__version__ == version


def test_exception_hierarchy():
    assert issubclass(hiredlock.LockError, Exception)
    assert issubclass(hiredlock.NotAcquired, hiredlock.LockError)
    assert issubclass(hiredlock.NotAcquired, TimeoutError)
    assert issubclass(hiredlock.NotOwned, hiredlock.LockError)
    assert issubclass(hiredlock.ConnectionError, hiredlock.LockError)
    assert issubclass(hiredlock.ConnectionError, builtins.ConnectionError)
    assert hiredlock.ConnectionError is not builtins.ConnectionError
    for cls in (
        hiredlock.LockError,
        hiredlock.NotAcquired,
        hiredlock.NotOwned,
        hiredlock.ConnectionError,
        hiredlock.Client,
        hiredlock.Lock,
    ):
        assert cls.__module__ == "hiredlock"


def test_stubs_and_py_typed_are_installed():
    package = Path(hiredlock.__file__).parent
    assert (package / "py.typed").is_file()
    stub = (package / "_core.pyi").read_text()
    for name in (
        "class Client",
        "class Lock",
        "def acquire",
        "def release",
        "def extend",
        "def locked",
        "def validity",
        "def token",
    ):
        assert name in stub


def test_acquire_has_threading_locks_signature():
    doc = inspect.getdoc(_core.Lock.acquire)
    assert doc.startswith("acquire(blocking=True, timeout=-1) -> bool")
    for public in (
        hiredlock.lock,
        hiredlock.synchronized,
        hiredlock.Client.lock,
        hiredlock.Client.synchronized,
        hiredlock.default_client,
    ):
        assert inspect.getdoc(public)


def test_objects_cannot_be_pickled():
    import pickle

    import pytest

    c = hiredlock.Client("redis://127.0.0.1:1")
    with pytest.raises(TypeError):
        pickle.dumps(c)
    with pytest.raises(TypeError):
        pickle.dumps(c.lock("x"))
