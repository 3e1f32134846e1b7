"""TLS for rediss:// masters under asyncio: the client's ssl_* settings
(read from the core, so the URL query and keyword arguments mean what they
mean to the C driver) as an ssl.SSLContext, and its failures in the words
the C driver uses ("TLS: certificate verify failed: ..."), so every
runtime reports a refused certificate the same way.

A Python without the ssl module (built without OpenSSL, or whose OpenSSL is
gone) still imports hiredlock.asyncio and locks on redis:// masters; a
rediss:// master then fails with NO_SSL, as the C driver built without
OpenSSL refuses it."""

from __future__ import annotations

import os
from typing import Any

try:
    import ssl
except ImportError:  # the _ssl extension, or the OpenSSL it links, is missing
    ssl = None  # type: ignore[assignment]

NO_SSL = "TLS: this Python has no ssl module (no rediss://)"

# OpenSSL's X509_V_ERR_HOSTNAME_MISMATCH and X509_V_ERR_IP_ADDRESS_MISMATCH:
# Python words these itself; the C driver says what OpenSSL says.
_MISMATCH = {62: "hostname mismatch", 64: "IP address mismatch"}


class TLSSetupError(OSError):
    """The settings cannot make a context (a missing CA file, say): the
    master fails with this message, as in the C driver."""


def _load(what: str, path: str, load: Any) -> None:
    try:
        load()
    except OSError as err:
        why = os.strerror(err.errno) if err.errno else str(err)
        reason = getattr(err, "reason", None)
        if isinstance(err, ssl.SSLError) and reason:
            why = reason.replace("_", " ").lower()
        raise TLSSetupError(f"TLS: {what} {path}: {why}") from None


def context(settings: dict[str, Any]) -> ssl.SSLContext:
    """An SSLContext for settings (bindings/python/client.c's dict)."""
    if ssl is None:
        raise TLSSetupError(NO_SSL)
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    if settings["cert_reqs"] == "none":
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_NONE
    else:
        # "optional" is "required" for a client: a server always presents
        # a certificate (as in the C driver and Python's ssl module).
        ctx.check_hostname = bool(settings["check_hostname"])
        ctx.verify_mode = ssl.CERT_REQUIRED
        cafile, capath = settings["ca_certs"], settings["ca_path"]
        if cafile is not None:
            _load("ssl_ca_certs", cafile, lambda: ctx.load_verify_locations(cafile))
        if capath is not None:
            _load(
                "ssl_ca_path", capath, lambda: ctx.load_verify_locations(capath=capath)
            )
        if cafile is None and capath is None:
            ctx.load_default_certs()
    certfile = settings["certfile"]
    if certfile is not None:
        keyfile = settings["keyfile"]
        _load("ssl_certfile", certfile, lambda: ctx.load_cert_chain(certfile, keyfile))
    return ctx


def failure_message(err: BaseException) -> str | None:
    """A TLS handshake failure in the C driver's words; None when err is
    not one (a plain connection error)."""
    if isinstance(err, TLSSetupError):
        return str(err)
    if ssl is None:
        return None
    if isinstance(err, ssl.SSLCertVerificationError):
        why = _MISMATCH.get(err.verify_code, err.verify_message)
        return f"TLS: certificate verify failed: {why}"
    if isinstance(err, ssl.SSLError):
        reason = err.reason or str(err)
        return f"TLS: {reason.replace('_', ' ').lower()}"
    return None
