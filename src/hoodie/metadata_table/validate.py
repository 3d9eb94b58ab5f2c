"""Validating a metadata table against the data it indexes (``hoodie metadata validate``).

:func:`validate_metadata_table` compares, partition by partition, what the metadata table
says with what the data says, and reports every difference (:class:`Difference`: the
check, partition, file, key or column, and both values):

* **files**: the partitions and, in each, the files and sizes of the committed slices of
  the data table's local view (every slice, and replaced file groups the cleaner has not
  removed yet; the metadata table lists them too). A committed file storage lost is not
  in the view, so the metadata table listing it is a difference. Files that pending data
  instants are changing are not: a log file a pending write created (no completed delta
  commit wrote into it, its first block is the pending instant's or torn) is not the
  table's yet, and a file the plan of a pending clean names may already be gone while the
  metadata table still lists it until that clean completes.
* **column_stats**, **bloom_filters**: see :mod:`.validate_stats`.
* **record_index**: every live key of the latest slices (merged as a snapshot read
  merges them) is placed in the partition and file group it is read from; when every
  partition is checked, the index holds no other key (deleted keys are gone).

A metadata table out of sync (completed data instants it has no delta commit for, see
:func:`~hoodie.metadata_table.reader.unsynced_instants`) is validated all the same, so
that the report shows what it lacks; those instants are the report's ``out_of_sync``.

Memory stays bounded by one partition's files, one file slice's keys, a batch of keys
being looked up (``key_batch``) and one file group of the record index. The view's
listing of a partition is dropped once the partition is checked. ``on_progress`` hears
of every partition each check finishes. Each check is recorded in the reader's metrics
(:data:`~.metrics.VALIDATE`: the time it took, the differences it found).
"""
from __future__ import annotations

import posixpath
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

import pyarrow as pa

from hoodie.errors import TableError
from hoodie.formats.log import first_block_instant
from hoodie.formats.meta_columns import RECORD_KEY, data_fields, stored_layout
from hoodie.metadata_table.metrics import VALIDATE
from hoodie.metadata_table.reader import KeyLocation, MetadataTableReader
from hoodie.metadata_table.settings import BLOOM_FILTERS, COLUMN_STATS, FILES, RECORD_INDEX
from hoodie.metadata_table.validate_stats import ABSENT, Difference, bloom_filter_differences, column_stats_differences
from hoodie.storage.base import Storage
from hoodie.table.file_group import BaseFile, FileSlice, LogFile
from hoodie.table.fs_view import FileSystemView
from hoodie.table.slice_reader.instants import InstantFilter
from hoodie.table.slice_reader.merge import merge_slice
from hoodie.table.slice_reader.merge_rules import MergeConfig
from hoodie.table.table import HoodieTable
from hoodie.timeline.instant import Action

__all__ = ["CHECKS", "Difference", "MetadataValidation", "Progress", "committed_file_sizes", "validate_metadata_table"]

#: the checks, in the order they run on each partition
CHECKS = (FILES, COLUMN_STATS, BLOOM_FILTERS, RECORD_INDEX)
#: ``on_progress(check, partition, done, total)``: ``check`` finished ``partition``, the
#: ``done``-th of ``total``
Progress = Callable[[str, str, int, int], None]
KEY_BATCH = 10_000


@dataclass(frozen=True)
class MetadataValidation:
    """What :func:`validate_metadata_table` compared and the differences it found."""

    base_path: str
    checks: tuple[str, ...]
    partitions: tuple[str, ...]
    files_checked: int
    statistics_checked: int
    filters_checked: int
    keys_checked: int
    differences: tuple[Difference, ...]
    #: the data table's completed instants the metadata table lacks (out of sync when any:
    #: readers refuse it; its differences are then what those instants changed)
    out_of_sync: tuple[str, ...] = ()

    @property
    def ok(self) -> bool:
        return not self.differences and not self.out_of_sync


@dataclass
class _Counts:
    files: int = 0
    statistics: int = 0
    filters: int = 0
    keys: int = 0
    misplaced: set[str] = field(default_factory=set)  # live keys the index places elsewhere
    missing: int = 0  # live keys the index lacks


@dataclass
class _Partition:
    """The committed files of one data partition: by name, and their sizes."""

    bases: dict[str, BaseFile] = field(default_factory=dict)
    logs: dict[str, LogFile] = field(default_factory=dict)

    def sizes(self) -> dict[str, int]:
        return {**{n: b.size for n, b in self.bases.items()}, **{n: lf.size for n, lf in self.logs.items()}}


def validate_metadata_table(
    table: HoodieTable,
    checks: Sequence[str] | None = None,
    partitions: Iterable[str] | None = None,
    on_progress: Progress | None = None,
    key_batch: int = KEY_BATCH,
    reader: MetadataTableReader | None = None,
) -> MetadataValidation:
    """Compare the metadata table of ``table`` with its data.

    ``checks``: some of :data:`CHECKS` (a check of a partition the metadata table does not
    hold complete is a :class:`~hoodie.errors.TableError`); None: every check whose
    partition it holds. ``partitions``: only these data partitions (the list of
    partitions and the record index's extra keys, which need all of them, are then not
    checked); None: all of them."""
    table = table.listed_by(None)  # the data as storage holds it, even for a table listed through its metadata table
    reader = reader or MetadataTableReader(table, check_sync=False)
    if checks is None:
        checks = [c for c in CHECKS if c in reader.partitions]
    unknown = [c for c in checks if c not in CHECKS]
    if unknown:
        raise TableError(f"unknown metadata table check(s) {', '.join(map(repr, unknown))}: expected some of {', '.join(CHECKS)}")
    ordered = tuple(c for c in CHECKS if c in checks)
    for check in ordered:
        if check not in reader.partitions:
            raise TableError(
                f"the metadata table of {table.base_path} has no complete {check!r} partition to validate "
                f"(hoodie.table.metadata.partitions: {','.join(sorted(reader.partitions))})"
            )
    view = table.local_view(ignore_missing_files=True)
    on_storage = view.all_partition_paths()
    diffs: list[Difference] = []
    if partitions is None:
        wanted = on_storage
        if FILES in ordered:
            diffs.extend(_partition_list_differences(reader.all_partition_paths(), on_storage))
    else:
        wanted = list(dict.fromkeys(partitions))
    counts = _Counts()
    visible = InstantFilter.of_timeline(table.timeline)
    columns = _layout(table).names
    spent = dict.fromkeys(ordered, 0.0)
    flux = _InFlux.of(table)
    for done, partition in enumerate(wanted, 1):
        files = _committed_files(view, partition, flux) if partition in on_storage else _Partition()
        leaving = flux.deleting.get(partition, frozenset())
        for check in ordered:
            started = time.perf_counter()
            if check == FILES:
                diffs.extend(_file_differences(reader, partition, files.sizes(), leaving))
                counts.files += len(files.bases) + len(files.logs)
            elif check == COLUMN_STATS:
                found, compared = column_stats_differences(reader, partition, files.bases, files.logs, columns, visible)
                diffs.extend(found)
                counts.statistics += compared
            elif check == BLOOM_FILTERS:
                diffs.extend(bloom_filter_differences(reader, partition, files.bases, leaving))
                counts.filters += len(files.bases)
            else:
                slices = view.latest_slices(partition) if partition in on_storage else []
                diffs.extend(_key_differences(reader, table, partition, slices, visible, counts, key_batch))
            spent[check] += time.perf_counter() - started
            if on_progress is not None:
                on_progress(check, partition, done, len(wanted))
        view.forget(partition)  # bounded memory: the listing is not needed again
    if RECORD_INDEX in ordered and partitions is None:
        started = time.perf_counter()
        diffs.extend(_extra_keys(reader, table, view, visible, counts))
        spent[RECORD_INDEX] += time.perf_counter() - started
    for check in ordered:
        reader.metrics.record(VALIDATE, check, spent[check], errors=sum(1 for d in diffs if d.check == check))
    return MetadataValidation(
        table.base_path, ordered, tuple(wanted), counts.files, counts.statistics, counts.filters, counts.keys, tuple(diffs), tuple(reader.unsynced)
    )


def _layout(table: HoodieTable) -> pa.Schema:
    """The columns of the table's files (whose statistics the metadata table may hold):
    the meta columns (when the table stores them) and the data columns of its latest
    schema."""
    schema = table.data_schema() or pa.schema([])
    return stored_layout(schema) if table.config.populate_meta_fields else pa.schema(data_fields(schema))


def committed_file_sizes(view: FileSystemView, partition: str) -> dict[str, int]:
    """The names and sizes of the files of a partition's committed slices (every slice, and
    file groups replaced but not yet cleaned): what the ``files`` partition lists."""
    return _committed_files(view, partition).sizes()


@dataclass(frozen=True)
class _InFlux:
    """What pending data instants are changing: the instants that may be writing log files
    (``writing``), and by partition the names of the files pending cleans delete."""

    storage: Storage | None = None
    writing: frozenset[str] = frozenset()
    deleting: dict[str, frozenset[str]] = field(default_factory=dict)

    @classmethod
    def of(cls, table: HoodieTable) -> _InFlux:
        pending = table.timeline.pending()
        deleting: dict[str, set[str]] = {}
        for clean in (i for i in pending if i.action == Action.CLEAN):
            for partition, paths in table.timeline.cleaner_plan(clean).files_to_delete.items():
                deleting.setdefault(partition, set()).update(posixpath.basename(p) for p in paths)
        writing = frozenset(i.timestamp for i in pending if i.action != Action.CLEAN)
        return cls(table.storage, writing, {p: frozenset(names) for p, names in deleting.items()})

    def written_by_pending(self, log: LogFile) -> bool:
        """Whether only a pending write wrote ``log``: no completed delta commit recorded
        an extent of it, and its first block is a pending instant's (or torn: the writer
        died in it). Read only while some write is pending."""
        if not self.writing or log.committed or self.storage is None:
            return False
        first = first_block_instant(self.storage, log.path)
        return first is None or first in self.writing


def _committed_files(view: FileSystemView, partition: str, flux: _InFlux = _InFlux()) -> _Partition:
    out = _Partition()
    for group in [*view.file_groups(partition), *view.replaced_file_groups(partition)]:
        for slc in group.slices:
            if slc.base_file is not None:
                out.bases[slc.base_file.file_name] = slc.base_file
            out.logs.update((lf.file_name, lf) for lf in slc.log_files if not flux.written_by_pending(lf))
    return out


# --- files ----------------------------------------------------------------------------------------


def _partition_list_differences(listed: list[str], on_storage: list[str]) -> list[Difference]:
    return [
        Difference(FILES, p, "a partition" if p in on_storage else ABSENT, "a partition" if p in listed else ABSENT)
        for p in sorted(set(listed) ^ set(on_storage))
    ]


def _file_differences(reader: MetadataTableReader, partition: str, stored: dict[str, int], leaving: frozenset[str] = frozenset()) -> list[Difference]:
    listed = reader.files_in(partition)
    out = []
    for name in sorted(set(listed) | set(stored)):
        size, listed_size = stored.get(name), listed.get(name)
        if size is None and name in leaving:
            continue  # a pending clean deleted it; the metadata table drops it when the clean completes
        if size != listed_size:
            data = ABSENT if size is None else f"{size} bytes"
            out.append(Difference(FILES, partition, data, ABSENT if listed_size is None else f"{listed_size} bytes", file=name))
    return out


# --- record index ---------------------------------------------------------------------------------


def _live_keys(table: HoodieTable, slc: FileSlice, visible: InstantFilter) -> list[str]:
    """The keys a snapshot read finds in ``slc`` (its merged live records)."""
    merge = MergeConfig.for_table(table.config)
    key_columns = [RECORD_KEY] if merge.populate_meta_fields else list(merge.record_key_fields)
    records = merge_slice(table.storage, slc, _layout(table), merge, visible, columns=key_columns).records
    if len(key_columns) == 1:
        return [str(k) for k in records.column(0).to_pylist()]
    return [",".join(f"{f}:{v}" for f, v in zip(key_columns, row)) for row in zip(*(records.column(f).to_pylist() for f in key_columns))]


def _key_differences(
    reader: MetadataTableReader, table: HoodieTable, partition: str, slices: list[FileSlice], visible: InstantFilter, counts: _Counts, batch: int
) -> list[Difference]:
    out: list[Difference] = []
    pending: dict[str, str] = {}  # key -> the file group it is read from

    def look_up() -> None:
        located = reader.record_locations(pending)
        for key, file_id in sorted(pending.items()):
            loc = located.get(key)
            if loc is None:
                counts.missing += 1
                out.append(Difference(RECORD_INDEX, partition, f"file group {file_id}", ABSENT, key=key))
            elif (loc.partition, loc.file_id) != (partition, file_id):
                counts.misplaced.add(key)
                out.append(Difference(RECORD_INDEX, partition, f"file group {file_id}", _where(loc), key=key))
        counts.keys += len(pending)
        pending.clear()

    for slc in sorted(slices, key=lambda s: s.file_id):
        for key in _live_keys(table, slc, visible):
            pending[key] = slc.file_id
            if len(pending) >= batch:
                look_up()
    if pending:
        look_up()
    return out


def _where(loc: KeyLocation) -> str:
    return f"file group {loc.file_id} in partition {loc.partition!r}"


def _extra_keys(reader: MetadataTableReader, table: HoodieTable, view: FileSystemView, visible: InstantFilter, counts: _Counts) -> list[Difference]:
    """The keys the record index holds beyond the live ones (deleted keys it kept).

    Every live key was looked up, so the index holds ``keys - missing`` of them; only when
    it holds more are its file groups walked (one at a time) to name the others: each
    entry is looked for in the file group it names."""
    held = sum(len(group) for group in reader.record_locations_by_file_group())
    if held <= counts.keys - counts.missing:
        return []
    partitions = set(view.all_partition_paths())
    out: list[Difference] = []
    for group in reader.record_locations_by_file_group():
        by_slice: dict[tuple[str, str], list[str]] = {}
        for key, loc in group.items():
            if key not in counts.misplaced:
                by_slice.setdefault((loc.partition, loc.file_id), []).append(key)
        for (partition, file_id), keys in sorted(by_slice.items()):
            slices = [s for s in view.latest_slices(partition) if s.file_id == file_id] if partition in partitions else []
            live = set(_live_keys(table, slices[0], visible)) if slices else set()
            out.extend(
                Difference(RECORD_INDEX, partition, ABSENT, _where(group[k]), key=k) for k in sorted(keys) if k not in live
            )
    return out
