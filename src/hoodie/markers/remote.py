"""Timeline-server-based markers, the writer's side: a marker is a request to the timeline
server (``POST /v1/hoodie/marker/create``), which batches the names of many tasks into a
few ``MARKERS<n>`` files and answers once the name is written.

If the server cannot be reached or answers an error after the bounded retries, the marker
is created directly instead (:class:`~hoodie.markers.direct.DirectMarkers`) and the write
goes on; the commit and rollback read both kinds. This module owns the client and the
fallback; it must not know how the server stores the names.
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
from hoodie.layout import marker_name
from hoodie.markers.direct import DirectMarkers
from hoodie.storage.base import Storage

log = logging.getLogger(__name__)

MARKER_CREATE = "/v1/hoodie/marker/create"
MARKER_CREATE_ALL = "/v1/hoodie/marker/create-all"
# Marker names a create-all request carries at most (well inside the server's body limit).
CHUNK = 256
TOKEN_HEADER = "X-Hoodie-Token"

# Servers a call of this process failed on after its retries: their markers are direct.
_DOWN: set[tuple[str, int, str]] = set()
_CONNECTIONS = threading.local()
# Markers this process has had made, per marker directory: the markers of a task's
# buckets are asked for together before the first file is written (create_all), and a
# handle's own create then finds its marker made.
_MADE: dict[str, set[str]] = {}
_MAX_DIRS = 64
_MADE_LOCK = threading.Lock()


@dataclass(frozen=True)
class ServerAddress:
    """Where a timeline server listens, and what a client sends it."""

    host: str
    port: int
    token: str = field(default="", repr=False)
    timeout_s: float = 10.0
    retries: int = 3
    retry_interval_s: float = 0.1

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
        )


class ServerCallError(HoodieError):
    """A timeline-server call failed after its retries (the message says how)."""


def call_server(address: ServerAddress, method: str, path: str, params: dict[str, str], body: object = None) -> object:
    """One JSON call (``body``: sent as JSON) with bounded retries on connection errors and
    5xx answers; a 4xx answer is not retried. Raises :class:`ServerCallError` naming the
    server and path."""
    payload = json.dumps(body).encode() if body is not None else None
    query = urllib.parse.urlencode(params)
    target = f"{path}?{query}" if query else path
    last = ""
    for attempt in range(address.retries + 1):
        if attempt:
            time.sleep(address.retry_interval_s * attempt)
        try:
            status, answer = _request(address, method, target, payload)
        except (OSError, http.client.HTTPException) as e:
            _drop_connection(address)
            last = f"{type(e).__name__}: {e}"
            continue
        if status == 200:
            return json.loads(answer)
        last = f"HTTP {status}: {answer[:200].decode('utf-8', 'replace')}"
        if status < 500:
            break
    raise ServerCallError(f"timeline server {address.host}:{address.port} {method} {path} failed: {last}")


def _request(address: ServerAddress, method: str, target: str, payload: bytes | None) -> tuple[int, bytes]:
    conn = _connection(address)
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


@dataclass(frozen=True)
class TimelineServerMarkers:
    """Markers of one instant created through a timeline server, direct on failure."""

    storage: Storage
    base_path: str
    instant: str
    server: ServerAddress

    @property
    def direct(self) -> DirectMarkers:
        return DirectMarkers(self.storage, self.base_path, self.instant)

    def create(self, partition_path: str, data_file_name: str, io_type: str) -> None:
        name = marker_name(partition_path, data_file_name, io_type)
        marker_dir = self.direct.marker_dir
        with _MADE_LOCK:
            if name in _MADE.get(marker_dir, ()):
                return  # made by create_all
        if self.server.identity not in _DOWN:
            try:
                # False: the name was there already (a retried task attempt), as for direct markers
                call_server(self.server, "POST", MARKER_CREATE, {"markerdirpath": marker_dir, "markername": name})
                return
            except ServerCallError as e:
                self._went_down(e)
        self.direct.create(partition_path, data_file_name, io_type)

    def create_all(self, markers: list[tuple[str, str, str]]) -> None:
        """Make the markers (partition, data file name, IO type) of several files at
        once, before any of the files is written: one request per :data:`CHUNK` names
        (``/v1/hoodie/marker/create-all``), answered by one of the server's batches,
        instead of a request and a batch each. If the server fails, the rest are made
        directly."""
        marker_dir = self.direct.marker_dir
        names = [marker_name(*m) for m in markers]
        made: set[str] = set()
        for start in range(0, len(names), CHUNK):
            if self.server.identity in _DOWN:
                break
            chunk = names[start : start + CHUNK]
            try:
                call_server(self.server, "POST", MARKER_CREATE_ALL, {}, {"markerdirpath": marker_dir, "markernames": chunk})
            except ServerCallError as e:
                self._went_down(e)
                break
            made.update(chunk)
        with _MADE_LOCK:
            if marker_dir not in _MADE and len(_MADE) >= _MAX_DIRS:
                _MADE.clear()  # a long-lived worker writes many instants
            _MADE.setdefault(marker_dir, set()).update(made)
        for marker, name in zip(markers, names):
            if name not in made:
                self.direct.create(*marker)

    def _went_down(self, error: ServerCallError) -> None:
        """From now on this process makes direct markers instead of calling the server
        (as Hudi's views switch to their local secondary for good), and says so once."""
        if self.server.identity not in _DOWN:
            _DOWN.add(self.server.identity)
            log.warning("%s; creating markers directly instead", error)
