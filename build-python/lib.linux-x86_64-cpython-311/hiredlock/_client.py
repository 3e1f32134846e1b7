"""The Client class: the C client plus lock() and synchronized()."""

from __future__ import annotations

from typing import Callable, TypeVar, Union

from . import _core
from ._lock import Lock, synchronized_by

F = TypeVar("F", bound=Callable[..., object])
Name = Union[str, bytes]

DEFAULT_TTL: float = _core.OPTIONS["ttl"]  # the core's option table


class Client(_core.Client):
    """The Redis masters locks are taken on.

    ``Client(urls, *, connect_timeout=0.1, timeout=0.05, retry_delay=0.2,
    retry_jitter=0.1, drift_factor=0.01, key_prefix="", ssl_ca_certs=None,
    ssl_ca_path=None, ssl_certfile=None, ssl_keyfile=None,
    ssl_cert_reqs="required", ssl_check_hostname=True)``

    ``urls`` is one URL or a sequence of N URLs of independent masters
    (``redis://[[user]:password@]host[:port][/db]``,
    ``rediss://...[?ssl_option=value&...]`` for TLS, or
    ``unix://[[user]:password@]/path[?db=N]``); a lock is held when a quorum
    (N/2 + 1) granted it. Times are in seconds. The ``ssl_*`` options (named
    as redis-py names them) apply to ``rediss://`` masters, whose URL query
    may set them per master; the server's certificate is verified and must
    name the host unless told otherwise. No connection is made here:
    masters are connected on first use. A Client may be shared by threads
    and survives ``fork()`` (the child opens its own connections).
    """

    __module__ = "hiredlock"
    __slots__ = ()

    def lock(
        self,
        name: Name,
        ttl: float = DEFAULT_TTL,
        *,
        timeout: float = -1,
        blocking: bool = True,
    ) -> Lock:
        """A :class:`Lock` on ``name`` (str or bytes), not yet held.

        ``ttl`` is how long the lock lives in Redis, in seconds. ``timeout``
        and ``blocking`` bound the wait of a ``with`` block (-1: forever;
        ``blocking=False``: one attempt).
        """
        return Lock(self, name, ttl, timeout=timeout, blocking=blocking)

    def synchronized(
        self,
        name: Name,
        ttl: float = DEFAULT_TTL,
        *,
        timeout: float = -1,
        blocking: bool = True,
    ) -> Callable[[F], F]:
        """Decorator: every call of the function runs under the lock ``name``.

        Raises :class:`NotAcquired` when a call cannot acquire in time and
        :class:`NotOwned` when the lock was lost before the call returned.
        """
        # Check the arguments now, at decoration time, not at the first call.
        Lock(self, name, ttl, timeout=timeout, blocking=blocking)
        return synchronized_by(
            lambda: Lock(self, name, ttl, timeout=timeout, blocking=blocking)
        )

    def __repr__(self) -> str:
        return (
            f"<{type(self).__module__}.{type(self).__qualname__} "
            f"masters={list(self.masters)!r} quorum={self.quorum}>"
        )
