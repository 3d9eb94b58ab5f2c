"""Functions that run inside Spark tasks of the write pipeline (executor side).

Each one adapts a step of :mod:`hoodie.writer` to Spark's Arrow UDF shapes: ``mapInArrow``
functions take and yield ``pyarrow.RecordBatch``es, the ``applyInArrow`` function takes
one group as a ``pyarrow.Table``. The steps themselves (key generation, dedupe, index
tagging, bucket assignment, write handles) are the writer's, unchanged: this module only
moves Arrow data in and out of them. The functions live at module level (executors import
them, the closure pickled is tiny) and take their settings as frozen dataclasses or
broadcast variables.
"""
from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from pyspark import Broadcast

from hoodie.engine.base import TaskContext
from hoodie.errors import HoodieError
from hoodie.formats.meta_columns import PARTITION_PATH, RECORD_KEY
from hoodie.index.base import FileRef
from hoodie.markers import TimelineServerMarkers
from hoodie.spark.engine import current_task_context
from hoodie.storage.base import Storage, StorageCounters
from hoodie.table.file_group import FileSlice
from hoodie.writer import steps
from hoodie.writer.context import WriteContext
from hoodie.writer.handles import BucketTask, make_markers_first, run_bucket
from hoodie.writer.keygen import KeyGenerator
from hoodie.writer.partition_groups import GroupSpec, plan_partitions
from hoodie.writer.pipeline import ServedLatestSlices
from hoodie.writer.planner import WritePlan
from hoodie.writer.prepare import add_keys
from hoodie.writer.schema import (
    BASE_INSTANT_COLUMN,
    DELETE_COLUMN,
    FILE_ID_COLUMN,
    INTERNAL_PREFIX,
    normalize_batch,
)
from hoodie.writer.settings import WriteSettings

# Position of a record in the input DataFrame. Dedupe keeps the *later* record on an
# ordering tie and handles see records in batch order; a shuffle loses that order, so
# every task restores it from this column. The internal prefix keeps it out of the schema.
SEQ_COLUMN = f"{INTERNAL_PREFIX}seq"
# Columns the first stage appends to the input rows, in this order.
KEYED_COLUMNS = (RECORD_KEY, PARTITION_PATH, DELETE_COLUMN, FILE_ID_COLUMN, BASE_INSTANT_COLUMN)


@dataclass(frozen=True)
class KeySpec:
    """How the first stage computes keys: the writer's key generator, and whether the
    batch is a delete batch."""

    keygen: KeyGenerator
    is_delete: bool


@dataclass(frozen=True)
class TagSpec:
    """What the dedupe-and-tag stage needs: the storage of the base files it reads, and
    the write's settings (whether it combines, whether it consults the index)."""

    storage: Storage
    settings: WriteSettings


def _table(batches: list[pa.RecordBatch]) -> pa.Table:
    return pa.Table.from_batches(batches)


def _in_input_order(records: pa.Table) -> pa.Table:
    return records.take(pc.sort_indices(records.column(SEQ_COLUMN)))


def partition_paths_task(batches: Iterator[pa.RecordBatch], keygen: KeyGenerator) -> Iterator[pa.RecordBatch]:
    """Distinct partition paths of the partition-field columns of the input."""
    seen: set[str] = set()
    for batch in batches:
        seen.update(keygen.partition_paths(normalize_batch(pa.Table.from_batches([batch]))).unique().to_pylist())
    if seen:
        yield pa.record_batch({PARTITION_PATH: pa.array(sorted(seen), pa.string())})


def add_keys_task(batches: Iterator[pa.RecordBatch], spec: KeySpec) -> Iterator[pa.RecordBatch]:
    """Append :data:`KEYED_COLUMNS` to every batch (file id and base instant still null)."""
    for batch in batches:
        yield _keyed(batch, spec)


def _keyed(batch: pa.RecordBatch, spec: KeySpec) -> pa.RecordBatch:
    """``batch`` with :data:`KEYED_COLUMNS` appended.

    Keys are computed on the normalised batch, as the in-process client does; the input
    columns themselves pass through untouched (their Spark types are declared downstream)
    and are conformed to the table schema by the write handles.
    """
    data = normalize_batch(pa.Table.from_batches([batch]).drop_columns([SEQ_COLUMN]))
    keyed = add_keys(data, spec.keygen, is_delete=spec.is_delete)
    n = batch.num_rows
    extra = [keyed.column(c).combine_chunks() for c in (RECORD_KEY, PARTITION_PATH, DELETE_COLUMN)]
    extra += [pa.nulls(n, pa.string()), pa.nulls(n, pa.string())]
    return pa.RecordBatch.from_arrays(list(batch.columns) + extra, names=batch.schema.names + list(KEYED_COLUMNS))


def dedupe_and_tag_task(batches: Iterator[pa.RecordBatch], spec: TagSpec, refs: Broadcast[dict[str, list[FileRef]]]) -> Iterator[pa.RecordBatch]:
    """Dedupe and tag the records of one shuffle partition.

    The shuffle hashed ``(partition path, record key)``, so every duplicate of a key is in
    this task; ``refs`` (broadcast) maps each touched partition to its latest base files.
    """
    received = list(batches)
    if not received:
        return
    records = _in_input_order(_table(received))
    records = steps.dedupe_and_tag(records, refs.value, spec.storage, spec.settings)
    yield from records.to_batches()


def assign_buckets_task(batches: Iterator[pa.RecordBatch], plan: Broadcast[WritePlan]) -> Iterator[pa.RecordBatch]:
    """Append the bucket (file group) of every record; a pure function of each row."""
    write_plan = plan.value
    for batch in batches:
        yield from steps.assign_buckets(pa.Table.from_batches([batch]), write_plan).to_batches()


def write_bucket_task(key: tuple[pa.Scalar, ...], records: pa.Table, plan: Broadcast[WritePlan], wctx: WriteContext) -> pa.Table:
    """Run the write handle of one bucket; returns one row: the bucket id and its
    :class:`~hoodie.timeline.commit_metadata.WriteStat` as JSON.

    The handle sees the bucket id as its partition id: Hudi runs each bucket in a Spark
    partition of its own (partition = bucket), while here one task may run several
    buckets; the id goes into the write token and into ``_hoodie_commit_seqno``
    (``<instant>_<partition>_<n>``), which must not repeat across file groups. Stage and
    task attempt ids stay Spark's, so every attempt still has its own file names.
    """
    bucket_id = int(key[0].as_py())
    write_plan = plan.value
    records = _in_input_order(records).drop_columns([SEQ_COLUMN])
    before = wctx.storage.counters.snapshot()
    try:
        stat = run_bucket(BucketTask(write_plan.bucket(bucket_id), records), current_task_context(partition_id=bucket_id), wctx)
    finally:
        _close_clients(wctx, None)
    return pa.table({
        "bucket": pa.array([bucket_id], pa.int32()),
        "stat": pa.array([json.dumps(stat.to_json())], pa.string()),
        "calls": pa.array([json.dumps(wctx.storage.counters.since(before))], pa.string()),
    })


# The rows a bucket-writing task returns: its bucket, its WriteStat as JSON, and the storage
# calls it made by kind as JSON (the executor's storage is not the driver's).
BUCKET_WRITE_SCHEMA = "bucket int, stat string, calls string"


@dataclass(frozen=True)
class PartitionWriteSpec:
    """What a partition-aligned write task does with the records of its partitions: key
    them (unless ``keys`` is None: an earlier stage did), then dedupe, tag, plan and write
    each partition as ``group`` says (the write client's partition groups do the same)."""

    keys: KeySpec | None
    group: GroupSpec


# One row per written bucket: the ordinal of its partition among the touched partitions,
# the bucket's id in its partition's plan, its WriteStat as JSON, and the storage calls
# made since the previous row (tagging and planning included) as JSON.
PARTITION_WRITE_SCHEMA = "partition int, bucket int, stat string, calls string"


def write_partitions_task(
    batches: Iterator[pa.RecordBatch], spec: PartitionWriteSpec, latest: Broadcast[Mapping[str, list[FileSlice]]]
) -> Iterator[pa.RecordBatch]:
    """Tag, plan and write whole partitions in the task that holds them.

    The shuffle hashed the partition (its fields, or its path) and sorted each task's
    records by it, so every partition arrives whole and in one run. A partition is planned
    as the driver would plan it (Hudi sizes files per partition); its buckets get ids unique
    across the write, ``<local id> * <touched partitions> + <partition ordinal>``, for write
    tokens and sequence numbers. ``latest`` (broadcast) maps every touched partition to its
    latest slices.

    With timeline-server markers, each partition is planned, and its markers asked for,
    before the files of the one before it are written: the markers are then ready by the
    time their files are (instead of the task waiting for the server's write each
    partition), and the task holds two partitions at most. With direct markers it holds one.
    """
    slices = latest.value
    try:
        yield from _write_partitions(batches, spec, slices)
    finally:
        _close_clients(spec.group.wctx, slices)


def _write_partitions(batches: Iterator[pa.RecordBatch], spec: PartitionWriteSpec, slices: Mapping[str, list[FileSlice]]) -> Iterator[pa.RecordBatch]:
    ordinals = {p: i for i, p in enumerate(sorted(slices))}
    calls = _CallsSince(spec.group.wctx.storage.counters)
    ahead = isinstance(spec.group.wctx.marker_writer(), TimelineServerMarkers)
    planned: _PlannedPartition | None = None
    for partition, records in _partition_runs(batches, spec.keys):
        if partition not in ordinals:
            raise HoodieError(f"partition {partition!r} was not among the partitions the driver found in the batch")
        this = _plan_partition(partition, records, spec, slices[partition], ordinals[partition], len(ordinals))
        if not ahead:
            if this is not None:
                yield from _write_planned(this, spec, calls)
            continue
        if planned is not None:
            yield from _write_planned(planned, spec, calls)
        planned = this
    if planned is not None:
        yield from _write_planned(planned, spec, calls)


def _close_clients(wctx: WriteContext, latest: object) -> None:
    """A task's copies of the write's timeline-server clients (its markers', and the
    served latest slices' it was given): their connections and background calls end with
    the task (each task gets copies of its own)."""
    if wctx.marker_server is not None:
        wctx.marker_server.close()
    if isinstance(latest, ServedLatestSlices):
        latest.close()


def _partition_runs(batches: Iterator[pa.RecordBatch], keys: KeySpec | None) -> Iterator[tuple[str, pa.Table]]:
    """The records of each partition path, keyed, one partition at a time (the input is
    sorted by partition; a partition seen twice would be written twice, so it fails)."""
    current: str | None = None
    pending: list[pa.RecordBatch] = []
    done: set[str] = set()
    for batch in batches:
        if batch.num_rows == 0:
            continue
        if keys is not None:
            batch = _keyed(batch, keys)
        paths = batch.column(PARTITION_PATH).to_numpy(zero_copy_only=False)
        cuts = [0, *(np.flatnonzero(paths[1:] != paths[:-1]) + 1).tolist(), len(paths)]
        for start, end in zip(cuts[:-1], cuts[1:]):
            path = paths[start]
            if path != current:
                if current is not None:
                    yield current, pa.Table.from_batches(pending)
                    done.add(current)
                if path in done:
                    raise HoodieError(f"the records of partition {path!r} reached this task in more than one run")
                current, pending = path, []
            pending.append(batch.slice(start, end - start))
    if current is not None:
        yield current, pa.Table.from_batches(pending)


class _CallsSince:
    """The storage calls of a task since the last time they were taken."""

    def __init__(self, counters: StorageCounters) -> None:
        self.counters = counters
        self.before = counters.snapshot()

    def take(self) -> dict[str, int]:
        calls, self.before = self.counters.since(self.before), self.counters.snapshot()
        return calls


@dataclass(frozen=True)
class _PlannedPartition:
    ordinal: int
    plan: WritePlan
    buckets: list[tuple[int, pa.Table]]
    contexts: list[TaskContext]


def _plan_partition(
    partition: str, records: pa.Table, spec: PartitionWriteSpec, slices: list[FileSlice], ordinal: int, stride: int
) -> _PlannedPartition | None:
    """Dedupe, tag and plan one partition, and ask for the markers of its files."""
    records = _in_input_order(records).drop_columns([SEQ_COLUMN])
    plan, buckets = plan_partitions(records, [partition], {partition: slices}, spec.group)
    if plan is None:
        return None
    contexts = [current_task_context(partition_id=local_id * stride + ordinal) for local_id, _ in buckets]
    make_markers_first([(plan.bucket(local_id), ctx) for (local_id, _), ctx in zip(buckets, contexts)], spec.group.wctx)
    return _PlannedPartition(ordinal, plan, buckets, contexts)


def _write_planned(planned: _PlannedPartition, spec: PartitionWriteSpec, calls: _CallsSince) -> Iterator[pa.RecordBatch]:
    """Write the files of a planned partition: a row per bucket, with the storage calls
    made since the previous row (tagging and planning included)."""
    for (local_id, bucket_records), ctx in zip(planned.buckets, planned.contexts):
        stat = run_bucket(BucketTask(planned.plan.bucket(local_id), bucket_records), ctx, spec.group.wctx)
        yield pa.RecordBatch.from_pydict({
            "partition": pa.array([planned.ordinal], pa.int32()),
            "bucket": pa.array([local_id], pa.int32()),
            "stat": pa.array([json.dumps(stat.to_json())], pa.string()),
            "calls": pa.array([json.dumps(calls.take())], pa.string()),
        })


def write_bucket_udf(plan: Broadcast[WritePlan], wctx: WriteContext) -> Callable[[tuple[pa.Scalar, ...], pa.Table], pa.Table]:
    """:func:`write_bucket_task` bound to its arguments, in the shape ``applyInArrow``
    takes: a plain two-argument function without annotations (PySpark inspects the
    function to choose how to call it, and cannot inspect a ``functools.partial``)."""

    def write_bucket(key, records):
        return write_bucket_task(key, records, plan, wctx)

    return write_bucket
