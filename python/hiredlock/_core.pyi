# Type stubs for the C extension hiredlock._core (bindings/python/*.c).
import builtins
import os
import ssl
from collections.abc import Callable, Sequence
from types import TracebackType
from typing import Any, Literal, TypeVar

_L = TypeVar("_L", bound=Lock)

__version__: str
NAME_MAX: int
MASTERS_MAX: int
OPTIONS: dict[str, float | int | str | bool | None]
FENCED_WRITE_SCRIPT: str
NOTICE_MORE: int
NOTICE_SEND: int
NOTICE_READY: int
NOTICE_HANDOFF: int
NOTICE_CLOSE: int
NOTICE_REDIRECT: int

class LockError(Exception): ...
class NotAcquired(LockError, builtins.TimeoutError): ...
class NotOwned(LockError): ...
class LockLost(NotOwned): ...
class ConnectionError(LockError, builtins.ConnectionError): ...
class PermissionDenied(LockError, builtins.PermissionError): ...

class Client:
    def __new__(
        cls,
        urls: str | Sequence[str],
        *,
        connect_timeout: float = ...,
        timeout: float = ...,
        retry_delay: float = ...,
        retry_jitter: float = ...,
        drift_factor: float = ...,
        key_prefix: str | bytes = ...,
        auto_renew: bool = ...,
        max_hold: float = ...,
        fenced: bool = ...,
        owner: str | bool | None = ...,
        slow_wait: float = ...,
        sync_replicas: int = ...,
        sync_aof: bool = ...,
        restart_guard: float = ...,
        ssl_ca_certs: str | os.PathLike[str] | None = ...,
        ssl_ca_path: str | os.PathLike[str] | None = ...,
        ssl_certfile: str | os.PathLike[str] | None = ...,
        ssl_keyfile: str | os.PathLike[str] | None = ...,
        ssl_cert_reqs: str | ssl.VerifyMode = ...,
        ssl_check_hostname: bool = ...,
    ) -> Client: ...
    @property
    def masters(self) -> tuple[str, ...]: ...
    @property
    def quorum(self) -> int: ...
    @property
    def _channel(self) -> bytes: ...
    def _master_info(
        self, i: int
    ) -> tuple[str | None, int, str | None, dict[str, object] | None]: ...
    def _share_channel(self, other: Client) -> bool: ...
    def _subscriber_key(self, i: int) -> bytes: ...
    def inspect(self, name: str | bytes) -> dict[str, Any]: ...
    def stats(self) -> dict[str, Any]: ...
    def _take_events(self) -> tuple[list[dict[str, Any]], int]: ...
    def _flush_events(self) -> None: ...
    # Client.lock (hiredlock.Client declares it): makes the class
    # _set_lock_class registered.
    def _lock(
        self,
        name: str | bytes,
        ttl: float = ...,
        *,
        timeout: float = ...,
        blocking: bool = ...,
        auto_renew: bool | None = ...,
        max_hold: float | None = ...,
        on_lost: Callable[[Any], object] | None = ...,
        fenced: bool | None = ...,
        sync_replicas: int | None = ...,
        sync_aof: bool | None = ...,
        owner: str | bool | None = ...,
    ) -> Any: ...

class Lock:
    def __new__(
        cls,
        client: Client,
        name: str | bytes,
        ttl: float = ...,
        *,
        timeout: float = ...,
        blocking: bool = ...,
        auto_renew: bool | None = ...,
        max_hold: float | None = ...,
        on_lost: Callable[[Lock], object] | None = ...,
        fenced: bool | None = ...,
        owner: str | bool | None = ...,
        sync_replicas: int | None = ...,
        sync_aof: bool | None = ...,
        mode: Literal["lock", "read", "write", "permit"] | None = ...,
        permits: int | None = ...,
    ) -> Lock: ...
    def acquire(self, blocking: bool = True, timeout: float = -1) -> bool: ...
    @classmethod
    def _make(
        cls: type[_L],
        client: Client,
        name: str | bytes,
        ttl: float,
        timeout: float,
        blocking: bool,
        on_lost: Callable[[Any], object] | None,
        auto_renew: bool | None,
        max_hold: float | None,
        sync_replicas: int | None,
        sync_aof: bool | None,
        fenced: bool | None,
        owner: str | bool | None,
    ) -> _L: ...
    def __enter__(self: _L) -> _L: ...
    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None: ...
    def release(self) -> None: ...
    def extend(self, ttl: float | None = None) -> None: ...
    def locked(self) -> bool: ...
    def check(self) -> None: ...
    def _begin_inspect(self) -> None: ...
    def _inspection(self) -> dict[str, Any] | None: ...
    @property
    def lost(self) -> bool: ...
    @property
    def auto_renew(self) -> bool: ...
    @property
    def on_lost(self) -> Callable[[Lock], object] | None: ...
    @property
    def validity(self) -> float: ...
    @property
    def token(self) -> str | None: ...
    @property
    def fence(self) -> int | None: ...
    @property
    def fence_key(self) -> bytes | None: ...
    @property
    def mode(self) -> Literal["lock", "read", "write", "permit"]: ...
    @property
    def permits(self) -> int | None: ...
    @property
    def permit(self) -> int | None: ...
    @property
    def ttl(self) -> float: ...
    @property
    def name(self) -> str | bytes: ...
    @property
    def key(self) -> bytes: ...
    @property
    def client(self) -> Client: ...
    @property
    def timeout(self) -> float: ...
    @property
    def blocking(self) -> bool: ...

class Subscriber:
    """A subscriber connection's stream (the asyncio driver's listener)."""

    def __new__(cls, client: Client, i: int) -> Subscriber: ...
    def open(self) -> tuple[str | None, int, str | None, str, bool]: ...
    def start(self) -> bytes: ...
    def feed(self, data: bytes) -> tuple[int, bytes | None]: ...

def _before_fork() -> None: ...
def _after_fork_in_parent() -> None: ...
def _after_fork_in_child() -> None: ...
def _dispatch_lost() -> None: ...
def _set_lock_class(cls: type[Lock]) -> None: ...
def _set_event_sink(sink: Callable[[Client], object] | None) -> None: ...
