#!/usr/bin/env python3
"""Runs the runnable examples of README.md and docs/*.md (the docs suite of
make test), so the docs run as written: each fenced block carries a marker
(tests/docs/examples.py), and every `run` one is run here, against three
fixture masters (tests/fixtures/redis-fixture) and the builds the suites
use (build/python, build/lua/5.1 and 5.4, CMake's build/libhiredlock.a, a
real nginx). Fragments are counted, and a block without a marker fails.

What changes between the page and the run, and nothing else: the masters
the examples name (redis://10.0.0.1:6379 ... 10.0.0.3, redis://a:6379 ...
c, with or without the port) become the fixture's, and the default client
reads them from HIREDLOCK_URLS; the paths an nginx config names for the
rock tree (/opt/hiredlock) and its Lua modules (/etc/nginx/lua) become the
build's and a temp dir's, `listen 8080` a free local port, and the logs go
to the temp dir. Names a runnable example may use without defining them
(what a reference page's examples share, and a lease example's work):
client (on the fixture's masters), batches, process, and in Python log and
store (a redis-py client of the first master, the store fencing protects).

    tests/docs/run_examples.py [PAGE...]
"""

from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

from examples import Example, Unmarked, extract

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "fixtures"))
from redis_fixture import Servers  # noqa: E402

PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
HOSTS = {"10.0.0.1": 0, "10.0.0.2": 1, "10.0.0.3": 2, "a": 0, "b": 1, "c": 2}
URL = re.compile(r"redis://(10\.0\.0\.[123]|[abc])(?::6379)?(?![\w.:-])")
PRELUDE = {
    "python": """\
import logging as _logging
import os as _os

import hiredlock
import redis as _redis

log = _logging.getLogger("example")
batches = [1, 2, 3]
def process(batch): pass
client = hiredlock.Client(_os.environ["HIREDLOCK_URLS"].split(","))
store = _redis.Redis.from_url(_os.environ["HIREDLOCK_URLS"].split(",")[0])
""",
    "lua": """\
batches = {1, 2, 3}
function process(batch) end
client = require("hiredlock").new({"redis://10.0.0.1:6379", "redis://10.0.0.2:6379",
                                   "redis://10.0.0.3:6379"})
""",
}
LUA = {"lua5.1": "5.1", "luajit": "5.1", "lua5.4": "5.4"}
STOCK_CONF = Path("/etc/nginx/nginx.conf")
TIMEOUT = 60


class Failed(Exception):
    pass


def localize(text: str, urls: list[str]) -> str:
    return URL.sub(lambda m: urls[HOSTS[m.group(1)]], text)


def check(cmd: list[str], stderr_too: bool = False, **kw) -> str:
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=TIMEOUT, **kw)
    if done.returncode != 0:
        raise Failed(f"{' '.join(cmd[:3])}... exited {done.returncode}:\n"
                     f"{done.stdout}{done.stderr}")  # fmt: skip
    return done.stdout + (done.stderr if stderr_too else "")


class Runner:
    def __init__(self, servers: Servers, tmp: Path) -> None:
        self.urls = servers.urls
        self.tmp = tmp
        self.env = {
            **os.environ,
            "HIREDLOCK_URLS": ",".join(self.urls),
            "PYTHONPATH": str(ROOT / "build" / "python"),
        }

    def source(self, example: Example, code: str, suffix: str) -> Path:
        path = self.tmp / f"{example.page.stem}-{example.line}{suffix}"
        path.write_text(localize(code, self.urls))
        return path

    def python(self, example: Example, code: str) -> None:
        path = self.source(example, PRELUDE["python"] + code, ".py")
        check([sys.executable, str(path)], env=self.env, cwd=self.tmp)

    def lua(self, example: Example, code: str) -> None:
        path = self.source(example, PRELUDE["lua"] + code, ".lua")
        only_54 = "lua5.4" in example.flags
        for interp, abi in LUA.items():
            if only_54 and interp != "lua5.4":
                continue
            tree = ROOT / "build" / "lua" / abi
            lpath = f"{tree}/share/lua/{abi}/?.lua;{tree}/share/lua/{abi}/?/init.lua;;"
            cpath = f"{tree}/lib/lua/{abi}/?.so;;"
            env = {**self.env, "LUA_PATH": lpath, "LUA_CPATH": cpath,
                   "LUA_PATH_5_4": lpath, "LUA_CPATH_5_4": cpath}  # fmt: skip
            check([interp, str(path)], env=env, cwd=self.tmp)

    def c(self, example: Example, code: str) -> None:
        if "main" in example.flags:
            body = "\n".join("  " + line for line in code.split("\n"))
            code = (
                "#include <err.h>\n#include <stdio.h>\n#include <string.h>\n\n"
                "#include <hiredlock.h>\n\n"
                f"int main(void) {{\n{body}\n  return 0;\n}}\n"
            )
        path = self.source(example, code, ".c")
        exe = path.with_suffix("")
        libs = check(["pkg-config", "--libs", "hiredis", "openssl"]).split()
        library = str(ROOT / "build" / "libhiredlock.a")
        check(["cc", "-std=c11", "-Wall", "-Wextra", "-Werror",
               f"-I{ROOT / 'core' / 'include'}", "-o", str(exe), str(path),
               library, *libs, "-lpthread", "-lm"])  # fmt: skip
        check([str(exe)], env=self.env, cwd=self.tmp)

    def nginx(self, example: Example, conf: str, files: dict[str, str]) -> None:
        conf = localize(conf, self.urls)
        NginxRun(self, example, files, "standalone").serve(conf)
        if "stock" in example.flags:
            NginxRun(self, example, files, "stock").serve_stock(conf)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def split_http(conf: str) -> tuple[str, str]:
    """An nginx config's http { } body, as (what is not a server block,
    the server blocks): Debian's conf.d/ and sites-enabled/ parts."""
    start = conf.index("http {") + len("http {")
    depth, i = 1, start
    while depth:
        depth += {"{": 1, "}": -1}.get(conf[i], 0)
        i += 1
    body = conf[start : i - 1]
    servers, rest, pos = [], [], 0
    for m in re.finditer(r"^\s*server\s*\{", body, re.MULTILINE):
        if m.start() < pos:
            continue
        depth, j = 1, m.end()
        while depth:
            depth += {"{": 1, "}": -1}.get(body[j], 0)
            j += 1
        rest.append(body[pos : m.start()])
        servers.append(body[m.start() : j])
        pos = j
    rest.append(body[pos:])
    return "".join(rest), "\n".join(servers)


class NginxRun:
    """One nginx with a prefix of its own in a temp dir."""

    def __init__(self, runner: Runner, example: Example, files: dict, how: str):
        self.runner = runner
        self.example = example
        self.dir = runner.tmp / f"nginx-{example.line}-{how}"
        self.dir.mkdir()
        for rel, text in files.items():
            path = self.dir / "lua" / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(localize(text, runner.urls))
        self.port = free_port()
        for d in [self.dir, *self.dir.rglob("*")]:
            d.chmod(0o755 if d.is_dir() else 0o644)  # the workers read them

    def paths(self, conf: str) -> str:
        tree = ROOT / "build" / "lua" / "5.1"
        conf = conf.replace("/etc/nginx/lua/", f"{self.dir}/lua/")
        conf = conf.replace("/opt/hiredlock", str(tree))
        return re.sub(r"listen\s+8080\s*;", f"listen 127.0.0.1:{self.port};", conf)

    def serve(self, conf: str) -> None:
        conf = self.paths(conf).replace(
            "http {", f"http {{\n    access_log {self.dir}/access.log;", 1
        )
        (self.dir / "nginx.conf").write_text(conf)
        self.run(["-g", f"pid {self.dir}/nginx.pid;"])

    def serve_stock(self, conf: str) -> None:
        """Debian's own nginx.conf (its modules-enabled/ loads the Lua
        module: a load_module of it again is an error), with the example's
        http { } lines in conf.d/ and its server in sites-enabled/, as the
        README says to put them."""
        conf = "\n".join(
            line for line in self.paths(conf).split("\n")
            if not line.strip().startswith("load_module")
        )  # fmt: skip
        http, servers = split_http(conf)
        for sub, text in (("conf.d/hiredlock.conf", http),
                          ("sites-enabled/hiredlock", servers)):  # fmt: skip
            (self.dir / sub).parent.mkdir(exist_ok=True)
            (self.dir / sub).write_text(text)
        stock = STOCK_CONF.read_text()
        for old, new in (
            ("/etc/nginx/conf.d/", f"{self.dir}/conf.d/"),
            ("/etc/nginx/sites-enabled/", f"{self.dir}/sites-enabled/"),
        ):
            stock = stock.replace(old, new)
        stock = re.sub(r"^(\s*pid)\s+\S+;", rf"\1 {self.dir}/nginx.pid;", stock,
                       flags=re.MULTILINE)  # fmt: skip
        stock = re.sub(r"^(\s*access_log)\s+\S+;", rf"\1 {self.dir}/access.log;",
                       stock, flags=re.MULTILINE)  # fmt: skip
        stock = re.sub(r"^(\s*error_log)\s+\S+;", rf"\1 {self.dir}/error.log;",
                       stock, flags=re.MULTILINE)  # fmt: skip
        for d in [self.dir, *self.dir.rglob("*")]:
            d.chmod(0o755 if d.is_dir() else 0o644)
        (self.dir / "nginx.conf").write_text(stock)
        # Its modules-enabled/ names modules relative to the built-in prefix.
        built = re.search(r"--prefix=(\S+)", check(["nginx", "-V"], stderr_too=True))
        self.run([], prefix=built.group(1) if built else "/usr/share/nginx")

    def run(self, extra: list[str], prefix: str | None = None) -> None:
        conf, log = f"{self.dir}/nginx.conf", f"{self.dir}/error.log"
        base = ["nginx", "-p", f"{prefix or self.dir}/", "-c", conf, "-e", log,
                *extra]  # fmt: skip
        check([*base, "-t"])
        check(base)
        try:
            self.request()
        finally:
            pidfile = self.dir / "nginx.pid"
            if pidfile.exists():
                pid = int(pidfile.read_text())
                os.kill(pid, 15)
                deadline = time.monotonic() + 10
                while time.monotonic() < deadline and Path(f"/proc/{pid}").exists():
                    time.sleep(0.02)

    def request(self) -> None:
        get = self.example.options.get("get")
        if get is None:
            return
        url = f"http://127.0.0.1:{self.port}{get}"
        deadline = time.monotonic() + 10
        while True:
            try:
                with urllib.request.urlopen(url, timeout=10) as reply:
                    body = reply.read().decode()
                break
            except urllib.error.HTTPError as e:
                log = (self.dir / "error.log").read_text(errors="replace")[-2000:]
                raise Failed(f"GET {get}: {e.code} {e.read().decode()}\n{log}") from e
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.05)
        expect = self.example.options.get("expect", "")
        if expect not in body:
            raise Failed(f"GET {get}: {body!r} lacks {expect!r}")


# The Debian packages `pip install .` needs for TLS, as setup.py names them
# when OpenSSL is missing; the install lines of these pages must name them.
SETUP_NEEDS = re.compile(
    r'finds no OpenSSL[\s"]*\(Debian: apt-get install ([a-z0-9 -]+)\)'
)
INSTALL_LINES = {
    ROOT / "README.md": re.compile(r"pip install \.\s+# (.*?)\n```", re.DOTALL),
    ROOT / "docs" / "PYTHON-API.md": re.compile(
        r"`import hiredlock`(.*?)\n\n", re.DOTALL
    ),
}


def install_lines_complete() -> list[str]:
    """Pages whose `pip install .` instructions leave out a package."""
    needs = SETUP_NEEDS.search((ROOT / "setup.py").read_text())
    if needs is None:
        return ["setup.py: no 'apt-get install' for a missing OpenSSL to check"]
    missing = []
    for page, pattern in INSTALL_LINES.items():
        m = pattern.search(page.read_text())
        said = set(re.findall(r"[a-z0-9][a-z0-9.+-]*", m.group(1))) if m else set()
        for package in needs.group(1).split():
            if package not in said:
                missing.append(f"{page.name}: pip install . needs {package}")
    return missing


def run(runner: Runner, ex: Example, code: str, files: dict[str, str]) -> None:
    if ex.lang == "nginx":
        runner.nginx(ex, code, files)
    else:
        getattr(runner, ex.lang)(ex, code)


def run_once_more(runner: Runner, ex: Example, code: str, files: dict) -> str:
    """Runs the example; once more when it failed only because a master
    missed a per-master deadline: the examples keep the production
    timeouts (50 ms), which a loaded machine can miss. What that first
    failure said is printed, never hidden."""
    try:
        run(runner, ex, code, files)
        return ""
    except Failed as e:
        if "timeout after" not in str(e):
            raise
        first = next(
            (line for line in str(e).split("\n") if "timeout after" in line), ""
        )
    run(runner, ex, code, files)
    return f" (on a second run; the first: {first.strip()[:200]})"


def main() -> int:
    pages = [Path(p).resolve() for p in sys.argv[1:]] or PAGES
    examples: list[Example] = []
    problems = []
    for page in pages:
        try:
            examples += extract(page)
        except Unmarked as e:
            problems.append(str(e))
    if problems:
        print("\n".join(problems))
        print(f"docs: {len(problems)} page(s) with unmarked examples "
              "(<!-- example: run|file|fragment --> before each fence)")  # fmt: skip
        return 1
    failed = install_lines_complete()
    for problem in failed:
        print(f"FAILED  {problem}")
    tmp = Path(tempfile.mkdtemp(prefix="hrldocs."))
    servers = Servers(3)
    runner = Runner(servers, tmp)
    sessions: dict[tuple[Path, str], str] = {}
    files: dict[Path, dict[str, str]] = {}
    ran: dict[str, int] = {}
    try:
        for ex in examples:
            if ex.kind == "file":
                files.setdefault(ex.page, {})[ex.path] = ex.code
                continue
            if ex.kind != "run":
                continue
            code = ex.code
            if "after" in ex.options:
                code = sessions[(ex.page, ex.options["after"])] + code
            if "id" in ex.options:
                sessions[(ex.page, ex.options["id"])] = code
            try:
                note = run_once_more(runner, ex, code, files.get(ex.page, {}))
                ran[ex.lang] = ran.get(ex.lang, 0) + 1
                print(f"ok      {ex.where} ({ex.lang}){note}", flush=True)
            except (Failed, OSError, subprocess.TimeoutExpired) as e:
                failed.append(ex.where)
                print(f"FAILED  {ex.where} ({ex.lang}): {e}", flush=True)
    finally:
        servers.stop(check=False)
        shutil.rmtree(tmp, ignore_errors=True)
    fragments = sum(ex.kind == "fragment" for ex in examples)
    kinds = ", ".join(f"{lang} {n}" for lang, n in sorted(ran.items()))
    print(f"docs: {sum(ran.values())} examples ran ({kinds}), {fragments} "
          f"fragments, {len(failed)} failed")  # fmt: skip
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
