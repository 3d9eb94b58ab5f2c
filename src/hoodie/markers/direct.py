"""Direct markers: an empty file ``.hoodie/.temp/<instant>/<partition>/<file>.marker.<IO>``
created *before* each data file, so that a commit can remove files of failed or duplicate
task attempts and a rollback can find everything a failed write created.

Markers list their own folder only; the log files an APPEND marker stands for are found
in the listing of its partition that the caller's file-system view gives
(:data:`PartitionFiles`), the one place partitions are listed.
"""
from __future__ import annotations

import logging
from collections.abc import Callable, Collection, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from hoodie.errors import FileAlreadyExistsError
from hoodie.formats.log import first_block_instant
from hoodie.layout import (
    HOODIE_FOLDER,
    TEMP_FOLDER,
    marker_name,
    parse_base_file_name,
    parse_log_file_name,
    parse_marker_name,
)
from hoodie.markers.timeline_based import MARKERS_TYPE_FILE, markers_file_index, parse_markers_file
from hoodie.storage.base import FileInfo, Storage
from hoodie.storage.paths import check_name, check_partition_path, relative, relative_to, under
from hoodie.timeline.commit_metadata import WriteStat

log = logging.getLogger(__name__)

# Per marker directory of this process, a marker that later ones may share storage with
# (see Storage.create_empty). Markers of one instant are created by many tasks at once;
# a race only costs one more new file.
_LINK_SOURCES: dict[str, str] = {}
_MAX_LINK_SOURCES = 64
# storage calls a reader of markers makes side by side
_PARALLEL_CALLS = 16

# a partition's files (relative partition path -> every file storage holds there, committed
# or not), as a file-system view lists them (``FileSystemView.partition_files``)
PartitionFiles = Callable[[str], list[FileInfo]]


@dataclass(frozen=True)
class MarkerEntry:
    partition_path: str
    file_name: str
    io_type: str

    @property
    def data_file_path(self) -> str:
        """Data file path relative to the table's base path."""
        return relative(self.partition_path, self.file_name)


@dataclass(frozen=True)
class DirectMarkers:
    """Marker files of one instant."""

    storage: Storage
    base_path: str
    instant: str

    @property
    def marker_dir(self) -> str:
        return under(self.base_path, HOODIE_FOLDER, TEMP_FOLDER, self.instant)

    def create(self, partition_path: str, data_file_name: str, io_type: str) -> None:
        path = under(self.marker_dir, marker_name(partition_path, data_file_name, io_type))
        # Markers are empty: each may share the storage of an earlier marker of the
        # instant (a hard link on local disks, where a new file costs far more).
        like = _LINK_SOURCES.get(self.marker_dir)
        try:
            shared = self.storage.create_empty(path, like=like)
        except FileAlreadyExistsError:
            return  # a retried task attempt may create the same marker again
        if not shared:
            if len(_LINK_SOURCES) >= _MAX_LINK_SOURCES:
                _LINK_SOURCES.clear()  # a long-lived process writes many instants
            _LINK_SOURCES[self.marker_dir] = path

    def create_all(self, markers: list[tuple[str, str, str]]) -> None:
        """The markers (partition, data file name, IO type) of several files."""
        for marker in markers:
            self.create(*marker)

    def exists(self) -> bool:
        return self.storage.exists(self.marker_dir)

    def entries(self, strict: bool = True) -> list[MarkerEntry]:
        """Every marker of the instant, direct and timeline-server-based alike (a write
        whose server failed goes on with direct markers): walks the marker directory,
        never the table. ``strict``: a damaged ``MARKERS<n>`` file is an error (a commit
        must not miss a file to delete), else its unreadable lines are skipped (a
        rollback lists the written partitions as well)."""
        names: list[str] = []
        markers_files: list[str] = []
        level = [self.marker_dir]
        # a level of folders at a time, listed (and the MARKERS files read) side by side:
        # on object storage each call is a request, and a write has a folder a partition
        with ThreadPoolExecutor(_PARALLEL_CALLS, thread_name_prefix="hoodie-markers") as pool:
            while level:
                listings = list(pool.map(self.storage.list_dir, level))
                next_level = []
                for d, infos in zip(level, listings):
                    for info in infos:
                        if info.is_dir:
                            next_level.append(info.path)
                        elif d == self.marker_dir and info.name == MARKERS_TYPE_FILE:
                            continue
                        elif d == self.marker_dir and markers_file_index(info.name) is not None:
                            markers_files.append(info.path)
                        else:
                            names.append(relative_to(info.path, self.marker_dir))
                level = next_level
            for path, content in zip(markers_files, pool.map(self.storage.read_bytes, markers_files)):
                names.extend(parse_markers_file(content, path, strict))
        source = f"a marker of instant {self.instant}"
        out: list[MarkerEntry] = []
        for name in names:
            parsed = parse_marker_name(name)
            if parsed is not None:
                # a rollback deletes what markers name: none may name a path outside the table
                partition, file_name, io_type = parsed
                out.append(MarkerEntry(check_partition_path(partition, source), check_name(file_name, source), io_type))
        return out

    def delete_unaccepted(
        self, stats: Sequence[WriteStat], partition_files: PartitionFiles, protected: Callable[[], Collection[str]] = frozenset
    ) -> None:
        """Delete the data files the markers stand for that no accepted write stat names:
        those of failed or duplicate task attempts, before a commit makes them visible.
        Only files this instant wrote are candidates (:meth:`files_of`, which asks
        ``partition_files`` for an APPEND marker's partition); ``protected`` gives the
        relative paths completed instants name, which are never deleted whatever a marker
        says (asked only when some file is to be deleted)."""
        accepted = {s.path for s in stats}
        # An APPEND marker names (file id, write token) of a slice, not its log file; when
        # an accepted stat is that task's log file there is nothing to find, so the
        # partition is listed only for attempts that failed or lost to a duplicate.
        accepted_appends = set()
        for s in stats:
            lf = parse_log_file_name(s.file_name)
            if lf is not None:
                accepted_appends.add((s.partitionPath, lf.file_id, lf.instant, lf.write_token))
        unaccepted: list[str] = []
        for entry in self.entries():
            if entry.io_type == "APPEND":
                placeholder = parse_base_file_name(entry.file_name)
                if placeholder is not None and (entry.partition_path, placeholder.file_id, placeholder.instant, placeholder.write_token) in accepted_appends:
                    continue
            unaccepted.extend(rel for rel in self.files_of(entry, partition_files) if rel not in accepted)
        if not unaccepted:
            return
        committed = protected()
        for rel in unaccepted:
            if rel in committed:
                log.warning("a marker of instant %s names %s, a file a completed commit wrote: left alone", self.instant, rel)
            else:
                self.storage.delete(under(self.base_path, rel))

    def delete_all(self) -> None:
        _LINK_SOURCES.pop(self.marker_dir, None)
        self.storage.delete_dir(self.marker_dir)

    def files_of(self, entry: MarkerEntry, partition_files: PartitionFiles) -> list[str]:
        """Data files (relative paths) a marker stands for, and that this instant wrote.

        CREATE and MERGE markers name their file. An APPEND marker names a placeholder
        base file ``<fileId>_<token>_<baseInstant>``: the task with that write token created
        a log file on that slice, found in ``partition_files`` of the marker's partition
        and recognised by the instant in its blocks' headers.

        Whatever a marker names, only files of this instant come back: a base file whose
        name carries the instant, or a log file on a slice it opened or whose first block
        it wrote. Anything else (a marker naming another commit's file) is left out with
        a warning, so no commit or rollback deletes it on a marker's word.
        """
        if entry.io_type != "APPEND":
            return self._written_here(entry, [entry.data_file_path])
        placeholder = parse_base_file_name(entry.file_name)
        if placeholder is None:  # a 1.x style marker already names the log file
            return self._written_here(entry, [entry.data_file_path])
        out = []
        for info in partition_files(entry.partition_path):
            lf = parse_log_file_name(info.name)
            if (
                lf is not None
                and lf.file_id == placeholder.file_id
                and lf.instant == placeholder.instant
                and lf.write_token == placeholder.write_token
                and log_file_written_by(self.storage, info.path, self.instant)
            ):
                out.append(relative(entry.partition_path, info.name))
        return out

    def _written_here(self, entry: MarkerEntry, paths: list[str]) -> list[str]:
        out = []
        for rel in paths:
            name = rel.rsplit("/", 1)[-1]
            base = parse_base_file_name(name)
            lf = parse_log_file_name(name) if base is None else None
            if base is not None:
                ours = base.instant == self.instant
            elif lf is not None:
                path = under(self.base_path, rel)
                if not self.storage.exists(path):
                    continue  # nothing there to delete or undo
                ours = lf.instant == self.instant or log_file_written_by(self.storage, path, self.instant)
            else:
                ours = False
            if ours:
                out.append(rel)
            else:
                log.warning("marker %s of instant %s names %s, which that instant did not write: ignored", entry.io_type, self.instant, rel)
        return out


def log_file_written_by(storage: Storage, path: str, instant: str) -> bool:
    """Whether the first block of a log file was written by ``instant`` (a torn file whose
    first block never completed counts as written by it: nothing else writes new files)."""
    found = first_block_instant(storage, path)
    return found is None or found == instant
