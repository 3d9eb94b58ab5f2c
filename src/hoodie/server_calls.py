"""Calls to a timeline server: where it listens (:class:`ServerAddress`) and one JSON call
with bounded retries (:func:`call_server`) over a kept-alive connection per thread.

A call, its retries included, ends within the address's ``timeout_s``
(``hoodie.filesystem.view.remote.timeout.secs``): a server that accepts connections but
stops answering (stopped, swapped out, deadlocked) costs a write that long once, then the
clients fall back as for a server that is gone. A call that got no answer in time is not
retried: asking again would wait as long again.

Both clients of the server use this, the marker client (:mod:`hoodie.markers.remote`) and
the remote file-system view (:mod:`hoodie.views.remote`); this module knows nothing of
what they ask.
"""
from __future__ import annotations

import http.client
import json
import logging
import threading
import time
import urllib.parse
from dataclasses import dataclass, field

from hoodie.config import options as o
from hoodie.config.options import HoodieConfig
from hoodie.errors import HoodieError

log = logging.getLogger(__name__)

TOKEN_HEADER = "X-Hoodie-Token"
# A server's answer to a request past one of its bounds (507 Insufficient Storage): not
# the server failing, so neither retried nor a reason to fall back.
STATUS_FULL = 507
# A server's answer when serving a request met trouble in the table itself (damaged or
# refused metadata, a link): not the server failing, so no reason to give up on it for
# other tables.
TABLE_TROUBLE = 422
_CONNECTIONS = threading.local()
# Server runs a call of this process failed on after its retries, with the fallbacks
# already announced: clients go to their fallback for good (as Hudi's views switch to
# their local secondary), so an unreachable server costs one round of retries.
_DOWN: dict[tuple[str, int, str], set[str]] = {}
_DOWN_LOCK = threading.Lock()


@dataclass(frozen=True)
class ServerAddress:
    """Where a timeline server listens, and what a client sends it."""

    host: str
    port: int
    token: str = field(default="", repr=False)
    timeout_s: float = 10.0  # a call with its retries
    retries: int = 3
    retry_interval_s: float = 0.1
    max_retry_interval_s: float = 2.0

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    @property
    def identity(self) -> tuple[str, int, str]:
        """One server run: a server started later on the same port has another token."""
        return (self.host, self.port, self.token)

    @classmethod
    def configured(cls, host: str, port: int, token: str, config: HoodieConfig) -> ServerAddress:
        """A server address with the timeout and retries of a write's options."""
        return cls(
            host,
            port,
            token,
            timeout_s=float(config.get(o.VIEW_REMOTE_TIMEOUT_SECS)),
            retries=config.get(o.VIEW_REMOTE_RETRY_MAX),
            retry_interval_s=config.get(o.VIEW_REMOTE_RETRY_INTERVAL_MS) / 1000,
            max_retry_interval_s=config.get(o.VIEW_REMOTE_RETRY_MAX_INTERVAL_MS) / 1000,
        )


def is_down(address: ServerAddress) -> bool:
    """Whether a call of this process to this server run already failed for good."""
    return address.identity in _DOWN


def went_down(address: ServerAddress, error: ServerCallError, fallback: str) -> None:
    """Record that ``address`` failed; warn once per fallback (``"creating markers
    directly"``) what failed and what happens instead."""
    with _DOWN_LOCK:
        said = _DOWN.setdefault(address.identity, set())
        if fallback in said:
            return
        said.add(fallback)
    log.warning("%s; %s instead", error, fallback)


class ServerCallError(HoodieError):
    """A timeline-server call failed after its retries (the message says how); ``status``
    is the server's last answer (None: no answer), ``reason`` its one-line error."""

    def __init__(self, message: str, status: int | None = None, reason: str = "") -> None:
        super().__init__(message)
        self.status = status
        self.reason = reason


def call_server(address: ServerAddress, method: str, path: str, params: dict[str, str], body: object = None) -> object:
    """One JSON call (``body``: sent as JSON) within ``address.timeout_s``, with bounded
    retries on connection errors and 5xx answers; a 4xx answer or no answer in time is not
    retried. Raises :class:`ServerCallError` naming the server and path."""
    payload = json.dumps(body).encode() if body is not None else None
    query = urllib.parse.urlencode(params)
    target = f"{path}?{query}" if query else path
    deadline = time.monotonic() + address.timeout_s
    last, status, reason = "", None, ""
    for attempt in range(address.retries + 1):
        if attempt:
            wait = min(address.retry_interval_s * attempt, address.max_retry_interval_s)
            if time.monotonic() + wait >= deadline:
                break
            time.sleep(wait)
        status = None
        try:
            status, answer = _request(address, method, target, payload, deadline - time.monotonic())
        except TimeoutError:
            _drop_connection(address)
            last = f"no answer within {address.timeout_s:g} s ({o.VIEW_REMOTE_TIMEOUT_SECS.key})"
            break
        except (OSError, http.client.HTTPException) as e:
            _drop_connection(address)
            last = f"{type(e).__name__}: {e}"
            continue
        if status == 200:
            return json.loads(answer)
        reason = _error_text(answer)
        last = f"HTTP {status}: {reason}"
        if status < 500 or status == STATUS_FULL:
            break
    raise ServerCallError(f"timeline server {address.host}:{address.port} {method} {path} failed: {last}", status, reason)


def _error_text(answer: bytes) -> str:
    """The server's one-line reason (``{"error": ...}``), else the answer's start."""
    try:
        error = json.loads(answer).get("error")
    except (ValueError, AttributeError):
        error = None
    return error[:1000] if isinstance(error, str) else answer[:200].decode("utf-8", "replace")


def _request(address: ServerAddress, method: str, target: str, payload: bytes | None, seconds: float) -> tuple[int, bytes]:
    """One attempt; each wait on the socket (connect, send, each read) ends after
    ``seconds``, what is left of the call's time (a server answering byte by byte is not
    one this module guards against)."""
    if seconds <= 0:
        raise TimeoutError
    conn = _connection(address)
    conn.timeout = seconds
    if conn.sock is not None:
        conn.sock.settimeout(seconds)
    headers = {TOKEN_HEADER: address.token} if address.token else {}
    if payload is not None:
        headers["Content-Type"] = "application/json"
    conn.request(method, target, body=payload if payload is not None else (b"" if method == "POST" else None), headers=headers)
    response = conn.getresponse()
    return response.status, response.read()


def _connection(address: ServerAddress) -> http.client.HTTPConnection:
    """A kept-alive connection per thread and server."""
    pool: dict[tuple[str, int], http.client.HTTPConnection] = getattr(_CONNECTIONS, "pool", None) or {}
    _CONNECTIONS.pool = pool
    key = (address.host, address.port)
    conn = pool.get(key)
    if conn is None:
        conn = pool[key] = http.client.HTTPConnection(address.host, address.port, timeout=address.timeout_s)
    return conn


def _drop_connection(address: ServerAddress) -> None:
    pool = getattr(_CONNECTIONS, "pool", {})
    conn = pool.pop((address.host, address.port), None)
    if conn is not None:
        conn.close()
