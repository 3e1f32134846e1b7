"""Bad input: TypeError or ValueError, each naming the argument. No Redis is
contacted for any of these (the URLs point at nothing)."""

from __future__ import annotations

import pytest

import hiredlock

URL = "redis://127.0.0.1:1"


@pytest.fixture
def c():
    return hiredlock.Client(URL)


@pytest.mark.parametrize("bad", [None, 42, ["a"], 1.5, bytearray(b"x")])
def test_name_of_a_wrong_type(c, bad):
    with pytest.raises(TypeError, match=r"^name must be str or bytes, not "):
        c.lock(bad)


@pytest.mark.parametrize(
    "bad, size", [("", 0), (b"", 0), ("x" * 513, 513), ("é" * 257, 514)]
)
def test_name_of_a_wrong_size(c, bad, size):
    with pytest.raises(
        ValueError,
        match=rf"^invalid argument: name must be 1 to 512 bytes, got {size}$",
    ):
        c.lock(bad)


def test_names_up_to_512_bytes_are_fine(c):
    assert c.lock("x" * 512).name == "x" * 512
    assert c.lock("é" * 256).key == ("é" * 256).encode()
    with pytest.raises(UnicodeEncodeError):
        c.lock("\udcff")


BAD_SECONDS = [
    (-1, "got -1"),
    (0, "got 0"),
    (0.0004, "got 0.0004"),
    (float("nan"), "got nan"),
    (float("inf"), "got inf"),
    (float("-inf"), "got -inf"),
    (2147484, "got 2.14748e\\+06"),
    (10**400, "got inf"),
]


@pytest.mark.parametrize("bad, got", BAD_SECONDS)
def test_ttl_out_of_range(c, bad, got):
    if bad != bad:  # nan
        pattern = r"^invalid argument: ttl must be a number of seconds, got nan$"
    else:
        pattern = (
            r"^invalid argument: ttl must be between 0\.005 and 2147483\.647 "
            rf"seconds, {got}$"
        )
    with pytest.raises(ValueError, match=pattern):
        c.lock("n", ttl=bad)
    lk = c.lock("n")
    with pytest.raises(ValueError, match=pattern):
        lk.extend(bad)


@pytest.mark.parametrize("bad", ["10", None, True, [1], b"1"])
def test_ttl_of_a_wrong_type(c, bad):
    message = r"^ttl must be a number of seconds \(int or float\), not "
    if bad is not None:
        with pytest.raises(TypeError, match=message):
            c.lock("n", ttl=bad)
    with pytest.raises(TypeError, match=message):
        c.lock("n").extend(ttl=bad if bad is not None else "x")


@pytest.mark.parametrize(
    "bad", [-2, -0.5, float("nan"), float("inf"), 10**12, 10**400, -(10**400)]
)
def test_timeout_out_of_range(c, bad):
    lk = c.lock("n")
    with pytest.raises(ValueError, match=r"^invalid argument: timeout must be "):
        lk.acquire(timeout=bad)
    with pytest.raises(ValueError, match=r"^invalid argument: timeout must be "):
        c.lock("n", timeout=bad)


@pytest.mark.parametrize("bad", ["1", None, True, [1]])
def test_timeout_of_a_wrong_type(c, bad):
    with pytest.raises(TypeError, match=r"^timeout must be a number of seconds"):
        c.lock("n").acquire(True, bad)


def test_a_timeout_with_blocking_false(c):
    lk = c.lock("n")
    pattern = r"^invalid argument: timeout cannot be given with blocking=False"
    with pytest.raises(ValueError, match=pattern):
        lk.acquire(blocking=False, timeout=1)
    with pytest.raises(ValueError, match=pattern):
        lk.acquire(False, 0)
    with pytest.raises(ValueError, match=pattern):
        c.lock("n", blocking=False, timeout=5)
    # threading.Lock accepts the default -1 with blocking=False.
    with pytest.raises(hiredlock.ConnectionError):
        lk.acquire(blocking=False, timeout=-1)


def test_unknown_and_surplus_arguments(c):
    lk = c.lock("n")
    with pytest.raises(
        TypeError, match=r"acquire\(\) got an unexpected keyword argument 'wait'"
    ):
        lk.acquire(wait=1)
    with pytest.raises(TypeError, match=r"acquire\(\) takes at most 2 positional"):
        lk.acquire(True, 1, 2)
    with pytest.raises(
        TypeError, match=r"acquire\(\) got multiple values for argument 'blocking'"
    ):
        lk.acquire(True, blocking=True)
    with pytest.raises(
        TypeError, match=r"extend\(\) got an unexpected keyword argument 'seconds'"
    ):
        lk.extend(seconds=1)
    with pytest.raises(TypeError, match="release"):
        lk.release(1)
    with pytest.raises(TypeError, match="'ttl_ms'"):
        c.lock("n", ttl_ms=5)
    with pytest.raises(TypeError, match="'retries'"):
        hiredlock.Client(URL, retries=3)
    with pytest.raises(TypeError, match="'ttl_ms'"):
        hiredlock.Lock(c, "n", ttl_ms=5)
    with pytest.raises(TypeError, match="'ttl_ms'"):
        c.synchronized("n", ttl_ms=5)


def test_lock_needs_a_client():
    with pytest.raises(
        TypeError, match=r"^client must be a hiredlock\.Client, not str$"
    ):
        hiredlock.Lock("redis://x", "n")


@pytest.mark.parametrize(
    "urls, pattern",
    [
        ("http://127.0.0.1:6379", r'url "http://127\.0\.0\.1:6379"'),
        ("redis://127.0.0.1:99999", r'url "redis://127\.0\.0\.1:99999"'),
        ("redis://:pw@127.0.0.1:99999", r'url "redis://:\*\*\*@127\.0\.0\.1:99999"'),
        ("", r"url must not be empty"),
        ("redis://127.0.0.1:6379/x", r'url "redis://127\.0\.0\.1:6379/x"'),
        ([], r"urls must list 1 to 63 masters, got 0"),
        (["redis://a"] * 64, r"urls must list 1 to 63 masters, got 64"),
        ([URL, URL], r"master 127\.0\.0\.1:1 is listed twice"),
        ("redis://a\x00b", r"urls\[0\] contains a NUL character"),
    ],
)
def test_bad_urls(urls, pattern):
    with pytest.raises(ValueError, match=r"^invalid argument: .*" + pattern):
        hiredlock.Client(urls)


@pytest.mark.parametrize(
    "urls, pattern",
    [
        (None, "urls must be a str or a sequence of str"),
        (42, "urls must be a str or a sequence of str"),
        (b"redis://a", "urls must be a str or a sequence of str, not bytes"),
        ([URL, 7], r"urls\[1\] must be str, not int"),
    ],
)
def test_urls_of_a_wrong_type(urls, pattern):
    with pytest.raises(TypeError, match=pattern):
        hiredlock.Client(urls)


@pytest.mark.parametrize(
    "option, value, pattern",
    [
        ("connect_timeout", 0, r"connect_timeout must be between 0\.001 and"),
        ("timeout", -1, r"timeout must be between 0\.001 and"),
        ("timeout", float("nan"), r"timeout must be a number of seconds, got nan"),
        ("retry_delay", -0.1, r"retry_delay must be between 0\.000 and"),
        ("retry_jitter", float("inf"), r"retry_jitter must be between 0\.000 and"),
        ("drift_factor", 0.5, r"drift_factor must be in \[0, 0\.5\), got 0\.5"),
        ("drift_factor", float("nan"), r"drift_factor must be in \[0, 0\.5\), got nan"),
        ("key_prefix", "p" * 513, r"key_prefix must be at most 512 bytes, got 513"),
    ],
)
def test_bad_client_options(option, value, pattern):
    with pytest.raises(ValueError, match=r"^invalid argument: " + pattern):
        hiredlock.Client(URL, **{option: value})


@pytest.mark.parametrize(
    "option, value, pattern",
    [
        (
            "timeout",
            "1",
            r"^timeout must be a number of seconds \(int or float\), not str",
        ),
        (
            "drift_factor",
            None,
            r"^drift_factor must be a number \(int or float\), not NoneType",
        ),
        ("key_prefix", 1, r"^key_prefix must be str or bytes, not int"),
    ],
)
def test_client_options_of_a_wrong_type(option, value, pattern):
    with pytest.raises(TypeError, match=pattern):
        hiredlock.Client(URL, **{option: value})


def test_set_default_client_checks_its_argument():
    with pytest.raises(TypeError, match=r"^client must be a hiredlock\.Client or None"):
        hiredlock.set_default_client("redis://x")
