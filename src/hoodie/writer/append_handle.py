"""Append handle (merge-on-read): updates and deletes of one file group become a new log
file on its latest slice, ``.<fileId>_<baseInstant>.log.<version>_<token>``, holding a
data block (the updated records with their meta fields: Avro by default, Parquet with
``hoodie.logfile.data.block.format=parquet``) and a delete block.

Like Hudi 0.14+, every write creates the next log version instead of appending to an
existing file, so a crash can never tear a block that was already committed. An append is
prepared (marker, blocks) and then finished (the file, the stat), so that a task writing
several can build their log records in one pass (``prepare_appends``) and encode their
data blocks together in between (``share_encoding``).
"""
from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from hoodie.engine.base import TaskContext
from hoodie.formats.log import AvroDataBlock, DeleteBlock, DeleteRecord, ParquetDataBlock, encode_together, write_log_file
from hoodie.formats.log.blocks import LogBlock, OrderingType
from hoodie.formats.meta_columns import with_meta_columns
from hoodie.layout import LogFileName, base_file_name
from hoodie.storage.paths import relative, under
from hoodie.timeline.commit_metadata import RuntimeStats, WriteStat
from hoodie.writer.context import WriteContext
from hoodie.writer.planner import Bucket
from hoodie.writer.schema import consecutive_slices, split_deletes, split_deletes_of_parts


def append_marker_name(bucket: Bucket, token: str) -> str:
    """Hudi 0.x names an APPEND marker after a placeholder base file of the slice; its
    write token identifies the log file the task wrote."""
    return base_file_name(bucket.file_id, token, bucket.base_instant or "")


@dataclass
class PreparedAppend:
    """An append whose marker exists and whose blocks are built, not yet written."""

    bucket: Bucket
    log_name: str
    blocks: list[LogBlock]
    updates: int
    deletes: int
    started: float


def run_append(bucket: Bucket, incoming: pa.Table, ctx: TaskContext, wctx: WriteContext) -> WriteStat:
    return finish_append(prepare_append(bucket, incoming, ctx, wctx), wctx)


def prepare_append(bucket: Bucket, incoming: pa.Table, ctx: TaskContext, wctx: WriteContext) -> PreparedAppend:
    """Write the marker and build the blocks of one append (see :func:`share_encoding`)."""
    started = time.monotonic()
    updates, removed = split_deletes(incoming)
    records = _log_records(updates, [bucket], [ctx], wctx, np.array([updates.num_rows]))
    return _prepare(bucket, ctx, wctx, records, removed, started)


def prepare_appends(appends: list[tuple[Bucket, pa.Table, TaskContext]], wctx: WriteContext) -> list[PreparedAppend]:
    """:func:`prepare_append` of several appends (bucket, incoming records, task context),
    their log records built in one pass."""
    if len(appends) < 2:
        return [prepare_append(bucket, incoming, ctx, wctx) for bucket, incoming, ctx in appends]
    started = time.monotonic()
    split = split_deletes_of_parts([incoming for _, incoming, _ in appends])
    records = _log_records(split.written, [a[0] for a in appends], [a[2] for a in appends], wctx, split.lengths)
    parts = consecutive_slices(records, split.lengths)
    return [_prepare(bucket, ctx, wctx, part, split.deletes_of(i, incoming), started) for i, ((bucket, incoming, ctx), part) in enumerate(zip(appends, parts))]


def _prepare(bucket: Bucket, ctx: TaskContext, wctx: WriteContext, updates: pa.Table, removed: pa.Table, started: float) -> PreparedAppend:
    log_name = LogFileName(bucket.file_id, bucket.base_instant or "", bucket.next_log_version, ctx.write_token).name
    wctx.marker_writer().create(bucket.partition_path, append_marker_name(bucket, ctx.write_token), "APPEND")
    blocks: list[LogBlock] = []
    if updates.num_rows:
        if wctx.log_block_format == "parquet":  # a whole Parquet file as the block's content
            blocks.append(ParquetDataBlock.create(updates, wctx.instant, wctx.avro_schema_with_meta, compression=wctx.parquet.codec))
        else:
            blocks.append(AvroDataBlock.create(updates, wctx.avro_schema_with_meta, wctx.instant))
    if removed.num_rows:
        blocks.extend(DeleteBlock.create(records, wctx.instant, wctx.avro_schema_with_meta) for records in _delete_blocks(removed, wctx))
    return PreparedAppend(bucket, log_name, blocks, updates.num_rows, removed.num_rows, started)


def share_encoding(appends: list[PreparedAppend]) -> None:
    """Encode the Avro data blocks of several appends in one pass (``encode_together``):
    a block of a thousand records spends most of its encoding time in per-call overhead."""
    data = [(a, i) for a in appends for i, b in enumerate(a.blocks) if isinstance(b, AvroDataBlock)]
    if len(data) < 2:
        return
    encoded = encode_together([a.blocks[i] for a, i in data])  # type: ignore[misc]
    for (a, i), block in zip(data, encoded):
        a.blocks[i] = block


def finish_append(a: PreparedAppend, wctx: WriteContext) -> WriteStat:
    """Write the log file of a prepared append; its write stat."""
    bucket = a.bucket
    path = under(wctx.base_path, bucket.partition_path, a.log_name)
    size = write_log_file(wctx.storage, path, a.blocks)
    base_name = bucket.base_path.rsplit("/", 1)[-1] if bucket.base_path else ""
    if bucket.base_instant and not base_name.endswith(f"_{bucket.base_instant}.parquet"):
        base_name = ""  # the slice a pending compaction opens has no base file yet
    return WriteStat(
        fileId=bucket.file_id,
        path=relative(bucket.partition_path, a.log_name),
        partitionPath=bucket.partition_path,
        prevCommit=bucket.base_instant or "null",
        numWrites=a.updates,
        numDeletes=a.deletes,
        numUpdateWrites=a.updates,
        numInserts=0,
        totalWriteBytes=size,
        fileSizeInBytes=size,
        runtimeStats=RuntimeStats(totalUpsertTime=int((time.monotonic() - a.started) * 1000)),
        logVersion=bucket.next_log_version,
        logOffset=0,
        baseFile=base_name,
        logFiles=[a.log_name],
    )


def _log_records(records: pa.Table, buckets: list[Bucket], contexts: list[TaskContext], wctx: WriteContext, lengths: np.ndarray) -> pa.Table:
    """Records (runs of ``lengths``, one per bucket) with meta fields as Java writes them
    to logs: the file name is the file id."""
    prefixes = [f"{wctx.instant}_{ctx.partition_id}_" for ctx in contexts]
    return with_meta_columns(records, wctx.data_schema, wctx.instant, prefixes, [b.file_id for b in buckets], lengths)


def _delete_blocks(removed: pa.Table, wctx: WriteContext) -> list[list[DeleteRecord]]:
    """The delete entries of a log file, one delete block per list. A delete without an
    ordering value carries the default value 0 (an ``IntWrapper``, exactly what Spark's
    DELETE writes; it always wins, as a delete without a value does in every merge); one
    with a value (``_hoodie_is_deleted`` rows of an upsert) carries it, compared like a
    data record's. hudi-rs refuses a delete block mixing ordering types, so the two kinds
    go in a block each."""
    keys = removed.column("_hoodie_record_key").to_pylist()
    parts = removed.column("_hoodie_partition_path").to_pylist()
    f = wctx.ordering_field
    if not (f and f in removed.column_names and removed.column(f).null_count < removed.num_rows and wctx.deletes_carry_ordering):
        return [[DeleteRecord(k, p, 0, OrderingType.INT) for k, p in zip(keys, parts)]]
    kind = OrderingType.for_arrow_type(removed.schema.field(f).type)
    with_value: list[DeleteRecord] = []
    without: list[DeleteRecord] = []
    for k, p, v in zip(keys, parts, removed.column(f).to_pylist()):
        if v is None:
            without.append(DeleteRecord(k, p, 0, OrderingType.INT))
        else:
            with_value.append(DeleteRecord(k, p, v, kind))
    return [records for records in (with_value, without) if records]
