"""Calls to a timeline server: where it listens (:class:`ServerAddress`), and a client of
one server run (:class:`ServerClient`) making JSON calls with bounded retries over
kept-alive connections.

A call, its retries included, ends within the address's ``timeout_s``
(``hoodie.filesystem.view.remote.timeout.secs``): a server that accepts connections but
stops answering (stopped, swapped out, deadlocked) costs a write that long once, then the
clients fall back as for a server that is gone. A call that got no answer in time is not
retried: asking again would wait as long again.

A client belongs to whoever made it (the write client, a Spark job's driver, the helper
running a task on an executor): it holds its connections (one per thread), whether the
server failed it for good (its users then use their fallbacks, and say so once), a pool
for calls made in the background and what its users keep per client; :meth:`ServerClient.close`
ends them, and nothing of it outlives its owner. A copy sent to another process (a task)
starts afresh there. Both users of the server use it, the marker client
(:mod:`hoodie.markers.remote`) and the remote file-system view
(:mod:`hoodie.table.remote_view`); this module knows nothing of what they ask.
"""
from __future__ import annotations

import http.client
import json
import logging
import threading
import time
import urllib.parse
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, TypeVar

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
# Threads of a client's background pool (marker requests sent ahead of the files).
BACKGROUND_THREADS = 8
T = TypeVar("T")


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


class ServerCallError(HoodieError):
    """A timeline-server call failed after its retries (the message says how); ``status``
    is the server's last answer (None: no answer), ``reason`` its one-line error."""

    def __init__(self, message: str, status: int | None = None, reason: str = "") -> None:
        super().__init__(message)
        self.status = status
        self.reason = reason


class ServerClient:
    """A client of the timeline server run at ``address`` (see the module docstring);
    a context manager that closes it."""

    def __init__(self, address: ServerAddress) -> None:
        self.address = address
        self._lock = threading.Lock()
        self._connections: dict[int, http.client.HTTPConnection] = {}  # by thread
        # Fallbacks announced since a call failed after its retries: once down, the users
        # go to their fallback for good (as Hudi's views switch to their local secondary),
        # so an unreachable server costs one round of retries per client.
        self._down: set[str] | None = None
        self._pool: ThreadPoolExecutor | None = None
        self._kept: dict[str, Any] = {}

    def __reduce__(self) -> tuple[type[ServerClient], tuple[ServerAddress]]:
        return ServerClient, (self.address,)  # a copy elsewhere starts afresh

    def __enter__(self) -> ServerClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def is_down(self) -> bool:
        """Whether a call of this client already failed for good."""
        return self._down is not None

    def went_down(self, error: ServerCallError, fallback: str) -> None:
        """Record that the server failed; warn once per fallback (``"creating markers
        directly"``) what failed and what happens instead."""
        with self._lock:
            said = self._down = self._down if self._down is not None else set()
            if fallback in said:
                return
            said.add(fallback)
        log.warning("%s; %s instead", error, fallback)

    def kept(self, key: str, make: Callable[[], T]) -> T:
        """What a user of the client keeps for as long as the client lives (made by
        ``make`` on first use): the marker client's markers made and under way."""
        with self._lock:
            if key not in self._kept:
                self._kept[key] = make()
            value: T = self._kept[key]
            return value

    def submit(self, fn: Callable[..., T], *args: object) -> Future[T]:
        """Run ``fn`` on the client's background pool (made on first use, ended by close)."""
        with self._lock:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(BACKGROUND_THREADS, thread_name_prefix="hoodie-server-calls")
            return self._pool.submit(fn, *args)

    def close(self) -> None:
        """Wait for the background calls, end the pool and close every connection (a
        later call opens what it needs again: a task's copy may serve several tasks)."""
        with self._lock:
            pool, self._pool = self._pool, None
        if pool is not None:
            pool.shutdown(wait=True)
        with self._lock:
            connections, self._connections = list(self._connections.values()), {}
            self._kept.clear()
        for conn in connections:
            conn.close()

    def call(self, method: str, path: str, params: dict[str, str], body: object = None) -> object:
        """One JSON call (``body``: sent as JSON) within ``address.timeout_s``, with bounded
        retries on connection errors and 5xx answers; a 4xx answer or no answer in time is
        not retried. Raises :class:`ServerCallError` naming the server and path."""
        address = self.address
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
                status, answer = self._request(method, target, payload, deadline - time.monotonic())
            except TimeoutError:
                self._drop_connection()
                last = f"no answer within {address.timeout_s:g} s ({o.VIEW_REMOTE_TIMEOUT_SECS.key})"
                break
            except (OSError, http.client.HTTPException) as e:
                self._drop_connection()
                last = f"{type(e).__name__}: {e}"
                continue
            if status == 200:
                return json.loads(answer)
            reason = _error_text(answer)
            last = f"HTTP {status}: {reason}"
            if status < 500 or status == STATUS_FULL:
                break
        raise ServerCallError(f"timeline server {address.host}:{address.port} {method} {path} failed: {last}", status, reason)

    def _request(self, method: str, target: str, payload: bytes | None, seconds: float) -> tuple[int, bytes]:
        """One attempt; each wait on the socket (connect, send, each read) ends after
        ``seconds``, what is left of the call's time (a server answering byte by byte is
        not one this module guards against)."""
        if seconds <= 0:
            raise TimeoutError
        conn = self._connection()
        conn.timeout = seconds
        if conn.sock is not None:
            conn.sock.settimeout(seconds)
        headers = {TOKEN_HEADER: self.address.token} if self.address.token else {}
        if payload is not None:
            headers["Content-Type"] = "application/json"
        conn.request(method, target, body=payload if payload is not None else (b"" if method == "POST" else None), headers=headers)
        response = conn.getresponse()
        return response.status, response.read()

    def _connection(self) -> http.client.HTTPConnection:
        """The calling thread's kept-alive connection."""
        thread = threading.get_ident()
        with self._lock:
            conn = self._connections.get(thread)
            if conn is None:
                conn = self._connections[thread] = http.client.HTTPConnection(self.address.host, self.address.port, timeout=self.address.timeout_s)
            return conn

    def _drop_connection(self) -> None:
        with self._lock:
            conn = self._connections.pop(threading.get_ident(), None)
        if conn is not None:
            conn.close()


def call_server(address: ServerAddress, method: str, path: str, params: dict[str, str], body: object = None) -> object:
    """One call through a client of its own (closed after): for a single question, such
    as whether a server is up."""
    with ServerClient(address) as client:
        return client.call(method, path, params, body)


def _error_text(answer: bytes) -> str:
    """The server's one-line reason (``{"error": ...}``), else the answer's start."""
    try:
        error = json.loads(answer).get("error")
    except (ValueError, AttributeError):
        error = None
    return error[:1000] if isinstance(error, str) else answer[:200].decode("utf-8", "replace")
