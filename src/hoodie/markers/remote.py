"""Timeline-server-based markers, the writer's side: a marker is a request to the timeline
server (``POST /v1/hoodie/marker/create``), which batches the names of many tasks into a
few ``MARKERS<n>`` files and answers once the name is written.

If the server cannot be reached, answers an error after the bounded retries or gives no
answer in time, the marker is created directly instead
(:class:`~hoodie.markers.direct.DirectMarkers`) and the write goes on; the commit and
rollback read both kinds. A marker the server refuses because its instant has more
markers than the server keeps for one fails the write, with the server's reason (which
names the option that sets the bound). The markers of several files are asked for
together in the background (:meth:`TimelineServerMarkers.request_all`); what was made and
what is under way is kept by the write's client of the server
(:class:`~hoodie.server_calls.ServerClient`), closed by its owner with the write. This
module owns the marker requests and the fallback; it must not know how the server stores
the names.
"""
from __future__ import annotations

import threading
from concurrent.futures import Future
from dataclasses import dataclass, field

from hoodie import server_api as api
from hoodie.errors import WriteError
from hoodie.layout import marker_name
from hoodie.markers.direct import DirectMarkers
from hoodie.server_calls import STATUS_FULL, ServerAddress, ServerCallError, ServerClient
from hoodie.storage.base import Storage

__all__ = ["ServerAddress", "ServerClient", "TimelineServerMarkers"]

# Marker names a create-all request carries at most (well inside the server's body limit).
CHUNK = 256
_MAX_DIRS = 64


@dataclass
class _MarkersAsked:
    """What one client had made: the markers of a task's buckets are asked for together
    before the first file is written (create_all), and a handle's own create then finds
    its marker made, or waits for the request it is in."""

    made: dict[str, set[str]] = field(default_factory=dict)  # by marker directory
    # requests on their way (request_all), by (marker directory, marker name)
    pending: dict[tuple[str, str], Future[None]] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)


@dataclass(frozen=True)
class TimelineServerMarkers:
    """Markers of one instant created through a timeline server, direct on failure."""

    storage: Storage
    base_path: str
    instant: str
    client: ServerClient

    @property
    def server(self) -> ServerAddress:
        return self.client.address

    @property
    def direct(self) -> DirectMarkers:
        return DirectMarkers(self.storage, self.base_path, self.instant)

    @property
    def _asked(self) -> _MarkersAsked:
        return self.client.kept("markers", _MarkersAsked)

    def create(self, partition_path: str, data_file_name: str, io_type: str) -> None:
        name = marker_name(partition_path, data_file_name, io_type)
        marker_dir = self.direct.marker_dir
        asked = self._asked
        with asked.lock:
            pending = asked.pending.pop((marker_dir, name), None)
        if pending is not None:
            pending.result()  # made by it, through the server or directly; its error if neither
            return
        with asked.lock:
            if name in asked.made.get(marker_dir, ()):
                return  # made by create_all
        if not self.client.is_down:
            try:
                # False: the name was there already (a retried task attempt), as for direct markers
                api.call(self.client, api.MARKER_CREATE, {"markerdirpath": marker_dir, "markername": name})
                return
            except ServerCallError as e:
                self._failed(e)
        self.direct.create(partition_path, data_file_name, io_type)

    def request_all(self, markers: list[tuple[str, str, str]]) -> None:
        """:meth:`create_all` in the background: the caller goes on (merging the rows of
        the first file, say) while the server writes the batch, and :meth:`create` of each
        of the markers waits for it, so no data file is written before its marker."""
        marker_dir = self.direct.marker_dir
        asked = self._asked
        with asked.lock:
            future = self.client.submit(self.create_all, markers)
            for marker in markers:
                asked.pending[(marker_dir, marker_name(*marker))] = future

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
            if self.client.is_down:
                break
            chunk = names[start : start + CHUNK]
            try:
                api.call(self.client, api.MARKER_CREATE_ALL, {"markerdirpath": marker_dir, "markernames": chunk})
            except ServerCallError as e:
                self._failed(e)
                break
            made.update(chunk)
        asked = self._asked
        with asked.lock:
            if marker_dir not in asked.made and len(asked.made) >= _MAX_DIRS:
                asked.made.clear()  # a long-lived client writes many instants
                for key in [k for k, f in asked.pending.items() if f.done()]:
                    del asked.pending[key]  # of tasks that failed before their files
            asked.made.setdefault(marker_dir, set()).update(made)
        for marker, name in zip(markers, names):
            if name not in made:
                self.direct.create(*marker)

    def _failed(self, error: ServerCallError) -> None:
        """From now on this process makes direct markers instead of calling the server;
        unless the server refused the marker for a bound of its own (the instant has more
        markers than it keeps for one): then the write stops, naming the bound."""
        if error.status == STATUS_FULL:
            raise WriteError(f"timeline server {self.server.host}:{self.server.port} refused a marker of instant {self.instant}: {error.reason}") from None
        self.client.went_down(error, "creating markers directly")
