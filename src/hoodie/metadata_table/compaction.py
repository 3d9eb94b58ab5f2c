"""Compaction of the metadata table, as Apache Hudi 0.15's metadata writer runs it
(``HoodieBackedTableMetadataWriter.compactIfNecessary``).

When due, every file slice of the metadata table with log files (Hudi's
``UnBoundedCompactionStrategy``: the compacted base files are what the data table's
archival waits for) is merged into a new base HFile at instant ``<latest delta commit>001``:

1. ``<t>001.compaction.requested`` holds the Avro ``HoodieCompactionPlan`` (one operation
   per slice: base file, log files, Hudi's IO metrics);
2. ``<t>001.compaction.inflight``;
3. per slice, a marker, then the slice's merged records (the reader's merge,
   :meth:`~hoodie.metadata_table.reader.MetadataTableReader.merged_slice`; records a
   deletion removed, or deleted column statistics and bloom filters, left out) written as
   ``<file id>_<token>_<t>001.hfile`` with the settings Hudi gives the metadata table's
   base files: 1 MiB GZ blocks, a dynamic bloom filter of its keys (60,000 entries, fpp
   1e-9, at most 100,000) in the ``bloomFilter`` meta block, ``minRecordKey`` and
   ``maxRecordKey`` in the file info;
4. ``<t>001.commit`` with the write stats (operation ``COMPACT``, ``compacted`` true).

Due means: at least ``hoodie.metadata.compact.max.delta.commits`` completed delta
commits since the last compaction, no compaction already at that instant, no compaction
pending, and no data-table instant pending at or before the latest delta commit (the new
base files must hold only what the data table committed: a pending data instant may still
fail). Readers never see a compaction before it completes: its base files are not
committed, and logs written meanwhile extend the slice it reads. A compaction left
inflight by a crash is rolled back (its files deleted) and run again under its instant;
delta commits made in between belong on the slice it opens (logs named after it), and a
log a writer named after the slice it reads is merged into the new base file too.
"""
from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from hoodie.errors import FormatError, TableError
from hoodie.formats.bloom import DYNAMIC_V0, new_bloom_filter
from hoodie.formats.hfile.writer import HFileSettings, write_hfile
from hoodie.layout import InstantTime, base_file_name, write_token
from hoodie.markers import DirectMarkers
from hoodie.metadata_table.metrics import MetadataMetrics
from hoodie.metadata_table.reader import MetadataTableReader, SliceMergeCounts
from hoodie.metadata_table.records import encode_value
from hoodie.metadata_table.schema import METADATA_RECORD_SCHEMA_JSON
from hoodie.storage.paths import relative, under
from hoodie.table.file_group import FileSlice
from hoodie.table.table import HoodieTable
from hoodie.timeline.commit_metadata import CommitMetadata, RuntimeStats, WriteStat
from hoodie.timeline.compaction_plan import CompactionOperation, CompactionPlan, pending_plans
from hoodie.timeline.instant import Action, Instant, State

__all__ = [
    "COMPACTION_SUFFIX",
    "MetadataCompactionSettings",
    "RollbackAttempt",
    "compaction_due",
    "plan_metadata_compaction",
    "run_metadata_compaction",
]

#: the metadata table compacts at ``<latest delta commit>001`` (Hudi's ``createCompactionTimestamp``)
COMPACTION_SUFFIX = "001"
#: what Hudi's IO metrics count as the write of a slice without a base file:
#: ``hoodie.parquet.max.file.size``'s default, in MB
_NO_BASE_WRITE_MB = 120
_MB = 1024 * 1024

#: rolls back a failed attempt of a compaction of ``table`` at ``inflight`` (the files it
#: wrote deleted, the instant back to requested); the table services give it
RollbackAttempt = Callable[[HoodieTable, Instant, Iterable[str]], object]


@dataclass(frozen=True)
class MetadataCompactionSettings:
    """``hoodie.metadata.compact.max.delta.commits``, ``hoodie.metadata.max.deltacommits.when_pending``
    and the base files' HFile and bloom filter settings (Hudi's defaults for the metadata
    table: its write config does not borrow the data table's)."""

    max_delta_commits: int = 10
    max_delta_commits_when_pending: int = 1000
    hfile: HFileSettings = HFileSettings()
    bloom_entries: int = 60000
    bloom_fpp: float = 1e-9
    bloom_type: str = DYNAMIC_V0
    bloom_max_entries: int = 100000


# --- when -----------------------------------------------------------------------------------


def compaction_due(data_table: HoodieTable, mdt: HoodieTable, settings: MetadataCompactionSettings) -> tuple[str | None, str]:
    """(the compaction instant, why) when a compaction should be scheduled now, else
    (None, why not). A metadata table whose delta commits pile up behind a pending data
    instant beyond ``max_delta_commits_when_pending`` is a :class:`TableError`, as in Hudi."""
    timeline = mdt.timeline
    deltas = timeline.completed([Action.DELTA_COMMIT])
    if not deltas:
        return None, "the metadata table has no completed delta commit"
    latest = deltas[-1].timestamp
    since = _delta_commits_since_compaction(mdt)
    pending_data = [i for i in data_table.timeline.pending() if i.time <= InstantTime(latest)]
    if pending_data:
        if since > settings.max_delta_commits_when_pending:
            raise TableError(
                f"the metadata table of {data_table.base_path} holds {since} delta commits since its last compaction, more than "
                f"hoodie.metadata.max.deltacommits.when_pending ({settings.max_delta_commits_when_pending}): data instant "
                f"{pending_data[0].timestamp} ({pending_data[0].action}) is still pending; finish or roll it back"
            )
        return None, f"data instant {pending_data[0].timestamp} ({pending_data[0].action}) is pending at or before the latest delta commit {latest}"
    pending = timeline.pending([Action.COMPACTION, Action.LOG_COMPACTION])
    if pending:
        return None, f"{pending[0].action} {pending[0].timestamp} is pending in the metadata table"
    instant = latest + COMPACTION_SUFFIX
    if any(i.timestamp == instant for i in timeline.completed()):
        return None, f"the compaction at {instant} already completed"
    if since < settings.max_delta_commits:
        return None, f"{since} delta commits since the last compaction, hoodie.metadata.compact.max.delta.commits is {settings.max_delta_commits}"
    return instant, f"{since} delta commits since the last compaction (threshold {settings.max_delta_commits})"


def _delta_commits_since_compaction(mdt: HoodieTable) -> int:
    timeline = mdt.timeline
    # every commit of the metadata table is a compaction
    compactions = timeline.completed([Action.COMMIT])
    last = compactions[-1].time if compactions else None
    return sum(1 for i in timeline.completed([Action.DELTA_COMMIT]) if last is None or i.time > last)


# --- the plan -------------------------------------------------------------------------------


def plan_metadata_compaction(reader: MetadataTableReader) -> CompactionPlan:
    """One operation for every latest slice with log files, in every partition of the
    metadata table (complete or still being built), in partition and file id order."""
    operations = []
    for partition in reader.view.all_partition_paths():
        for slc in sorted(reader.view.latest_slices(partition), key=lambda s: s.file_id):
            if slc.log_files:
                operations.append(_operation(slc))
    return CompactionPlan(tuple(operations))


def _operation(slc: FileSlice) -> CompactionOperation:
    """The slice's operation, with Hudi's IO metrics (whole MB, as Java's integer sizes)."""
    logs = sum(lf.size for lf in slc.log_files)
    base = slc.base_file.size if slc.base_file is not None else 0
    read_mb = (base + logs) // _MB
    write_mb = base // _MB if slc.base_file is not None else _NO_BASE_WRITE_MB
    return CompactionOperation(
        partition_path=slc.partition_path,
        file_id=slc.file_id,
        base_instant=slc.base_instant,
        base_file=slc.base_file.file_name if slc.base_file is not None else None,
        log_files=tuple(lf.file_name for lf in slc.log_files),
        metrics={
            "TOTAL_LOG_FILES": float(len(slc.log_files)),
            "TOTAL_IO_READ_MB": float(read_mb),
            "TOTAL_IO_WRITE_MB": float(write_mb),
            "TOTAL_IO_MB": float(read_mb + write_mb),
            "TOTAL_LOG_FILES_SIZE": float(logs),
        },
    )


def schedule_metadata_compaction(reader: MetadataTableReader, instant: str) -> CompactionPlan | None:
    """Save the plan as ``<instant>.compaction.requested``; None when no slice has logs."""
    plan = plan_metadata_compaction(reader)
    if not plan.operations:
        return None
    reader.table.timeline.create_requested(Instant(instant, Action.COMPACTION, State.REQUESTED), plan.encode())
    return plan


# --- execution ------------------------------------------------------------------------------


def run_metadata_compaction(
    data_table: HoodieTable, instant: str, settings: MetadataCompactionSettings, rollback_attempt: RollbackAttempt,
    metrics: MetadataMetrics | None = None,
) -> CommitMetadata:
    """Execute the pending compaction at ``instant`` of the metadata table of
    ``data_table`` and complete it (a failed earlier attempt is rolled back first); its
    slice reads recorded in ``metrics``."""
    reader = MetadataTableReader(data_table, metrics, check_sync=False)  # (compacted in sync or not: readers judge that)
    mdt = reader.table
    found = [(i, p) for i, p in pending_plans(mdt.timeline) if i.timestamp == instant]
    if not found:
        raise TableError(f"no pending compaction at {instant} in the metadata table {mdt.base_path}")
    inst, plan = found[0]
    if inst.is_inflight:
        rollback_attempt(mdt, inst, sorted({op.partition_path for op in plan.operations}))
        reader = MetadataTableReader(data_table.reload(), metrics, check_sync=False)
        mdt = reader.table
    mdt.timeline.transition_to_inflight(Instant(instant, Action.COMPACTION, State.REQUESTED), b"")
    markers = DirectMarkers(mdt.storage, mdt.base_path, instant)
    by_partition: dict[str, list[WriteStat]] = {}
    for index, op in enumerate(plan.operations):
        stat = _compact_slice(reader, _planned_slice(reader, op, instant), op, instant, write_token(index, 0, 0), settings, markers)
        by_partition.setdefault(op.partition_path, []).append(stat)
    metadata = CommitMetadata(
        partition_to_write_stats=by_partition,
        operation_type="COMPACT",
        extra_metadata={"schema": METADATA_RECORD_SCHEMA_JSON},
        compacted=True,
    )
    mdt.timeline.reload().transition_to_completed(Instant(instant, Action.COMPACTION, State.INFLIGHT), metadata.to_json_bytes())
    markers.delete_all()
    return metadata


def _planned_slice(reader: MetadataTableReader, op: CompactionOperation, instant: str) -> FileSlice:
    """The slice ``op`` names with its log files: the plan's, and any a writer named after
    the same slice once the plan was made (a crash left the compaction pending): their
    records would be in no slice a reader reads once the compaction completes. Logs
    named after the compaction belong to the slice it opens, on top of its base file."""
    latest = next((s for s in reader.view.latest_slices(op.partition_path) if s.file_id == op.file_id), None)
    base = latest.base_file.file_name if latest is not None and latest.base_file is not None else None
    if latest is None or latest.base_instant != op.base_instant or base != op.base_file:
        raise FormatError(
            f"metadata table {reader.base_path}: compaction {instant} plans slice {op.base_instant} of {op.file_id} "
            f"in partition {op.partition_path!r}, which its file-system view does not hold"
        )
    logs = [lf for lf in latest.log_files if lf.name.instant == op.base_instant]
    missing = sorted(set(op.log_files) - {lf.file_name for lf in logs})
    if missing:
        raise FormatError(f"metadata table {reader.base_path}: compaction {instant} plans log files that are gone: {', '.join(missing)}")
    return FileSlice(latest.partition_path, latest.file_id, latest.base_instant, latest.base_file, tuple(logs))


def _compact_slice(
    reader: MetadataTableReader,
    slc: FileSlice,
    op: CompactionOperation,
    instant: str,
    token: str,
    settings: MetadataCompactionSettings,
    markers: DirectMarkers,
) -> WriteStat:
    started = time.monotonic()
    counts = SliceMergeCounts()
    merged = reader.merged_slice(slc, counts)
    # a deleted column statistic or bloom filter reads as absent: the base file leaves it out
    kept = {key: record for key, record in merged.items() if not record.is_deleted}
    scanned = time.monotonic()
    keys = sorted(kept, key=lambda k: k.encode("utf-8"))
    bloom = new_bloom_filter(settings.bloom_entries, settings.bloom_fpp, settings.bloom_type, settings.bloom_max_entries)
    bloom.add_many(keys)
    name = base_file_name(op.file_id, token, instant, ".hfile")
    markers.create(op.partition_path, name, "CREATE")
    entries = ((key, encode_value(kept[key])) for key in keys)
    size = write_hfile(
        reader.storage, under(reader.base_path, op.partition_path, name), entries, settings.hfile,
        schema=METADATA_RECORD_SCHEMA_JSON, bloom_filter=bloom,
    )
    updated = sum(1 for key in counts.log_keys if key in counts.base_keys and key in kept)
    return WriteStat(
        fileId=op.file_id,
        path=relative(op.partition_path, name),
        partitionPath=op.partition_path,
        prevCommit=op.base_instant if op.base_file is not None else "null",
        numWrites=len(keys),
        numDeletes=sum(1 for key in counts.base_keys if key not in kept),
        numUpdateWrites=updated,
        numInserts=sum(1 for key in keys if key not in counts.base_keys),
        totalWriteBytes=size,
        fileSizeInBytes=size,
        totalLogRecords=counts.log_records,
        totalLogFilesCompacted=len(slc.log_files),
        totalLogSizeCompacted=sum(lf.size for lf in slc.log_files),
        totalUpdatedRecordsCompacted=len(counts.log_keys),
        totalLogBlocks=counts.log.replayed_blocks,
        totalCorruptLogBlock=counts.log.corrupt_blocks,
        totalRollbackBlocks=counts.log.rollback_blocks,
        runtimeStats=RuntimeStats(
            totalScanTime=int((scanned - started) * 1000), totalCreateTime=int((time.monotonic() - scanned) * 1000)
        ),
    )
