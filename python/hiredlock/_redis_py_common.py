"""What hiredlock.redis_py.Lock and AsyncLock share: redis-py's words and
exceptions, a hold's token (per thread or shared), the mapping of redis-py's
arguments onto a hiredlock lock, and one hiredlock client per distinct
redis-py configuration."""

from __future__ import annotations

import threading
from typing import Any, Callable

try:
    from redis.exceptions import ConnectionError as RedisConnectionError
    from redis.exceptions import LockError, LockNotOwnedError
except ImportError as err:  # pragma: no cover - redis-py is not installed
    raise ImportError(
        "hiredlock.redis_py is for redis-py users: pip install redis"
    ) from err

from . import _core, _from_redis
from ._client import DEFAULT_TTL

# redis-py's messages, word for word, for the cases it has them.
NOT_ACQUIRED = "Unable to acquire lock within the time specified"
RELEASE_UNLOCKED = "Cannot release a lock that's not owned or is already unlocked."
RELEASE_NOT_OWNED = "Cannot release a lock that's no longer owned"
EXTEND_UNLOCKED = "Cannot extend an unlocked lock"
EXTEND_NO_TIMEOUT = "Cannot extend a lock with no timeout"
EXTEND_NOT_OWNED = "Cannot extend a lock that's no longer owned"
REACQUIRE_UNLOCKED = "Cannot reacquire an unlocked lock"
REACQUIRE_NO_TIMEOUT = "Cannot reacquire a lock with no timeout"
REACQUIRE_NOT_OWNED = "Cannot reacquire a lock that's no longer owned"
EXIT_WARNING = "Lock was unlocked or no longer owned when exiting context manager."

TOKEN_REFUSED = (
    "hiredlock.redis_py refuses token=: every hold gets a fresh random token "
    "of hiredlock's own, and a waiting queue keyed by a token that two "
    "holders share would hand both of them the lock (docs/MIGRATING.md)"
)
# Longest wait the core takes (2^31 - 1 ms); a longer one waits until free.
WAIT_MAX = 2147483.647
# The lease a lock with timeout=None gets (seconds).
DEFAULT_LEASE_TTL: float = DEFAULT_TTL


def lock_error(cls: type[LockError], message: str, name: Any) -> LockError:
    """redis-py's LockError (or subclass) with lock_name where the installed
    redis-py has it."""
    try:
        return cls(message, lock_name=name)
    except TypeError:  # redis-py before lock_name
        return cls(message)


def translate(err: _core.LockError, name: Any, not_owned: str) -> Exception:
    """A hiredlock failure as the redis-py exception a caller catches:
    NotOwned (and LockLost) as LockNotOwnedError with redis-py's message,
    too few masters reached as redis.exceptions.ConnectionError, any other
    as LockError; hiredlock's own message stays readable from __cause__."""
    if isinstance(err, _core.NotOwned):
        return lock_error(LockNotOwnedError, f"{not_owned} ({err})", name)
    if isinstance(err, _core.ConnectionError):
        return RedisConnectionError(str(err))
    return lock_error(LockError, str(err), name)


def is_not_held(err: BaseException) -> bool:
    """The core's "not held": the object had no hold left to release."""
    return isinstance(err, _core.NotOwned) and str(err).startswith("not held")


def encode_name(redis: Any, name: Any) -> bytes:
    """The key redis-py would write for name: its client's encoder, which
    takes str (in the client's encoding), bytes, memoryview and numbers."""
    get_encoder = getattr(redis, "get_encoder", None)
    if get_encoder is None:
        get_encoder = redis.connection_pool.get_encoder
    return bytes(get_encoder().encode(name))


def ttl_of(timeout: Any, lease_ttl: float) -> tuple[float, bool]:
    """(ttl, auto_renew): redis-py's timeout is the TTL; none at all (None
    or 0, which redis-py writes without an expiry) is a managed lease of
    lease_ttl seconds, renewed while held."""
    if timeout is None or timeout == 0:
        return lease_ttl, True
    return timeout, False


def wait_of(blocking: bool, blocking_timeout: Any) -> tuple[bool, float]:
    """(blocking, timeout) for hiredlock's acquire from redis-py's: no
    blocking_timeout waits until acquired; a negative one makes one attempt,
    as redis-py's loop does."""
    if not blocking:
        return False, -1
    if blocking_timeout is None:
        return True, -1
    wait = max(0.0, float(blocking_timeout))
    return (True, -1) if wait > WAIT_MAX else (True, wait)


def extend_ttl(validity: float, additional_time: float, replace_ttl: bool) -> float:
    """The TTL an extend sets. redis-py adds additional_time to the key's
    PTTL; hiredlock adds it to the validity left (the TTL less the drift
    allowance, which no master's PTTL is below), the same on every master."""
    if replace_ttl:
        return additional_time
    return max(validity, 0.0) + additional_time


class _HoldState:
    """A hold as redis-py's ``lock.local`` shows it: ``token`` (bytes, the
    value in Redis) from acquire to release, and the hiredlock lock behind
    it. ``token`` cannot be set to a value of the caller's (hiredlock makes
    its own); setting it to None forgets the hold as redis-py does: the key
    stays until its TTL (a lease's renewals stop)."""

    def __init__(self) -> None:
        self.lock: Any = None  # the hiredlock lock, made on first use
        self.loop: Any = None  # AsyncLock: the event loop it belongs to
        self._token: bytes | None = None
        self.released_maybe = False  # a cancelled release may have ended it

    @property
    def token(self) -> bytes | None:
        return self._token

    @token.setter
    def token(self, value: bytes | None) -> None:
        if value is not None and value != self._token:
            raise ValueError(TOKEN_REFUSED)
        if value is None:
            self.lock = None
            self.released_maybe = False
        self._token = value

    def held(self, token: str) -> None:
        self._token = token.encode()
        self.released_maybe = False

    def ended(self) -> None:
        self._token = None
        self.released_maybe = False


class ThreadHold(_HoldState, threading.local):
    """redis-py's default (thread_local=True): each thread sees its own."""


class SharedHold(_HoldState):
    """thread_local=False: one hold for every thread."""


class LockArgs:
    """redis-py's Lock arguments, kept as redis-py keeps them, and what
    hiredlock makes of them (the key, the TTL or lease), for
    hiredlock.redis_py.Lock and AsyncLock alike. Each binds itself to its
    client in :meth:`_bind` (the sync Lock at once, AsyncLock on a loop),
    which checks the name and TTL as hiredlock does."""

    def __init__(
        self,
        redis: Any,
        name: Any,
        timeout: float | None = None,
        sleep: float = 0.1,
        blocking: bool = True,
        blocking_timeout: float | None = None,
        thread_local: bool = True,
        raise_on_release_error: bool = True,
        *,
        fenced: bool | None = None,
        lease_ttl: float = DEFAULT_LEASE_TTL,
    ) -> None:
        self.redis = redis
        self.name = name
        self.timeout = timeout
        self.sleep = sleep
        self.blocking = blocking
        self.blocking_timeout = blocking_timeout
        self.thread_local = bool(thread_local)
        self.raise_on_release_error = raise_on_release_error
        self.fenced = fenced  # None: the client's default (configure)
        self.lease_ttl = lease_ttl
        self.local = ThreadHold() if self.thread_local else SharedHold()
        self._key = encode_name(redis, name)
        self._ttl, self._lease = ttl_of(timeout, lease_ttl)
        self._bind()

    def _bind(self) -> None:
        raise NotImplementedError


# hiredlock.Client options for every client made from a redis-py client's
# settings (redis_py.configure); they win over what redis-py says.
client_options: dict[str, Any] = {}


class ClientCache:
    """One hiredlock client per distinct redis-py configuration."""

    def __init__(self, make: Callable[..., Any]) -> None:
        self._make = make
        self._clients: dict[tuple, Any] = {}
        self._mutex = threading.Lock()

    def get(self, redis: Any) -> Any:
        url = _from_redis.url_of(redis)
        key = (url, tuple(sorted((k, repr(v)) for k, v in client_options.items())))
        with self._mutex:
            client = self._clients.get(key)
            if client is None:
                client = self._clients[key] = self._make(url, **client_options)
            return client
