"""A real nginx (Debian's, with its dynamic ngx_lua module) running the test
application tests/nginx/hrltest.lua against Redis masters from the shared
launcher, tests/fixtures/redis-fixture.

tests/nginx/run.sh builds the rock into a private tree (HRL_NGX_TREE) and
the Python package into a private directory on PYTHONPATH, then runs pytest
here. nginx is started once per session from nginx.conf.in in a temp prefix
on a free 127.0.0.1 port, with 2 workers, and always stopped: SIGQUIT, then
SIGKILL to its whole process group. run.sh kills that group too should pytest
itself die.
"""

from __future__ import annotations

import contextlib
import http.client
import os
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
sys.path.insert(0, str(REPO / "tests" / "fixtures"))

from redis_fixture import Servers  # noqa: E402  (the path above)

# servers3, servers5, ...: the Redis fixtures every suite shares.
pytest_plugins = ["pytest_redis"]

NGINX = os.environ.get("HRL_NGINX", "/usr/sbin/nginx")
WORKERS = 2


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Response:
    def __init__(self, status: int, headers, body: str, took: float) -> None:
        self.status = status
        self.headers = headers
        self.body = body
        self.took = took  # seconds, measured by the test client

    @property
    def pid(self) -> int:
        return int(self.headers["X-Pid"])

    @property
    def elapsed(self) -> float:
        """Seconds the lock call took, measured inside nginx."""
        return float(self.headers["X-Elapsed"])


def doc_location(doc: str, first_line: str) -> str:
    """A `location` block of a documented nginx example, verbatim, so the
    suite runs what the documentation shows."""
    text = (REPO / doc).read_text()
    start = text.index(first_line)
    depth, end = 0, start
    for end in range(start, len(text)):
        if text[end] == "{":
            depth += 1
        elif text[end] == "}":
            depth -= 1
            if depth == 0:
                break
    return text[start : end + 1]


def readme_location() -> str:
    """README.md's nginx example."""
    return doc_location("README.md", "        location = /reports/build {")


def fence_location() -> str:
    """docs/LUA-API.md's fencing example: the fence forwarded upstream."""
    return doc_location("docs/LUA-API.md", "        location /docs/ {")


class Resolver:
    """A DNS server on 127.0.0.1 that knows one name, localhost (A
    127.0.0.1), for nginx's `resolver`: cosockets resolve host names
    through it, and TLS masters are named by host name so that nginx can
    check their certificates (it checks DNS names only). Every other name
    is NXDOMAIN."""

    def __init__(self) -> None:
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.bind(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.queries = 0
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    @staticmethod
    def answer(query: bytes) -> bytes:
        qid = query[:2]
        end = 12
        labels = []
        while query[end]:
            labels.append(query[end + 1 : end + 1 + query[end]].decode().lower())
            end += 1 + query[end]
        qtype = struct.unpack(">H", query[end + 1 : end + 3])[0]
        question = query[12 : end + 5]
        known = labels == ["localhost"]
        answers = b""
        if known and qtype == 1:  # A
            answers = (
                b"\xc0\x0c" + struct.pack(">HHIH", 1, 1, 60, 4) + bytes([127, 0, 0, 1])
            )
        flags = 0x8180 if known else 0x8183  # a response; NXDOMAIN if unknown
        header = qid + struct.pack(">HHHHH", flags, 1, 1 if answers else 0, 0, 0)
        return header + question + answers

    def _serve(self) -> None:
        while True:
            try:
                query, peer = self.sock.recvfrom(512)
            except OSError:
                return
            self.queries += 1
            with contextlib.suppress(Exception):  # a malformed query: no answer
                self.sock.sendto(self.answer(query), peer)

    def stop(self) -> None:
        self.sock.close()


class Nginx:
    def __init__(
        self, tree: str, env: dict[str, str], resolver: int = 0, trusted: str = ""
    ) -> None:
        self.resolver = resolver
        self.trusted = trusted
        self.prefix = tempfile.mkdtemp(
            prefix="hrlngx.", dir=os.environ.get("HRL_NGX_TMP")
        )
        os.chmod(self.prefix, 0o755)
        self.error_log = Path(self.prefix) / "error.log"
        self.proc: subprocess.Popen | None = None
        for _ in range(5):  # the free port may be taken before nginx binds it
            self.port = free_port()
            self.backend_port = free_port()
            self._render(tree)
            if self._start(env):
                return
        raise RuntimeError("nginx did not start:\n" + self.log_text())

    def _render(self, tree: str) -> None:
        text = (HERE / "nginx.conf.in").read_text()
        text = text.replace("@README_LOCATION@", readme_location())
        text = text.replace("@FENCE_LOCATION@", fence_location())
        # Root starts the workers as nobody, who cannot read our temp dirs
        # nor the fixtures' unix sockets.
        values = {
            "@USER@": "user root root;" if os.geteuid() == 0 else "",
            "@WORKERS@": str(WORKERS),
            "@PREFIX@": self.prefix,
            "@PORT@": str(self.port),
            "@BACKEND_PORT@": str(self.backend_port),
            "@TREE@": tree,
            "@HERE@": str(HERE),
            "@LUA_TESTS@": str(REPO / "tests" / "lua"),
            "@RESOLVER@": f"127.0.0.1:{self.resolver}",
            "@TRUSTED@": self.trusted,
        }
        for key, value in values.items():
            text = text.replace(key, value)
        self.conf = Path(self.prefix) / "nginx.conf"
        self.conf.write_text(text)

    def _start(self, env: dict[str, str]) -> bool:
        self.proc = subprocess.Popen(
            [NGINX, "-p", self.prefix, "-c", str(self.conf)],
            env={**os.environ, **env},
            stdin=subprocess.DEVNULL,
            start_new_session=True,  # one process group: stop() kills it all
        )
        with open(
            os.path.join(os.environ.get("HRL_NGX_TMP", self.prefix), "nginx.pgid"), "a"
        ) as f:
            f.write(f"{self.proc.pid}\n")
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                return False
            try:
                if (
                    self.get("/ping", http_timeout=1).status == 200
                    and len(self.workers()) == WORKERS
                ):
                    return True
            except OSError:
                pass
            time.sleep(0.05)
        self.stop()
        return False

    def workers(self) -> set[int]:
        """Pids of the master's worker processes (from /proc)."""
        pids = set()
        for entry in os.listdir("/proc"):
            if not entry.isdigit():
                continue
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            fields = stat[stat.rindex(")") + 2 :].split()
            if int(fields[1]) == self.proc.pid:
                pids.add(int(entry))
        return pids

    def connect(self, timeout: float = 30) -> http.client.HTTPConnection:
        return http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)

    def get(
        self,
        path: str,
        conn: http.client.HTTPConnection | None = None,
        http_timeout: float = 30,
        **args,
    ) -> Response:
        """GET path?args on conn (kept alive) or on a new connection; args
        become the query string (timeout=... is the lock's)."""
        if args:
            path += "?" + urllib.parse.urlencode(args)
        own = conn is None
        if own:
            conn = self.connect(http_timeout)
        try:
            t0 = time.monotonic()
            conn.request("GET", path)
            resp = conn.getresponse()
            body = resp.read().decode()
            return Response(resp.status, resp.headers, body, time.monotonic() - t0)
        finally:
            if own:
                conn.close()

    def log_text(self) -> str:
        try:
            return self.error_log.read_text(errors="replace")
        except OSError:
            return ""

    def stop(self) -> None:
        if self.proc is None or self.proc.poll() is not None:
            return
        self.proc.send_signal(signal.SIGQUIT)  # graceful: the master ends it
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(10)
        # workers still finishing requests, or the master stuck
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait(10)


@pytest.fixture(scope="session")
def servers_pw():
    s = Servers(1, "--password", "pw")
    yield s
    s.stop()


@pytest.fixture(scope="session")
def tls_untrusted():
    """A TLS master whose CA nginx does not trust (the wrong CA)."""
    s = Servers(1, "--tls")
    yield s
    s.stop()


@pytest.fixture(scope="session")
def sentinels():
    """A primary, its replica and 2 sentinels: tests/nginx/test_sentinel.py
    fails it over (its tests ask who the primary is)."""
    s = Servers(2, "--sentinels", "2")
    yield s
    s.stop()


# The ACL rules docs/DEPLOYMENTS.md gives, for the key prefix "locks:".
LOCK_RULES = (
    "resetkeys ~locks:* resetchannels &locks:hiredlock:wake:* -@all +set +eval"
    " +evalsha +get +del +pexpire +exists +pttl +time +zadd +zrange +zrem +hset"
    " +hget +hdel +publish +subscribe"
)


@pytest.fixture(scope="session")
def acl_server():
    """A master whose user locker (password pw) has only a lock's rights."""
    s = Servers(1, "--acl-user", "locker:pw", "--acl-rules", LOCK_RULES)
    yield s
    s.stop()


@pytest.fixture(scope="session")
def replicated():
    """A master with a replica (r1): tests/nginx/test_failover.py stops it."""
    s = Servers(1, "--replicas", "1")
    yield s
    s.stop()


@pytest.fixture(scope="session")
def valkey_aof():
    """Valkey 9 (WAITAOF) with appendonly, and a replica."""
    server = subprocess.run(
        [str(REPO / "scripts" / "valkey-server.sh")],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    s = Servers(1, "--aof", "--replicas", "1", server=server)
    yield s
    s.stop()


@pytest.fixture(scope="session")
def guarded3():
    """Three masters tests/nginx/test_failover.py restarts (restart_guard)."""
    s = Servers(3)
    yield s
    s.stop()


@pytest.fixture(scope="session")
def resolver():
    r = Resolver()
    yield r
    r.stop()


def by_name(url: str) -> str:
    return url.replace("127.0.0.1", "localhost")


@pytest.fixture(scope="session")
def ngx(servers3, servers5, servers_pw, tls1, mtls1, tls_wrong_host,
        tls_untrusted, resolver, cluster3, sentinels, acl_server, replicated,
        valkey_aof, guarded3):  # fmt: skip
    tree = os.environ.get("HRL_NGX_TREE")
    if not tree:
        pytest.fail("HRL_NGX_TREE is not set: run tests/nginx/run.sh")
    # What lua_ssl_trusted_certificate names: the CAs of every TLS fixture
    # but tls_untrusted's.
    trusted = Path(
        tempfile.mkdtemp(prefix="hrlngx-ca.", dir=os.environ.get("HRL_NGX_TMP"))
    )
    bundle = trusted / "trusted.pem"
    bundle.write_text(
        "".join(
            (Path(s.tls_dir) / "ca.crt").read_text()
            for s in (tls1, mtls1, tls_wrong_host)
        )
    )
    os.chmod(trusted, 0o755)
    server = Nginx(
        tree,
        {
            "HRL_NGX_URLS3": ",".join(servers3.urls),
            "HRL_NGX_URLS5": ",".join(servers5.urls),
            "HRL_NGX_URLS_PW": ",".join(servers_pw.urls),
            "HRL_NGX_UNIX3": ",".join(servers3.unix_urls),
            "HRL_NGX_TLS": by_name(tls1.tls_urls[0]),
            "HRL_NGX_TLS_IP": tls1.tls_urls[0],
            "HRL_NGX_TLS_UNTRUSTED": by_name(tls_untrusted.tls_urls[0]),
            "HRL_NGX_TLS_WRONG_HOST": by_name(tls_wrong_host.tls_urls[0]),
            "HRL_NGX_MTLS": by_name(mtls1.tls_urls[0]),
            "HRL_NGX_MTLS_DIR": mtls1.tls_dir,
            "HRL_NGX_CLUSTER": cluster3.cluster_url,
            "HRL_NGX_SENTINEL": sentinels.sentinel_url,
            "HRL_NGX_ACL": f"redis://locker:pw@127.0.0.1:{acl_server.ports[0]}",
            "HRL_NGX_REPLICATED": replicated.urls[0],
            "HRL_NGX_VALKEY": valkey_aof.urls[0],
            "HRL_NGX_GUARD3": ",".join(guarded3.urls),
        },
        resolver=resolver.port,
        trusted=str(bundle),
    )
    server.initial_workers = server.workers()
    try:
        yield server
    finally:
        server.stop()
