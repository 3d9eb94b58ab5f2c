"""File-system views a timeline server answers: the remote view, the remote-first view
with a local secondary, and the JSON form (Hudi's DTOs) both sides speak.

Every request names the table (``basepath``) and carries the client's ``lastinstantts``
and ``timelinehash`` (:meth:`~hoodie.timeline.active.ActiveTimeline.timeline_hash`), so a
server behind the client syncs before it answers. Paths in an answer are never trusted:
each file is rebuilt under the client's own base path from its checked partition and file
name, so a server cannot make a client read outside its table.

:class:`PriorityFileSystemView` (Hudi's ``PriorityBasedFileSystemView``) asks the server
first; once a call fails after its retries, it and every later view made with the same
client (:class:`~hoodie.server_calls.ServerClient`, its owner's: a write's) use a local
view built from storage, and the failure is logged once.
This module owns the client side; what the server keeps is ``timeline_server``'s.
"""
from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, TypeVar

from hoodie import server_api as api
from hoodie.errors import FormatError, UnsafePathError
from hoodie.layout import parse_base_file_name, parse_log_file_name
from hoodie.server_calls import TABLE_TROUBLE, ServerAddress, ServerCallError, ServerClient
from hoodie.storage.paths import check_name, check_partition_path, under
from hoodie.table.file_group import BaseFile, FileGroup, FileSlice, LogExtent, LogFile
from hoodie.table.fs_view import FileSystemView, MissingFile, PartitionLister
from hoodie.timeline.active import ActiveTimeline
from hoodie.timeline.instant import Action, Instant

# (the paths, for callers that time or count a call by path)
LATEST_SLICES = api.LATEST_SLICES.path
LATEST_SLICES_OF = api.LATEST_SLICES_OF.path
ALL_PARTITIONS = api.ALL_PARTITIONS.path
# partitions a request names at most (well inside the server's body limit)
PARTITIONS_PER_REQUEST = 256

REMOTE_ONLY = "REMOTE_ONLY"
REMOTE_FIRST = "REMOTE_FIRST"


# --- the JSON form ---------------------------------------------------------------------------
def base_file_dto(base: BaseFile) -> dict[str, Any]:
    """Hudi's BaseFileDTO."""
    return {
        "fileStatus": None, "fullPath": base.path, "fileLen": base.size, "commitTime": base.instant,
        "fileId": base.file_id, "bootstrapBaseFile": None,
    }


def slice_dto(s: FileSlice) -> dict[str, Any]:
    """Hudi's FileSliceDTO; log files carry hoodie's ``committed`` extents besides (Hudi's
    LogFileDTO ignores fields it does not know)."""
    return {
        "partition": s.partition_path,
        "fileId": s.file_id,
        "baseInstant": s.base_instant,
        "baseFile": None if s.base_file is None else base_file_dto(s.base_file),
        "logFiles": [
            {"fileStatus": None, "path": lf.path, "len": lf.size, "committed": [[e.start, e.end, e.instant] for e in lf.committed]}
            for lf in s.log_files
        ],
    }


def group_dto(g: FileGroup) -> dict[str, Any]:
    """Hudi's FileGroupDTO (its client reads the file group's timeline from its own)."""
    return {"partition": g.partition_path, "fileId": g.file_id, "slices": [slice_dto(s) for s in g.slices], "timeline": None}


def instant_dto(i: Instant, layout_version: int = 1) -> dict[str, str | None]:
    """Hudi's InstantDTO. Apache Hudi 1.x builds instants from ``requestedTime`` and
    ``completionTime``, and 0.x refuses fields it does not know: a table of timeline layout 2
    (versions 8 and 9, which only 1.x writes) gets 1.x's form, a version 6 table 0.x's."""
    dto: dict[str, str | None] = {"action": i.action, "ts": i.timestamp, "state": i.state.value}
    if layout_version >= 2:
        dto.update(requestedTime=i.timestamp, completionTime=i.completion_time)
    return dto


def _file_path(base_path: str, partition: str, full_path: object, what: str) -> tuple[str, str]:
    """(checked file name, its path under ``base_path``) of a file the server named."""
    if not isinstance(full_path, str):
        raise FormatError(f"timeline server answered a {what} without a path: {full_path!r}")
    name = check_name(full_path.rsplit("/", 1)[-1], f"timeline server {what}")
    return name, under(base_path, partition, name)


def slice_from_dto(dto: dict[str, Any], base_path: str, partition: str) -> FileSlice:
    """The slice a FileSliceDTO describes, its files under ``base_path``/``partition``."""
    if dto.get("partition", partition) != partition:
        raise UnsafePathError(f"timeline server answered a slice of partition {dto.get('partition')!r} when asked for {partition!r}")
    base = None
    if dto.get("baseFile") is not None:
        name, path = _file_path(base_path, partition, dto["baseFile"].get("fullPath"), "base file")
        parsed = parse_base_file_name(name)
        if parsed is None:
            raise FormatError(f"timeline server answered {name!r} as a base file")
        base = BaseFile(path, parsed, int(dto["baseFile"]["fileLen"]))
    logs = []
    for lf in dto.get("logFiles") or []:
        name, path = _file_path(base_path, partition, lf.get("path"), "log file")
        lname = parse_log_file_name(name)
        if lname is None:
            raise FormatError(f"timeline server answered {name!r} as a log file")
        extents = tuple(LogExtent(int(a), int(b), str(t)) for a, b, t in lf.get("committed") or [])
        logs.append(LogFile(path, lname, int(lf["len"]), extents))
    return FileSlice(partition, str(dto["fileId"]), str(dto["baseInstant"]), base, tuple(logs))


def group_from_dto(dto: dict[str, Any], base_path: str, partition: str) -> FileGroup:
    return FileGroup(partition, str(dto["fileId"]), tuple(slice_from_dto(s, base_path, partition) for s in dto["slices"]))


# --- the views ---------------------------------------------------------------------------------
class RemoteFileSystemView:
    """The latest view of a table as a timeline server answers it, through ``server``'s
    client (given an address, a client of the view's own)."""

    def __init__(self, server: ServerClient | ServerAddress, base_path: str, timeline: ActiveTimeline) -> None:
        self.client = server if isinstance(server, ServerClient) else ServerClient(server)
        self.server = self.client.address
        self.base_path = base_path
        self.timeline = timeline
        self.missing: list[MissingFile] = []
        last = timeline.last_instant()
        self._params = {"basepath": base_path, "lastinstantts": last.timestamp if last else "", "timelinehash": timeline.timeline_hash()}
        self._groups: dict[str, list[FileGroup]] = {}
        self._latest: dict[str, list[FileSlice]] = {}

    @property
    def visible_instants(self) -> list[Instant]:
        return self.timeline.completed(Action.WRITE_ACTIONS)

    def _get(self, endpoint: api.Endpoint, **params: str) -> Any:
        return api.call(self.client, endpoint, {**self._params, **params})

    def all_partition_paths(self) -> list[str]:
        answer = self._get(api.ALL_PARTITIONS)
        return [check_partition_path(str(p), "timeline server partition list") for p in _list(answer, "partitions")]

    def file_groups(self, partition_path: str) -> list[FileGroup]:
        if partition_path not in self._groups:
            answer = self._get(api.ALL_FILE_GROUPS, partition=partition_path)
            self._groups[partition_path] = [group_from_dto(g, self.base_path, partition_path) for g in _list(answer, "file groups")]
        return self._groups[partition_path]

    def replaced_file_groups(self, partition_path: str) -> list[FileGroup]:
        answer = self._get(api.REPLACED_FILE_GROUPS, partition=partition_path)
        return [group_from_dto(g, self.base_path, partition_path) for g in _list(answer, "replaced file groups")]

    def latest_slices(self, partition_path: str) -> list[FileSlice]:
        if partition_path not in self._latest:
            answer = self._get(api.LATEST_SLICES, partition=partition_path)
            self._latest[partition_path] = [slice_from_dto(s, self.base_path, partition_path) for s in _list(answer, "slices")]
        return self._latest[partition_path]

    def latest_slices_all(self, partitions: Iterable[str] | None = None) -> list[FileSlice]:
        parts = self.all_partition_paths() if partitions is None else list(partitions)
        self.prefetch_latest(parts)
        return [s for p in parts for s in self.latest_slices(p)]

    def prefetch_latest(self, partitions: Iterable[str]) -> None:
        wanted = sorted({p for p in partitions if p not in self._latest})
        for start in range(0, len(wanted), PARTITIONS_PER_REQUEST):
            chunk = wanted[start : start + PARTITIONS_PER_REQUEST]
            answer = api.call(self.client, api.LATEST_SLICES_OF, {**self._params, "partitions": chunk})
            if not isinstance(answer, dict) or set(answer) != set(chunk):
                raise FormatError(f"timeline server answered the slices of other partitions than the {len(chunk)} asked for")
            for p in chunk:
                self._latest[p] = [slice_from_dto(s, self.base_path, p) for s in _list(answer[p], "slices")]


def _list(answer: object, what: str) -> list[Any]:
    if not isinstance(answer, list):
        raise FormatError(f"timeline server answered {type(answer).__name__} where a list of {what} belongs")
    return answer


T = TypeVar("T")


class PriorityFileSystemView:
    """The remote view first; on a failed call, a local view (built once, on first need)
    for this and every later call."""

    def __init__(self, remote: RemoteFileSystemView, local: Callable[[], FileSystemView]) -> None:
        self.remote = remote
        self.base_path = remote.base_path
        self._make_local = local
        self._local: FileSystemView | None = None

    @property
    def missing(self) -> list[MissingFile]:
        return self._local.missing if self._local is not None else []

    @property
    def visible_instants(self) -> list[Instant]:
        return self.remote.visible_instants

    def _call(self, remote: Callable[[], T], local: Callable[[FileSystemView], T]) -> T:
        if self._local is None and not self.remote.client.is_down:
            try:
                return remote()
            except (ServerCallError, FormatError, UnsafePathError) as e:
                error = e if isinstance(e, ServerCallError) else ServerCallError(f"timeline server {self.remote.server.host}:{self.remote.server.port}: {e}")
                if error.status != TABLE_TROUBLE:
                    self.remote.client.went_down(error, "building file-system views locally")
                # else the server refused this table's content (a link, damaged metadata):
                # the server is fine for every other table, and the local view of this one
                # meets the same trouble and says so itself
        if self._local is None:
            self._local = self._make_local()
        return local(self._local)

    def all_partition_paths(self) -> list[str]:
        return self._call(self.remote.all_partition_paths, lambda v: v.all_partition_paths())

    def file_groups(self, partition_path: str) -> list[FileGroup]:
        return self._call(lambda: self.remote.file_groups(partition_path), lambda v: v.file_groups(partition_path))

    def replaced_file_groups(self, partition_path: str) -> list[FileGroup]:
        return self._call(lambda: self.remote.replaced_file_groups(partition_path), lambda v: v.replaced_file_groups(partition_path))

    def latest_slices(self, partition_path: str) -> list[FileSlice]:
        return self._call(lambda: self.remote.latest_slices(partition_path), lambda v: v.latest_slices(partition_path))

    def latest_slices_all(self, partitions: Iterable[str] | None = None) -> list[FileSlice]:
        parts = self.all_partition_paths() if partitions is None else list(partitions)
        self.prefetch_latest(parts)
        return [s for p in parts for s in self.latest_slices(p)]

    def prefetch_latest(self, partitions: Iterable[str]) -> None:
        # on failure nothing is fetched: the local view lists each partition when asked
        self._call(lambda: self.remote.prefetch_latest(partitions), lambda v: None)


@dataclass(frozen=True)
class ViewSource:
    """Where a table's views come from when not from a local listing: the timeline server
    ``server`` is a client of, asked only (``REMOTE_ONLY``) or first (``REMOTE_FIRST``)."""

    server: ServerClient
    view_type: str = REMOTE_FIRST

    def view(
        self, base_path: str, timeline: ActiveTimeline, local: Callable[[], FileSystemView], lister: Callable[[], PartitionLister | None] | None = None
    ) -> RemoteFileSystemView | PriorityFileSystemView:
        """The server's view (``lister``: the server lists as it is configured to; the
        ``local`` view on failure lists with the table's own)."""
        remote = RemoteFileSystemView(self.server, base_path, timeline)
        return remote if self.view_type == REMOTE_ONLY else PriorityFileSystemView(remote, local)
