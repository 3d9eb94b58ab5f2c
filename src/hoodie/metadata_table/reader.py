"""Reading a table's metadata table (``.hoodie/metadata``): a second lister, and the
column statistics, bloom filters and record locations of the data files.

The metadata table is a merge-on-read table of its own (its ``hoodie.properties`` and
timeline), whose base files are HFiles and whose log blocks are HFILE_DATA, delete and
rollback command blocks. Its file groups are found by the project's file-system view
(committed files only); a lookup reads the latest slice of the file groups that can hold
its keys: point lookups and key-prefix scans in the base HFile and in each log block's
HFile, so only the HFile blocks holding those keys are decoded; records then merge in
order, base file first (:func:`hoodie.metadata_table.records.merge`).

What a reader sees, as Java's ``HoodieBackedTableMetadata``:

* only the partitions ``hoodie.table.metadata.partitions`` of the data table names are
  complete (``files`` must be one, or there is no metadata table to read);
* a log block counts when the metadata table completed its instant and the data table
  did too: the metadata table is written before the data commit, so a block of a data
  instant that is pending or failed is not seen. Also seen: metadata-only delta commits
  (initialisation, indexing, log compaction: instants the data timeline lacks and no
  rollback undoes), the instants completed data rollbacks undid (their records and the
  rollback's deletions cancel out; a pending rollback's target stays unseen, its files
  may be half deleted) and instants older than the data table's active timeline
  (archived there);
* a damaged metadata file (HFile, log block, a committed file gone) is a
  :class:`~hoodie.errors.FormatError` naming it, never an older answer;
* a metadata table that lacks instants its data table completed after it began (a
  writer that does not maintain it wrote them: hudi-rs, an older hoodie) is refused on
  open, a :class:`~hoodie.errors.MetadataOutOfSyncError` naming them
  (:func:`unsynced_instants`), never a stale answer.

Each lookup and each slice read is recorded in the reader's
:class:`~hoodie.metadata_table.metrics.MetadataMetrics` (:data:`~.metrics.LOOKUP` by
kind, :data:`~.metrics.SCAN` by metadata partition).
"""
from __future__ import annotations

import datetime as dt
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from decimal import Decimal
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from hoodie.errors import DamagedTableError, FormatError, MetadataOutOfSyncError, TableError
from hoodie.formats.bloom import BloomFilter, deserialize_filter
from hoodie.formats.hfile import HFileReader
from hoodie.formats.log.blocks import DeleteBlock
from hoodie.layout import HOODIE_FOLDER, METADATA_FOLDER, InstantTime
from hoodie.metadata_table.keys import (
    ALL_PARTITIONS_KEY,
    NON_PARTITIONED_NAME,
    bloom_filter_key,
    bloom_filter_prefix,
    column_stats_key,
    column_stats_prefix,
    file_group_indices,
    partition_identifier,
)
from hoodie.metadata_table.metrics import LOOKUP, MetadataMetrics
from hoodie.metadata_table.record_lookup import SliceReading, locate_in_slices
from hoodie.metadata_table.records import (
    BloomFilterInfo,
    ColumnStats,
    MetadataRecord,
    RecordLocation,
    as_arrow_type,
    decode_value,
    merge,
)
from hoodie.metadata_table.settings import BLOOM_FILTERS, COLUMN_STATS, FILES, RECORD_INDEX
from hoodie.metadata_table.slice_parts import record_scan, slice_parts
from hoodie.storage.base import Storage
from hoodie.storage.paths import under
from hoodie.table.file_group import FileSlice
from hoodie.table.slice_reader.log_scan import LogScanStats
from hoodie.table.table import HoodieTable
from hoodie.timeline.active import ActiveTimeline
from hoodie.timeline.instant import Action

__all__ = ["FILES", "KeyLocation", "MetadataTableReader", "SliceMergeCounts", "unsynced_instants"]

#: the data actions whose completion Apache Hudi writes to the metadata table first, as a
#: delta commit at the same instant (a compaction completes as a commit, a clustering as a
#: replace commit; savepoints and indexing write none)
SYNCED_ACTIONS = (Action.COMMIT, Action.DELTA_COMMIT, Action.REPLACE_COMMIT, Action.CLEAN, Action.ROLLBACK, Action.RESTORE)


def unsynced_instants(data: ActiveTimeline, metadata: ActiveTimeline) -> list[str]:
    """The data table's completed instants (of :data:`SYNCED_ACTIONS`) after the metadata
    table's first instant that the metadata table completed nothing at (a delta commit;
    for a data rollback Apache Hudi 1.x rolls the metadata table's delta commit back at
    the same instant instead), oldest first. Older ones are in it through its
    initialisation (at ``<the latest data instant>010``, after it as a string) or were
    archived with its own timeline. Timestamps compare as strings, as Java compares them
    (``T`` < ``T010``)."""
    starts = [i.timestamp for i in metadata.instants]
    if not starts:
        return []
    first = min(starts)
    done = {i.timestamp for i in metadata.instants if i.is_completed}
    return [i.timestamp for i in data.completed(SYNCED_ACTIONS) if i.timestamp > first and i.timestamp not in done]

_DECIMAL_WRAPPER = pa.decimal128(30, 15)  # DecimalWrapper's value: decimal(30, 15)


@dataclass(frozen=True)
class KeyLocation:
    """Where the record index places a key: its partition, file group and the instant
    that wrote it there."""

    partition: str
    file_id: str
    instant: str


@dataclass
class SliceMergeCounts:
    """What merging one slice met: the keys of its base file, the records of its log
    blocks (deletions included) and their keys, and the log replay's own counts."""

    base_keys: frozenset[str] = frozenset()
    log_records: int = 0
    log_keys: set[str] = field(default_factory=set)
    log: LogScanStats = field(default_factory=LogScanStats)


@dataclass(frozen=True)
class _Query:
    """What a lookup reads: some keys, the keys under some prefixes, or everything."""

    keys: tuple[str, ...] | None = None
    prefixes: tuple[str, ...] | None = None

    def wants(self, key: str) -> bool:
        if self.keys is not None:
            return key in self.keys
        if self.prefixes is not None:
            return any(key.startswith(p) for p in self.prefixes)
        return True

    def entries(self, reader: HFileReader) -> Iterable[tuple[str, bytes]]:
        if self.keys is not None:
            return reader.get_many(sorted(self.keys)).items()
        if self.prefixes is not None:
            return reader.scan_prefixes(sorted(self.prefixes))
        return reader.read_all()


class MetadataTableReader:
    """The metadata table of ``data_table`` as of the data table's loaded timeline; its
    lookups and slice reads are recorded in ``metrics`` (its own when not given).
    ``check_sync=False`` opens one that is out of sync too (to validate or describe it:
    :attr:`unsynced` names what it lacks)."""

    def __init__(self, data_table: HoodieTable, metrics: MetadataMetrics | None = None, check_sync: bool = True) -> None:
        self.data_table = data_table
        self.metrics = metrics if metrics is not None else MetadataMetrics()
        self.partitions = frozenset(data_table.config.metadata_partitions)
        self.base_path = under(data_table.base_path, HOODIE_FOLDER, METADATA_FOLDER)
        if FILES not in self.partitions:
            raise TableError(
                f"{data_table.base_path} has no complete metadata table: hoodie.table.metadata.partitions "
                f"is {','.join(sorted(self.partitions)) or 'empty'}"
            )
        self.storage: Storage = data_table.storage
        try:
            self.table = HoodieTable.open(self.base_path, self.storage)
            self.view = self.table.local_view()
        except DamagedTableError as exc:
            raise FormatError(f"metadata table {self.base_path} is damaged: {exc}") from exc
        #: completed data instants the metadata table lacks (see :func:`unsynced_instants`)
        self.unsynced = unsynced_instants(data_table.timeline, self.table.timeline)
        if self.unsynced and check_sync:
            shown = ", ".join(self.unsynced[:5]) + (f" and {len(self.unsynced) - 5} more" if len(self.unsynced) > 5 else "")
            raise MetadataOutOfSyncError(
                f"the metadata table of {data_table.base_path} is out of sync: it has no completed delta commit for the data "
                f"table's completed instant(s) {shown} (written without maintaining it)",
                self.unsynced,
            )
        self._visible = self._visibility()
        self._slices: dict[str, list[FileSlice]] = {}
        self._schema: pa.Schema | None = None
        self._utc = data_table.config.props.get("hoodie.table.timeline.timezone", "LOCAL").upper() == "UTC"

    @classmethod
    def open(
        cls, base_path: str, storage: Storage | None = None, metrics: MetadataMetrics | None = None, check_sync: bool = True
    ) -> MetadataTableReader:
        """The metadata table of the data table at ``base_path``."""
        return cls(HoodieTable.open(base_path, storage), metrics, check_sync)

    # --- which instants count --------------------------------------------------------------
    def _visibility(self) -> Callable[[str], bool]:
        data, mdt = self.data_table.timeline, self.table.timeline
        on_data = {i.timestamp for i in data.instants}
        undone = data.rolled_back()  # by rollbacks pending or completed
        valid = {i.timestamp for i in data.instants if i.is_completed}
        # metadata-only delta commits: not a data instant, nor one a rollback undoes (its
        # data instant files may be gone before the rollback completes)
        valid |= {i.timestamp for i in mdt.completed([Action.DELTA_COMMIT]) if i.timestamp not in on_data and i.timestamp not in undone}
        # what completed rollbacks undid (Java's valid instants): a pending rollback's
        # target is not seen, its files may be half deleted
        valid |= {t for rb in data.completed([Action.ROLLBACK]) for t in data.rollback_metadata(rb).commits_rollback}
        mdt_done = {i.timestamp for i in mdt.instants if i.is_completed}
        mdt_start, data_start = mdt.commits_start(), data.commits_start()

        def visible(instant: str) -> bool:
            t = InstantTime(instant)
            if instant not in mdt_done and (mdt_start is None or t >= InstantTime(mdt_start)):
                return False  # pending or failed in the metadata table
            return instant in valid or (data_start is not None and t < InstantTime(data_start))

        return visible

    # --- slices and merged records ---------------------------------------------------------
    def _require(self, partition: str) -> None:
        if partition not in self.partitions:
            raise TableError(
                f"the metadata table of {self.data_table.base_path} has no complete {partition!r} partition "
                f"(hoodie.table.metadata.partitions: {','.join(sorted(self.partitions))})"
            )

    def file_slices(self, partition: str) -> list[FileSlice]:
        """The latest slice of each file group of a metadata-table partition, in file id
        order (the order keys are hashed into)."""
        if partition not in self._slices:
            try:
                slices = self.view.latest_slices(partition)
            except DamagedTableError as exc:
                raise FormatError(f"metadata table {self.base_path} is damaged: {exc}") from exc
            self._slices[partition] = sorted(slices, key=lambda s: s.file_id)
        return self._slices[partition]

    def _read(self, partition: str, query: _Query, kind: str | None = None) -> dict[str, MetadataRecord]:
        """The merged records of ``partition`` that ``query`` asks for: one lookup of
        ``kind`` (the partition's name when not given) as the metrics count them."""
        with self.metrics.timed(LOOKUP, kind or partition) as amounts:
            out = self._lookup(partition, query)
            amounts.update(keys=len(query.keys or query.prefixes or ()), hits=len(out))
        return out

    def _lookup(self, partition: str, query: _Query) -> dict[str, MetadataRecord]:
        self._require(partition)
        slices = self.file_slices(partition)
        if query.keys is not None and slices:
            by_group: dict[int, list[str]] = {}
            for key, i in zip(query.keys, file_group_indices(query.keys, len(slices)).tolist()):
                by_group.setdefault(i, []).append(key)
            work = [(slices[i], _Query(keys=tuple(keys))) for i, keys in sorted(by_group.items())]
        else:
            work = [(s, query) for s in slices]
        out: dict[str, MetadataRecord] = {}
        for slc, q in work:
            out.update(self._read_slice(slc, q))
        return out

    def merged_slice(self, slc: FileSlice, counts: SliceMergeCounts | None = None) -> dict[str, MetadataRecord]:
        """Every merged record of one slice of the metadata table, as a lookup reads them
        (what the metadata table's compaction writes into the slice's next base file);
        ``counts`` learns what the merge met."""
        return self._read_slice(slc, _Query(), counts)

    def _read_slice(self, slc: FileSlice, query: _Query, counts: SliceMergeCounts | None = None) -> dict[str, MetadataRecord]:
        counts = counts if counts is not None else SliceMergeCounts()
        started, blocks_before, log_records_before = time.perf_counter(), counts.log.blocks, counts.log_records
        merged: dict[str, MetadataRecord] = {}
        base_blocks = base_records = 0
        for part in slice_parts(self.storage, slc, self._visible, counts.log, self.base_path):
            if isinstance(part, DeleteBlock):
                for deleted in part.keys:
                    if deleted.record_key is not None and query.wants(deleted.record_key):
                        merged.pop(deleted.record_key, None)
                        counts.log_records += 1
                        counts.log_keys.add(deleted.record_key)
                continue
            for key, value in query.entries(part.reader):
                record = decode_value(key, value, part.schema, part.where)
                merged[key] = merge(merged.get(key), record)
                if not part.is_base:
                    counts.log_records += 1
                    counts.log_keys.add(key)
            if part.is_base:
                base_blocks, base_records = part.reader.block_reads, len(merged)
                counts.base_keys = frozenset(merged)
        record_scan(
            self.metrics, slc, time.perf_counter() - started, base_blocks,
            counts.log.blocks - blocks_before, base_records + counts.log_records - log_records_before,
        )
        return merged

    # --- files -----------------------------------------------------------------------------
    def all_partition_paths(self) -> list[str]:
        """Every partition of the data table ("" for a non-partitioned table's root)."""
        record = self._read(FILES, _Query(keys=(ALL_PARTITIONS_KEY,)), kind="partitions").get(ALL_PARTITIONS_KEY)
        names = record.live_files() if record is not None else {}
        return sorted("" if name == NON_PARTITIONED_NAME else name for name in names)

    def files_in(self, partition: str) -> dict[str, int]:
        """The files of one data partition, name → size (deleted files left out)."""
        return self.files_in_many([partition])[partition]

    def files_in_many(self, partitions: Iterable[str]) -> dict[str, dict[str, int]]:
        """The files of each of ``partitions`` (empty for a partition without any)."""
        wanted = {partition_identifier(p): p for p in partitions}
        records = self._read(FILES, _Query(keys=tuple(wanted)))
        return {p: (records[k].live_files() if k in records else {}) for k, p in wanted.items()}

    # --- column statistics, bloom filters ----------------------------------------------------
    def column_stats(self, partition: str, file_name: str, columns: Iterable[str]) -> dict[str, ColumnStats]:
        """The statistics of ``columns`` in one data file (columns without any are left out)."""
        return self.column_stats_many([(partition, file_name)], columns).get((partition, file_name), {})

    def column_stats_many(self, files: Iterable[tuple[str, str]], columns: Iterable[str]) -> dict[tuple[str, str], dict[str, ColumnStats]]:
        """The statistics of ``columns`` in each of ``files`` ((partition, file name)
        pairs), in one lookup: files without any statistics are left out, as are columns
        without any in a file."""
        names = tuple(dict.fromkeys(columns))
        keys = {column_stats_key(p, f, c): (p, f, c) for p, f in dict.fromkeys(files) for c in names}
        out: dict[tuple[str, str], dict[str, ColumnStats]] = {}
        for k, r in self._read(COLUMN_STATS, _Query(keys=tuple(keys))).items():
            if isinstance(r.payload, ColumnStats) and not r.is_deleted:
                p, f, c = keys[k]
                out.setdefault((p, f), {})[c] = self._typed(r.payload)
        return out

    def column_stats_of(self, column: str, partition: str | None = None) -> list[ColumnStats]:
        """The statistics of ``column`` in every file (of ``partition``, when given): one
        key-prefix scan."""
        return self._column_stats_under((column_stats_prefix(column, partition),))

    def column_stats_in(self, partition: str, columns: Iterable[str]) -> list[ColumnStats]:
        """The statistics of ``columns`` in every file of one data partition (files the
        partition no longer holds too, when the metadata table still has them): one read
        with a key prefix per column."""
        return self._column_stats_under(tuple(column_stats_prefix(c, partition) for c in dict.fromkeys(columns)))

    def _column_stats_under(self, prefixes: tuple[str, ...]) -> list[ColumnStats]:
        """The live statistics whose keys start with one of ``prefixes``, in key order."""
        records = self._read(COLUMN_STATS, _Query(prefixes=prefixes))
        return [self._typed(r.payload) for _, r in sorted(records.items()) if isinstance(r.payload, ColumnStats) and not r.is_deleted]

    def _typed(self, stats: ColumnStats) -> ColumnStats:
        """``stats`` with values of the column's type: Hudi 0.x stores some logical types
        in the wrapper of their physical type (a timestamp's microseconds in a
        ``LongWrapper``) and its readers cast them by the table's schema, as here."""
        if self._schema is None:
            self._schema = self.data_table.data_schema() or pa.schema([])
        index = self._schema.get_field_index(stats.column_name or "")
        if index < 0:
            return stats
        kind = self._schema.field(index).type

        def typed(value: Any) -> Any:
            if not pa.types.is_decimal(kind):
                return as_arrow_type(value, kind)
            # Hudi 0.x may keep a decimal's DecimalWrapper encoding (scale 15) in a
            # BytesWrapper; its reader decodes such bytes at that scale, as here
            value = as_arrow_type(value, _DECIMAL_WRAPPER)
            return value.quantize(Decimal(1).scaleb(-kind.scale)) if isinstance(value, Decimal) else value

        return replace(stats, min=typed(stats.min), max=typed(stats.max))

    def bloom_filter(self, partition: str, file_name: str) -> BloomFilter | None:
        """The bloom filter of one data file, or None when the index has none."""
        info = self.bloom_filter_infos([(partition, file_name)]).get((partition, file_name))
        if info is None:
            return None
        try:
            return deserialize_filter(info.filter, info.type_code)
        except FormatError as exc:
            raise FormatError(f"metadata table {self.base_path}: bloom filter of {file_name} in partition {partition!r}: {exc}") from exc

    def bloom_filter_infos(self, files: Iterable[tuple[str, str]]) -> dict[tuple[str, str], BloomFilterInfo]:
        """The bloom filter records (serialized filter and type code) of ``files``
        ((partition, file name) pairs), in one lookup; files without one are left out."""
        keys = {bloom_filter_key(p, f): (p, f) for p, f in dict.fromkeys(files)}
        out: dict[tuple[str, str], BloomFilterInfo] = {}
        for key, record in self._read(BLOOM_FILTERS, _Query(keys=tuple(keys))).items():
            if record.is_deleted:
                continue
            partition, file_name = keys[key]
            if not isinstance(record.payload, BloomFilterInfo):
                raise FormatError(
                    f"metadata table {self.base_path}: the bloom filter record of {file_name} in partition {partition!r} is of type {record.type}"
                )
            out[(partition, file_name)] = record.payload
        return out

    def bloom_filter_keys(self, partition: str) -> set[str]:
        """The keys of every bloom filter record of one data partition (a record names no
        file: its key is the hash of the partition and of the file name)."""
        records = self._read(BLOOM_FILTERS, _Query(prefixes=(bloom_filter_prefix(partition),)))
        return {k for k, r in records.items() if not r.is_deleted}

    # --- record index ----------------------------------------------------------------------
    def record_locations(self, keys: Iterable[str]) -> dict[str, KeyLocation]:
        """Where the record index places each of ``keys`` (keys it does not hold are left
        out). The instant is rebuilt from the stored epoch milliseconds in the data
        table's timeline time zone (``hoodie.table.timeline.timezone``: UTC, or this
        process's local zone, as Java's writer used its own)."""
        asked = pa.array(list(dict.fromkeys(keys)), pa.string())
        codes, where = self.locate_many(asked)
        return {k: where[c] for k, c in zip(asked.to_pylist(), codes.tolist()) if c >= 0}

    def locate_many(self, keys: pa.Array, workers: int = 1) -> tuple[np.ndarray, list[KeyLocation]]:
        """Where the record index places each of ``keys`` (a string array), over arrays
        (:mod:`.record_lookup`): per key the index of its location in the list, -1 where
        the index holds none; the blocks of a file are searched on up to ``workers``
        threads. Keys holding a NUL character are looked up one by one."""
        self._require(RECORD_INDEX)
        keys = keys.cast(pa.string())
        with self.metrics.timed(LOOKUP, RECORD_INDEX) as amounts:
            with_nul = _with_nul(keys)
            plain = np.flatnonzero(~with_nul)
            reading = SliceReading(self.storage, self._visible, self.metrics, self.base_path)
            asked = keys.take(pa.array(plain)) if with_nul.any() else keys
            found = locate_in_slices(asked, self.file_slices(RECORD_INDEX), reading, workers)
            made = [self._location(loc) for loc in found.locations]
            codes = np.full(len(keys), -1, np.int64)
            codes[plain] = found.codes
            distinct, hits = found.distinct, found.hits
            if with_nul.any():
                odd = keys.filter(pa.array(with_nul)).to_pylist()
                located = self._locations(self._lookup(RECORD_INDEX, _Query(keys=tuple(dict.fromkeys(odd)))))
                for i, key in zip(np.flatnonzero(with_nul).tolist(), odd):
                    if key in located:
                        codes[i] = len(made)
                        made.append(located[key])
                distinct, hits = distinct + len(set(odd)), hits + len(located)
            amounts.update(keys=distinct, hits=hits)
        return codes, made

    def _locations(self, records: Mapping[str, MetadataRecord]) -> dict[str, KeyLocation]:
        # the keys of one file group written at one instant share their location: each
        # location is made once, not once a key (a lookup may ask for 100,000s of keys)
        made: dict[RecordLocation, KeyLocation] = {}
        out: dict[str, KeyLocation] = {}
        for key, record in records.items():
            loc = record.payload
            if isinstance(loc, RecordLocation):
                where = made.get(loc)
                if where is None:
                    where = made[loc] = self._location(loc)
                out[key] = where
        return out

    def _location(self, loc: RecordLocation) -> KeyLocation:
        partition = "" if loc.partition is None or loc.partition == NON_PARTITIONED_NAME else loc.partition
        return KeyLocation(partition, loc.file_id, self._instant(loc.instant_millis))

    def _instant(self, millis: int | None) -> str:
        if millis is None:
            return ""
        when = dt.datetime.fromtimestamp(millis / 1000, dt.timezone.utc if self._utc else None)
        return when.strftime("%Y%m%d%H%M%S") + f"{millis % 1000:03d}"

    def record_locations_by_file_group(self) -> Iterator[dict[str, KeyLocation]]:
        """Every key of the record index with its location, one file group of the index at
        a time (memory: one file group's records)."""
        self._require(RECORD_INDEX)
        for slc in self.file_slices(RECORD_INDEX):
            yield self._locations(self._read_slice(slc, _Query()))

    def records(self, partition: str) -> Iterator[MetadataRecord]:
        """Every merged record of a metadata-table partition, in key order."""
        merged = self._read(partition, _Query())
        return iter([merged[k] for k in sorted(merged)])


def _with_nul(keys: pa.Array) -> np.ndarray:
    """Which of ``keys`` hold a NUL character (the keys' bytes looked at once first: a
    NUL anywhere in them is rare)."""
    data = keys.buffers()[2]
    if data is None or not (np.frombuffer(data, np.uint8) == 0).any():
        return np.zeros(len(keys), dtype=bool)
    nul: np.ndarray = pc.fill_null(pc.match_substring(keys, "\x00"), False).to_numpy(zero_copy_only=False)
    return nul
