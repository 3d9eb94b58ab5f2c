"""Timeline-server-based markers, the writer's side: a marker is a request to the timeline
server (``POST /v1/hoodie/marker/create``), which batches the names of many tasks into a
few ``MARKERS<n>`` files and answers once the name is written.

If the server cannot be reached, answers an error after the bounded retries or gives no
answer in time, the marker is created directly instead
(:class:`~hoodie.markers.direct.DirectMarkers`) and the write goes on; the commit and
rollback read both kinds. A marker the server refuses because its instant has more
markers than the server keeps for one fails the write, with the server's reason (which
names the option that sets the bound). This module owns the client and the fallback; it
must not know how the server stores the names.
"""
from __future__ import annotations

import threading
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass

from hoodie.errors import WriteError
from hoodie.layout import marker_name
from hoodie.markers.direct import DirectMarkers
from hoodie.server_calls import STATUS_FULL, ServerAddress, ServerCallError, call_server, is_down, went_down
from hoodie.storage.base import Storage

MARKER_CREATE = "/v1/hoodie/marker/create"
MARKER_CREATE_ALL = "/v1/hoodie/marker/create-all"
# Marker names a create-all request carries at most (well inside the server's body limit).
CHUNK = 256

# Markers this process has had made, per marker directory: the markers of a task's
# buckets are asked for together before the first file is written (create_all), and a
# handle's own create then finds its marker made.
_MADE: dict[str, set[str]] = {}
_MAX_DIRS = 64
_MADE_LOCK = threading.Lock()
# Requests for markers on their way (request_all), by (marker directory, marker name): a
# handle's create waits for the one its marker is in.
_PENDING: dict[tuple[str, str], Future[None]] = {}
_REQUESTS: list[ThreadPoolExecutor] = []


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
            pending = _PENDING.pop((marker_dir, name), None)
        if pending is not None:
            pending.result()  # made by it, through the server or directly; its error if neither
            return
        with _MADE_LOCK:
            if name in _MADE.get(marker_dir, ()):
                return  # made by create_all
        if not is_down(self.server):
            try:
                # False: the name was there already (a retried task attempt), as for direct markers
                call_server(self.server, "POST", MARKER_CREATE, {"markerdirpath": marker_dir, "markername": name})
                return
            except ServerCallError as e:
                self._failed(e)
        self.direct.create(partition_path, data_file_name, io_type)

    def request_all(self, markers: list[tuple[str, str, str]]) -> None:
        """:meth:`create_all` in the background: the caller goes on (merging the rows of
        the first file, say) while the server writes the batch, and :meth:`create` of each
        of the markers waits for it, so no data file is written before its marker."""
        marker_dir = self.direct.marker_dir
        with _MADE_LOCK:
            if not _REQUESTS:
                _REQUESTS.append(ThreadPoolExecutor(8, thread_name_prefix="hoodie-marker-requests"))
            future = _REQUESTS[0].submit(self.create_all, markers)
            for marker in markers:
                _PENDING[(marker_dir, marker_name(*marker))] = future

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
            if is_down(self.server):
                break
            chunk = names[start : start + CHUNK]
            try:
                call_server(self.server, "POST", MARKER_CREATE_ALL, {}, {"markerdirpath": marker_dir, "markernames": chunk})
            except ServerCallError as e:
                self._failed(e)
                break
            made.update(chunk)
        with _MADE_LOCK:
            if marker_dir not in _MADE and len(_MADE) >= _MAX_DIRS:
                _MADE.clear()  # a long-lived worker writes many instants
                for key in [k for k, f in _PENDING.items() if f.done()]:
                    del _PENDING[key]  # of tasks that failed before their files
            _MADE.setdefault(marker_dir, set()).update(made)
        for marker, name in zip(markers, names):
            if name not in made:
                self.direct.create(*marker)

    def _failed(self, error: ServerCallError) -> None:
        """From now on this process makes direct markers instead of calling the server;
        unless the server refused the marker for a bound of its own (the instant has more
        markers than it keeps for one): then the write stops, naming the bound."""
        if error.status == STATUS_FULL:
            raise WriteError(f"timeline server {self.server.host}:{self.server.port} refused a marker of instant {self.instant}: {error.reason}") from None
        went_down(self.server, error, "creating markers directly")
