"""A small driver for Test::Nginx (.t) files: the part of Test::Nginx that
lua-resty-lock's t/sanity.t uses, so that file runs as it is, read at test
time (Test::Nginx is a CPAN module, which this project cannot install).

What it reads: the file's ``repeat_each(N)``, its ``our $HttpConfig =
qq{...};`` and, after ``__DATA__``, the blocks (``=== TEST n: title``) with
their sections ``http_config eval: $::HttpConfig``, ``config``, ``request``,
``response_body``, ``response_body_like [chop]``, ``error_code``,
``no_error_log`` and ``skip_eval: N: system("$NginxBinary -V ...") ne 0``.
Anything else is refused (UnsupportedBlock), never silently skipped.

How it runs a block, as Test::Nginx does by default: one nginx (no master
process, one worker, ``error_log ... debug``) per block with the block's
``config`` in its server and ``http_config`` in http, the request sent
``repeat_each`` times to that same nginx, and per request the checks
Test::Nginx makes: the status (``error_code``, 200 by default), the body
(exact, or the regex of ``response_body_like``; ``chop`` drops the
section's last newline) and, per ``no_error_log`` line, that the error log
written during the request does not hold it. Two choices of its own: each
request gets 30 s (Test::Nginx: 3 s, TEST_NGINX_TIMEOUT), so a block that
waits shows what it answers rather than a client timeout; and the caller
may rewrite the Lua (the require of the module under test) and the http
block's package paths.
"""

from __future__ import annotations

import contextlib
import http.client
import os
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

NGINX = os.environ.get("HRL_NGINX", "/usr/sbin/nginx")
REQUEST_TIMEOUT = 30.0
SECTIONS = {
    "http_config",
    "config",
    "request",
    "response_body",
    "response_body_like",
    "error_code",
    "no_error_log",
    "skip_eval",
}


class UnsupportedBlock(Exception):
    """A .t construct this driver does not implement."""


@dataclass
class Block:
    index: int  # 1-based position in the file (titles may repeat numbers)
    title: str
    sections: dict[str, tuple[str, str]] = field(default_factory=dict)

    def value(self, name: str, default: str | None = None) -> str | None:
        entry = self.sections.get(name)
        return default if entry is None else entry[1]

    def modifiers(self, name: str) -> str:
        entry = self.sections.get(name)
        return "" if entry is None else entry[0]


@dataclass
class TFile:
    repeat_each: int
    http_config: str  # $::HttpConfig
    blocks: list[Block]


def _trim(text: str) -> str:
    """Test::Base's trim filter: blank lines off both ends, one final
    newline kept."""
    text = text.strip("\n")
    return text + "\n" if text else ""


def parse(path: str | Path) -> TFile:
    text = Path(path).read_text()
    head, sep, data = text.partition("\n__DATA__\n")
    if not sep:
        raise UnsupportedBlock(f"{path}: no __DATA__ section")
    repeat = re.search(r"^repeat_each\((\d+)\);", head, re.M)
    http = re.search(r"^our \$HttpConfig = qq\{(.*?)\};", head, re.M | re.S)
    blocks: list[Block] = []
    current: Block | None = None
    section: str | None = None
    for line in data.split("\n"):
        head_match = re.match(r"^=== (.*)$", line)
        if head_match:
            current = Block(len(blocks) + 1, head_match.group(1).strip())
            blocks.append(current)
            section = None
            continue
        sec_match = re.match(r"^--- (\w+)(.*)$", line)
        if sec_match and current is not None:
            section, rest = sec_match.group(1), sec_match.group(2)
            if section not in SECTIONS:
                raise UnsupportedBlock(f"{current.title}: section {section!r}")
            modifiers, _, inline = rest.partition(":")
            current.sections[section] = (modifiers.strip(), inline.strip())
            continue
        if current is not None and section is not None:
            mods, value = current.sections[section]
            current.sections[section] = (mods, value + line + "\n")
    for block in blocks:
        for name, (mods, value) in block.sections.items():
            if name not in ("http_config", "skip_eval"):
                value = _trim(value)
            block.sections[name] = (mods, value)
    return TFile(
        repeat_each=int(repeat.group(1)) if repeat else 1,
        http_config=http.group(1) if http else "",
        blocks=blocks,
    )


def nginx_has_debug() -> bool:
    out = subprocess.run([NGINX, "-V"], capture_output=True, text=True)
    return "--with-debug" in out.stderr + out.stdout


def skipped(block: Block) -> bool:
    """skip_eval, for the one condition sanity.t uses: nginx built without
    --with-debug (then lua-resty-lock leaves its internals unexported)."""
    spec = block.value("skip_eval")
    if spec is None:
        return False
    want = "system(\"$NginxBinary -V 2>&1 | grep -- '--with-debug'\") ne 0"
    _count, _, cond = spec.strip().partition(": ")
    if cond.strip() != want:
        raise UnsupportedBlock(f"{block.title}: skip_eval {spec.strip()!r}")
    return not nginx_has_debug()


@dataclass
class Answer:
    status: int | None
    body: str
    error_log: str  # what the error log got during the request
    failure: str = ""  # the request itself failed (no answer)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# ngx_lua as a dynamic module (Debian's libnginx-mod-http-lua); OpenResty
# has it built in.
MODULES = [
    "/usr/lib/nginx/modules/ndk_http_module.so",
    "/usr/lib/nginx/modules/ngx_http_lua_module.so",
]

CONF = """\
{modules}{user}daemon off;
master_process off;
worker_processes 1;
pid {prefix}/nginx.pid;
error_log {prefix}/error.log debug;
{env}
events {{
    worker_connections 64;
}}

http {{
    access_log off;
    default_type text/plain;
    keepalive_timeout 68;
    client_body_temp_path {prefix}/client_body;
    proxy_temp_path {prefix}/proxy;
    fastcgi_temp_path {prefix}/fastcgi;
    uwsgi_temp_path {prefix}/uwsgi;
    scgi_temp_path {prefix}/scgi;

{http_config}

    server {{
        listen 127.0.0.1:{port};
        server_name localhost;
{config}
    }}
}}
"""


class BlockServer:
    """One nginx for one block, in a temp prefix; always stopped."""

    def __init__(self, http_config: str, config: str, env: dict[str, str]) -> None:
        self.prefix = tempfile.mkdtemp(prefix="hrl-tnginx.")
        os.chmod(self.prefix, 0o755)
        self.log = Path(self.prefix) / "error.log"
        self.proc: subprocess.Popen | None = None
        for _ in range(5):  # the free port may be taken before nginx binds
            self.port = _free_port()
            conf = Path(self.prefix) / "nginx.conf"
            conf.write_text(
                CONF.format(
                    modules="".join(
                        f"load_module {m};\n" for m in MODULES if os.path.exists(m)
                    ),
                    user="user root root;\n" if os.geteuid() == 0 else "",
                    prefix=self.prefix,
                    env="".join(f"env {k};\n" for k in env),
                    http_config=http_config,
                    port=self.port,
                    config=config,
                )
            )
            with open(Path(self.prefix) / "stderr.log", "ab") as stderr:
                self.proc = subprocess.Popen(
                    [NGINX, "-p", self.prefix, "-c", str(conf)],
                    env={**os.environ, **env},
                    stdin=subprocess.DEVNULL,
                    stderr=stderr,
                    start_new_session=True,
                )
            if self._ready():
                return
            self.stop()
        raise RuntimeError(f"nginx did not start:\n{self.log_text()}")

    def _ready(self) -> bool:
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                return False
            with contextlib.suppress(OSError):
                socket.create_connection(("127.0.0.1", self.port), 0.2).close()
                return True
            time.sleep(0.02)
        return False

    def log_text(self) -> str:
        text = ""
        for path in (Path(self.prefix) / "stderr.log", self.log):
            with contextlib.suppress(OSError):
                text += path.read_text(errors="replace")
        return text

    def request(self, request: str) -> Answer:
        method, _, path = request.strip().split("\n")[0].partition(" ")
        path = path.split(" ")[0] or "/"
        start = self.log.stat().st_size if self.log.exists() else 0
        conn = http.client.HTTPConnection(
            "127.0.0.1", self.port, timeout=REQUEST_TIMEOUT
        )
        try:
            conn.request(method, path)
            resp = conn.getresponse()
            status, body, failure = resp.status, resp.read().decode(), ""
        except OSError as err:
            status, body, failure = None, "", f"request failed: {err}"
        finally:
            conn.close()
        time.sleep(0.05)  # what nginx logs as the request ends
        with open(self.log, "rb") as f:
            f.seek(start)
            logged = f.read().decode(errors="replace")
        return Answer(status, body, logged, failure)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGQUIT)
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.proc.wait(5)
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(5)

    def close(self) -> None:
        self.stop()
        shutil.rmtree(self.prefix, ignore_errors=True)


CHECKS = ("status", "body", "no_error_log")


def check(block: Block, answer: Answer, name: str) -> str | None:
    """None when the check passes, else why it failed (Test::Nginx's)."""
    if answer.failure:
        return answer.failure
    if name == "status":
        want = int(block.value("error_code", "200").strip() or 200)
        return None if answer.status == want else f"status {answer.status} != {want}"
    if name == "body":
        like = block.value("response_body_like")
        if like is not None:
            chop = "chop" in block.modifiers("response_body_like")
            pattern = like[:-1] if chop else like
            if re.search(pattern, answer.body, re.S):
                return None
            return f"body {answer.body!r} does not match {pattern!r}"
        want = block.value("response_body")
        if want is None or answer.body == want:
            return None
        return f"body {answer.body!r} != {want!r}"
    if name == "no_error_log":
        for pattern in (block.value("no_error_log") or "").splitlines():
            if pattern and pattern in answer.error_log:
                lines = [ln for ln in answer.error_log.splitlines() if pattern in ln]
                return f"error log has {pattern!r}: {lines[:3]}"
        return None
    raise ValueError(name)
