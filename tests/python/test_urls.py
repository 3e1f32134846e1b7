"""Master URLs as the command line and the environment give them: a list is
split only between URLs (a cluster's or sentinel's seeds and a password may
hold commas), a password never shows in a message, and ``hiredlock run``
takes URLs from a file (``--url-file``) to keep them out of the process
list."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from redis_fixture import Servers

import hiredlock
from hiredlock._default import split_urls

# A password with the characters that a list or a URL gives meaning to.
SECRET = "S3c,r3t@w0rd"
COMMA_SECRET = "S3c,r3t"


def run(*args: str, env: dict | None = None, timeout: float = 30):
    """`hiredlock run ARGS` in a process of its own: (status, stderr)."""
    done = subprocess.run(
        [sys.executable, "-m", "hiredlock", "run", *args],
        capture_output=True, text=True, cwd="/", timeout=timeout,
        env={**os.environ, **(env or {})},
    )  # fmt: skip
    return done.returncode, done.stderr


def default_masters(env: dict) -> list[str]:
    """The masters of the default client a process with env makes."""
    code = "import hiredlock; print('\\n'.join(hiredlock.default_client().masters))"
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd="/",
        timeout=30, env={**os.environ, **env},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines()


@pytest.fixture(scope="module")
def passworded():
    """One master whose password holds a comma."""
    s = Servers(1, "--password", COMMA_SECRET)
    yield s
    s.stop()


def test_lists_split_only_between_urls():
    assert split_urls("redis://a:1,redis://b:2") == ["redis://a:1", "redis://b:2"]
    assert split_urls(" redis://a:1 , unix:///s.sock ,") == [
        "redis://a:1",
        "unix:///s.sock",
    ]
    seeds = "redis+cluster://a:1,b:2,c:3"
    sentinels = "redis+sentinel://s1:1,s2:2/svc/2"
    assert split_urls(seeds) == [seeds]
    assert split_urls(f"{seeds},{sentinels}, rediss://d:4") == [
        seeds,
        sentinels,
        "rediss://d:4",
    ]
    assert split_urls(f"redis://:{SECRET}@h:1,redis://h:2") == [
        f"redis://:{SECRET}@h:1",
        "redis://h:2",
    ]
    assert split_urls(" , ") == []


def test_multi_seed_urls_from_the_command_line_and_environment(
    cluster3, servers1, name
):
    # One cluster and one standalone master: two masters, not four.
    urls = f"{cluster3.cluster_url},{servers1.urls[0]}"
    code, err = run("-u", urls, "--wait", "5", name, "--", "true")
    assert code == 0, err
    masters = default_masters({"HIREDLOCK_URLS": urls})
    assert masters == [
        "cluster " + cluster3.cluster_url.removeprefix("redis+cluster://"),
        servers1.urls[0].removeprefix("redis://"),
    ]
    code, err = run(name, "--", "true", env={"HIREDLOCK_URL": cluster3.cluster_url})
    assert code == 0, err
    # A Sentinel URL with two sentinels, taken whole too.
    sentinels = "redis+sentinel://127.0.0.1:1,127.0.0.1:2/svc"
    masters = default_masters({"HIREDLOCK_URLS": sentinels})
    assert masters == ["svc (sentinel 127.0.0.1:1,127.0.0.1:2)"]


def test_a_password_with_a_comma_is_one_url(passworded, name):
    url = f"redis://:{COMMA_SECRET}@127.0.0.1:{passworded.ports[0]}"
    code, err = run("-u", url, name, "--", "true")
    assert code == 0, err
    code, err = run(name, "--", "true", env={"HIREDLOCK_URLS": url})
    assert code == 0, err
    assert passworded.count(name) == 0


@pytest.mark.parametrize("where", ["--url", "HIREDLOCK_URLS", "--url-file"])
def test_passwords_never_show(where, name, tmp_path):
    for url, status, words in [
        # refused by the parser, by the server, and a '/' the parser stops at
        (f"redis://app:{SECRET}@127.0.0.1:99999", 2,
         'url "redis://app:***@127.0.0.1:99999": port must be'),
        (f"redis://app:{SECRET}@127.0.0.1:1", 69, "127.0.0.1:1: connection refused"),
        (f"redis://app:{SECRET}/x@127.0.0.1:1", 2,
         'url "redis://app:***@127.0.0.1:1": database must be'),
    ]:  # fmt: skip
        args: list[str] = []
        env = {}
        if where == "--url":
            args = ["-u", url]
        elif where == "HIREDLOCK_URLS":
            env = {"HIREDLOCK_URLS": url}
        else:
            path = tmp_path / "urls"
            path.write_text(f"# the lock's master\n\n{url}\n")
            path.chmod(0o600)
            args = ["--url-file", str(path)]
        code, err = run(*args, name, "--", "true", env=env)
        assert (code, words in err) == (status, True), err
        for part in ("S3c", "r3t", "w0rd"):
            assert part not in err, err


def test_default_client_messages_hide_passwords():
    for url, parts in [
        (f"redis://app:{SECRET}@127.0.0.1:99999", ("S3c", "r3t", "w0rd")),
        ("redis://:p4ss@w0rdQ@127.0.0.1:99999", ("p4ss", "w0rdQ")),
        ("redis+cluster://app:Tr0ub4dor/3xyz@a:1,b:2", ("Tr0ub4dor", "3xyz")),
    ]:
        with pytest.raises(ValueError) as info:
            hiredlock.Client(url)
        message = str(info.value)
        assert "***@" in message, message
        for part in parts:
            assert part not in message, message


def test_url_file_errors_and_lists(servers1, name, tmp_path):
    code, err = run("--url-file", str(tmp_path / "none"), name, "--", "true")
    assert code == 2 and "--url-file " in err and "No such file" in err, err
    path = tmp_path / "urls"
    path.write_text(f"{servers1.urls[0]}\n")
    code, err = run("--url-file", str(path), name, "--", "true")
    assert code == 0, err
    help_text = subprocess.run(
        [sys.executable, "-m", "hiredlock", "run", "--help"],
        capture_output=True, text=True, cwd="/", timeout=30, check=True,
    ).stdout  # fmt: skip
    assert "--url-file" in help_text and "process list" in help_text
