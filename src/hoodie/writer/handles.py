"""Write handles: create a new base file, or merge incoming records into a file group's
latest base file (copy-on-write); log appends (merge-on-read) live in ``append_handle``.
Each writes its marker first and returns a WriteStat. ``run_bucket_group`` writes several
buckets in one task, sharing their Avro encoding and bloom hashing.

Merge semantics (``DefaultHoodieRecordPayload``, event time): an incoming version
replaces the stored record unless the merge rules keep the stored one
(:func:`hoodie.table.slice_reader.merge_rules.newer_wins`, the rules a merge-on-read read
and compaction follow: the stored record stays only when its ordering value is larger);
a delete removes it; untouched records keep their commit time and sequence number.
"""
from __future__ import annotations

import contextlib
import time
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from hoodie.engine.base import TaskContext
from hoodie.engine.runs import bounded_runs
from hoodie.errors import FileAlreadyExistsError
from hoodie.formats.bloom import BloomFilter, key_positions, new_bloom_filter
from hoodie.formats.bloom_footer import EncodedBloomFilter, filter_for_rewrite
from hoodie.formats.conform import conform
from hoodie.formats.meta_columns import META_COLUMNS, constant_column, stored_layout, with_meta_columns
from hoodie.formats.parquet import (
    BaseFileReader,
    BloomSettings,
    dictionary_columns,
    write_base_file,
)
from hoodie.layout import (
    PARTITION_METAFILE_PREFIX,
    base_file_name,
    partition_metadata_content,
)
from hoodie.markers import TimelineServerMarkers
from hoodie.storage.paths import relative, under
from hoodie.table.slice_reader.merge_rules import newer_wins
from hoodie.timeline.commit_metadata import NULL_COMMIT, RuntimeStats, WriteStat
from hoodie.writer.append_handle import append_marker_name, finish_append, prepare_appends, run_append, share_encoding
from hoodie.writer.context import WriteContext
from hoodie.writer.planner import APPEND, MERGE, Bucket
from hoodie.writer.schema import consecutive_slices, delete_mask, split_deletes, split_deletes_of_parts


@dataclass(frozen=True)
class BucketTask:
    bucket: Bucket
    records: pa.Table  # data columns + _hoodie_record_key + _hoodie_partition_path + delete flag


@dataclass(frozen=True)
class NewFile:
    """A new base file's content, prepared with the other new files of a task
    (:func:`_prepare_new_files`)."""

    rows: pa.Table  # in table layout, meta columns filled
    bloom_filter: BloomFilter | None
    use_dictionary: list[str]


def run_bucket(task: BucketTask, ctx: TaskContext, wctx: WriteContext, prepared: NewFile | None = None) -> WriteStat:
    """Write one bucket: merge into its base file, or create a new file group (whose
    rows and bloom filter a caller may have prepared already)."""
    started = time.monotonic()
    bucket = task.bucket
    if bucket.handle == APPEND:
        return run_append(bucket, task.records, ctx, wctx)
    partition, name, io_type = bucket_marker(bucket, ctx, wctx)
    if bucket.handle != MERGE:  # a merge's partition holds the file it merges into, and its metadata
        _ensure_partition_metadata(wctx, bucket.partition_path)
    incoming = task.records
    bloom_filter: BloomFilter | EncodedBloomFilter | None = None
    use_dictionary = None
    if prepared is not None:
        merged, counts = prepared.rows, (prepared.rows.num_rows, 0, 0)
        bloom_filter, use_dictionary = prepared.bloom_filter, prepared.use_dictionary
    elif _creates(bucket):
        winners = split_deletes(incoming)[0]
        merged, counts = _new_rows(winners, wctx, ctx, name), (winners.num_rows, 0, 0)
    else:
        merged, counts, bloom_filter = _merge(bucket, incoming, delete_mask(incoming), wctx, ctx, name)
    path = under(wctx.base_path, bucket.partition_path, name)
    # the marker before the file, not before the merge: a timeline server's answer to the
    # task's request for its markers (make_markers_first) arrives while the rows are merged
    wctx.marker_writer().create(partition, name, io_type)
    size = write_base_file(wctx.storage, path, merged, wctx.parquet, wctx.bloom, bloom_filter, use_dictionary)
    inserts, updates, deletes = counts
    elapsed = int((time.monotonic() - started) * 1000)
    return WriteStat(
        fileId=bucket.file_id,
        path=relative(bucket.partition_path, name),
        partitionPath=bucket.partition_path,
        prevCommit=bucket.base_instant or NULL_COMMIT,
        numWrites=merged.num_rows,
        numDeletes=deletes,
        numUpdateWrites=updates,
        numInserts=inserts,
        totalWriteBytes=size,
        fileSizeInBytes=size,
        runtimeStats=RuntimeStats(totalUpsertTime=elapsed if not bucket.is_new else 0, totalCreateTime=elapsed if bucket.is_new else 0),
    )


def bucket_marker(bucket: Bucket, ctx: TaskContext, wctx: WriteContext) -> tuple[str, str, str]:
    """The marker (partition, data file name, IO type) a bucket's handle makes first."""
    if bucket.handle == APPEND:
        return bucket.partition_path, append_marker_name(bucket, ctx.write_token), "APPEND"
    return bucket.partition_path, base_file_name(bucket.file_id, ctx.write_token, wctx.instant), "CREATE" if bucket.is_new else "MERGE"


def make_markers_first(buckets: list[tuple[Bucket, TaskContext]], wctx: WriteContext) -> None:
    """With timeline-server markers, the markers of a task's buckets are asked for
    together, in the background, before its first file (one or two of the server's batches
    instead of one a file); each handle waits for its marker just before writing its file.
    Direct markers are made by the handles."""
    writer = wctx.marker_writer()
    if isinstance(writer, TimelineServerMarkers):
        writer.request_all([bucket_marker(bucket, ctx, wctx) for bucket, ctx in buckets])


def _creates(bucket: Bucket) -> bool:
    return bucket.handle != APPEND and (bucket.is_new or bucket.base_path is None)


@dataclass(frozen=True)
class BucketGroup:
    """Several buckets written by one task; ``ids`` number them as single-bucket tasks
    would be, so write tokens and sequence numbers stay unique across the stage."""

    tasks: tuple[BucketTask, ...]
    ids: tuple[int, ...]


def group_buckets(tasks: list[BucketTask], workers: int) -> list[BucketGroup]:
    """The buckets as engine tasks. Log appends and new files, which share work, go into
    two groups a worker; each kind is dealt round-robin on its own, so every group gets its
    share of both (a new file costs about twice an append, and buckets alternate between
    the kinds partition by partition: dealing them together put all appends in some
    groups and all new files in others). Merges share nothing, so they come after, one a
    task, for the workers' loads to even out at the end."""
    appends = [i for i, t in enumerate(tasks) if t.bucket.handle == APPEND]
    creates = [i for i, t in enumerate(tasks) if t.bucket.handle != APPEND and _creates(t.bucket)]
    merges = [[i] for i, t in enumerate(tasks) if not (t.bucket.handle == APPEND or _creates(t.bucket))]
    n = max(1, min(2 * workers, len(appends) + len(creates)))
    # creates dealt from the last group backwards: with fewer items of a kind than groups,
    # the two kinds then fill different groups
    dealt = [sorted(appends[g::n] + creates[n - 1 - g :: n]) for g in range(n)]
    return [BucketGroup(tuple(tasks[i] for i in ids), tuple(ids)) for ids in [d for d in dealt if d] + merges]


def run_bucket_group(group: BucketGroup, ctx: TaskContext, wctx: WriteContext) -> list[WriteStat]:
    """Write a group's buckets, sharing the work that costs per call more than per
    record: the Avro encoding of all their log blocks is one pass, and so are the meta
    columns, the dictionary choice and the key hashing of the files they create (one
    ``key_positions`` call instead of ~500 numpy calls a file). Results in the group's
    order."""
    tasks = group.tasks
    contexts = [TaskContext(i, ctx.stage_id, ctx.attempt_id) for i in group.ids]
    make_markers_first([(t.bucket, c) for t, c in zip(tasks, contexts)], wctx)
    stats: list[WriteStat | None] = [None] * len(tasks)
    for batch in _batches([j for j, t in enumerate(tasks) if t.bucket.handle == APPEND], tasks):
        appends = prepare_appends([(tasks[j].bucket, tasks[j].records, contexts[j]) for j in batch], wctx)
        share_encoding(appends)
        for j, prepared in zip(batch, appends):
            stats[j] = finish_append(prepared, wctx)
    for batch in _batches([j for j, t in enumerate(tasks) if stats[j] is None], tasks):
        new_files = _prepare_new_files({j: tasks[j] for j in batch}, {j: contexts[j] for j in batch}, wctx)
        for j in batch:
            stats[j] = run_bucket(tasks[j], contexts[j], wctx, new_files.get(j))
    return [s for s in stats if s is not None]


# Records whose shared work is done in one pass at most: bounds the extra memory a group
# holds at once (encoded log blocks, or 240 bytes of bit positions a key).
_SHARED_RECORDS = 1 << 16


def _batches(indexes: list[int], tasks: tuple[BucketTask, ...]) -> list[list[int]]:
    """``indexes`` cut into consecutive runs of at most ``_SHARED_RECORDS`` records (a
    bucket larger than that is a run of its own)."""
    return bounded_runs(indexes, lambda j: tasks[j].records.num_rows, _SHARED_RECORDS)


def _prepare_new_files(tasks: dict[int, BucketTask], contexts: dict[int, TaskContext], wctx: WriteContext) -> dict[int, NewFile]:
    """The content of the files ``tasks`` create (by position), built for all of them in
    one pass (see :func:`~hoodie.formats.meta_columns.with_meta_columns`). Tasks whose
    records are all deletes, and a lone new file, are left to :func:`run_bucket`."""
    creates = {j: t for j, t in tasks.items() if _creates(t.bucket)}
    if len(creates) < 2:
        return {}
    split = split_deletes_of_parts([t.records for t in creates.values()])
    if not split.written.num_rows:
        return {}
    names = [base_file_name(t.bucket.file_id, contexts[j].write_token, wctx.instant) for j, t in creates.items()]
    prefixes = [f"{wctx.instant}_{contexts[j].partition_id}_" for j in creates]
    rows = with_meta_columns(split.written, wctx.data_schema, wctx.instant, prefixes, names, split.lengths)
    use_dictionary = dictionary_columns(rows, spread=True)
    filters = _new_file_filters(rows.column("_hoodie_record_key"), split.lengths, wctx.bloom)
    parts = consecutive_slices(rows, split.lengths)
    return {j: NewFile(part, filters[k] if filters else None, use_dictionary) for k, (j, part) in enumerate(zip(creates, parts)) if part.num_rows}


def _new_file_filters(keys: pa.ChunkedArray, lengths: np.ndarray, bloom: BloomSettings | None) -> list[BloomFilter]:
    """The bloom filters of consecutive runs of ``keys`` (``lengths`` each, one filter a
    file), hashed in one pass; none without a bloom index."""
    if bloom is None:
        return []
    # one filter per file; building them checks the sizing (a ConfigError names it)
    out = [new_bloom_filter(bloom.num_entries, bloom.fpp, bloom.filter_type, bloom.max_entries) for _ in lengths]
    positions = key_positions(keys, out[0].num_hashes, out[0].num_bits)
    at = 0
    for f, length in zip(out, lengths):
        if length:
            f.add_positions(positions[at : at + length])
        at += length
    return out


def _new_rows(records: pa.Table, wctx: WriteContext, ctx: TaskContext, file_name: str) -> pa.Table:
    """Incoming records with fresh meta columns, in table layout."""
    return with_meta_columns(records, wctx.data_schema, wctx.instant, [f"{wctx.instant}_{ctx.partition_id}_"], [file_name], np.array([records.num_rows]))


def _merge(
    bucket: Bucket, incoming: pa.Table, deletes_mask: np.ndarray, wctx: WriteContext, ctx: TaskContext, file_name: str
) -> tuple[pa.Table, tuple[int, int, int], BloomFilter | EncodedBloomFilter | None]:
    """The merged rows, (inserts, updates, deletes), and the old file's bloom filter
    extended with the inserted keys when it can serve the new file (see continue_filter)."""
    with BaseFileReader(wctx.storage, bucket.base_path) as reader:  # type: ignore[arg-type]
        old = reader.read()
        footer = reader.footer.index
    old_keys = old.column("_hoodie_record_key").combine_chunks()
    in_keys = incoming.column("_hoodie_record_key").combine_chunks()
    # position of each stored record's key among the incoming records (-1: untouched)
    match = pc.fill_null(pc.index_in(old_keys, value_set=in_keys), -1).to_numpy(zero_copy_only=False)
    touched = match >= 0
    incoming_pos = match[touched]
    old_pos = np.nonzero(touched)[0]
    is_delete = deletes_mask[incoming_pos]
    # event-time ordering: the stored record survives an update the merge rules say is older
    stored_wins = np.zeros(len(incoming_pos), dtype=bool)
    ordering = wctx.ordering_field
    if ordering is not None and ordering in old.column_names and ordering in incoming.column_names and len(incoming_pos):
        old_ord = old.column(ordering).take(pa.array(old_pos))
        new_ord = incoming.column(ordering).take(pa.array(incoming_pos))
        if not new_ord.type.equals(old_ord.type):
            new_ord = new_ord.cast(old_ord.type)
        stored_wins = ~newer_wins(old_ord, new_ord, is_delete)
    if not wctx.deletes_carry_ordering:
        stored_wins &= ~is_delete  # the delete operation carries no ordering: it always wins
    keep_old = ~touched
    keep_old[old_pos[stored_wins]] = True
    updated_in = incoming_pos[~is_delete & ~stored_wins]
    matched_in = np.zeros(incoming.num_rows, dtype=bool)
    matched_in[incoming_pos] = True
    insert_in = np.nonzero(~matched_in & ~deletes_mask)[0]
    kept = old.filter(pa.array(keep_old))
    kept = kept.set_column(kept.schema.get_field_index("_hoodie_file_name"), "_hoodie_file_name", constant_column(file_name, kept.num_rows))
    kept = _to_layout(kept, wctx.data_schema)
    winners_idx = np.concatenate([updated_in, insert_in])
    winners = _new_rows(incoming.take(pa.array(winners_idx)), wctx, ctx, file_name)
    merged = pa.concat_tables([kept, winners])
    counts = (len(insert_in), len(updated_in), int((is_delete & ~stored_wins).sum()))
    bloom = wctx.bloom
    f: BloomFilter | EncodedBloomFilter | None = None
    if bloom is not None and footer is not None:
        inserted = incoming.column("_hoodie_record_key").take(pa.array(insert_in))
        f = filter_for_rewrite(footer.bloom, inserted, merged.num_rows, bloom.num_entries, bloom.fpp, bloom.filter_type, bloom.max_entries)
    return merged, counts, f


def _to_layout(old: pa.Table, data_schema: pa.Schema) -> pa.Table:
    """A stored file's rows in the current table layout (schema may have evolved)."""
    names = set(old.schema.names)
    meta = [old.column(m).cast(pa.string()) if m in names else pa.nulls(old.num_rows, pa.string()) for m in META_COLUMNS]
    data = conform(old, data_schema)
    return pa.Table.from_arrays(meta + data.columns, schema=stored_layout(data_schema))


def _ensure_partition_metadata(wctx: WriteContext, partition_path: str) -> None:
    path = under(wctx.base_path, partition_path, PARTITION_METAFILE_PREFIX)
    if wctx.storage.exists(path):
        return
    with contextlib.suppress(FileAlreadyExistsError):  # another task created it first
        wctx.storage.create_new(path, partition_metadata_content(wctx.instant, partition_path))
