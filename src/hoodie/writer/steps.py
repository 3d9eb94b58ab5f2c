"""Engine-neutral steps of the write pipeline over Arrow batches: dedupe and tag, profile,
bucket assignment and the split into buckets.

The pipeline (:mod:`hoodie.writer.pipeline`) runs them wherever the engine holds the
records: in process on the whole batch, or inside Spark tasks on shuffled pieces. Each is
a pure function of its inputs (plus reads of base files for tagging); none of them starts
an instant, plans or writes a file.
"""
from __future__ import annotations

import functools
from collections import Counter, defaultdict
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from hoodie.engine.base import Engine, TaskContext
from hoodie.index import BucketSpec, FileKeyIndex, FileRef, IndexSettings, metadata_indexes, tag_partition
from hoodie.index.bucket import bucket_ids, locate_buckets, new_bucket_placeholder
from hoodie.storage.base import Storage
from hoodie.table.file_group import FileSlice
from hoodie.writer.global_tag import tag_globally
from hoodie.writer.planner import PartitionProfile, WritePlan, assign_insert_buckets
from hoodie.writer.prepare import dedupe
from hoodie.writer.schema import (
    BASE_INSTANT_COLUMN,
    BUCKET_COLUMN,
    DELETE_COLUMN,
    FILE_ID_COLUMN,
    consecutive_slices,
)
from hoodie.writer.settings import WriteSettings


def dedupe_and_tag(
    records: pa.Table,
    refs_by_partition: Mapping[str, list[FileRef]],
    storage: Storage,
    settings: WriteSettings,
    engine: Engine | None = None,
) -> pa.Table:
    """Keyed records (in input order) made ready to plan: deduped when the write combines,
    tagged with the file group of every existing key when it consults the index (then
    what tagging shows needs no writing is dropped, :func:`after_tagging`), else given
    null locations. Every record of a key must be in ``records`` (dedupe compares them).
    """
    if settings.combine:
        records = dedupe(records, settings.ordering_field, by_key=settings.index.is_global)
    if settings.index.bucket is not None:
        return drop_unmatched_deletes(tag_by_bucket(records, refs_by_partition, settings.index.bucket))
    if not settings.tags_records:
        return untagged(records)
    if settings.index.is_global:
        workers = engine.parallelism if engine is not None else 1
        return after_tagging(tag_globally(records, settings.index, settings.ordering_field, workers), settings.operation)
    return after_tagging(tag_records(records, refs_by_partition, storage, settings.index, engine), settings.operation)


def index_refs(slices: list[FileSlice], index: IndexSettings) -> list[FileRef]:
    """What the index is given of a partition's latest ``slices``: every file group for
    the bucket index (it reads no file), else the base files (:func:`file_refs`)."""
    if index.bucket is not None:
        return [FileRef(s.file_id, s.base_instant, s.base_file.path if s.base_file else "", s.partition_path) for s in slices]
    return file_refs(slices)


def file_refs(slices: list[FileSlice]) -> list[FileRef]:
    """The base files of ``slices`` (latest slices) as the index sees them, each with its
    slice when it has log files (a key may live only there)."""
    return [
        FileRef(s.file_id, s.base_instant, s.base_file.path, s.partition_path, s if s.log_files else None)
        for s in slices
        if s.base_file is not None
    ]


def tag_records(
    records: pa.Table,
    refs_by_partition: Mapping[str, list[FileRef]],
    storage: Storage,
    settings: IndexSettings,
    engine: Engine | None = None,
) -> pa.Table:
    """Add the file id and base instant of every record whose key already exists.

    One task per partition that has existing files (keys are unique per partition).
    """
    if not any(refs_by_partition.values()):
        return untagged(records)
    n = records.num_rows
    parts = records.column("_hoodie_partition_path").combine_chunks()
    keys = records.column("_hoodie_record_key").combine_chunks()
    work = [
        (partition, idx, refs_by_partition[partition])
        for partition, idx in group_indices(parts).items()
        if refs_by_partition.get(partition)
    ]
    # The bloom source (the metadata table) is asked once for the files of every
    # partition: a lookup per task would read its file groups once per partition.
    source = settings.bloom_source if settings.index_type == "BLOOM" else None
    kept = metadata_indexes(source, (ref for _, _, refs in work for ref in refs)) if source is not None else None
    tasks = [TagTask(keys.take(pa.array(idx)), refs, _kept_of(kept, refs)) for _, idx, refs in work]
    run = functools.partial(run_tag_task, storage=storage, settings=settings)
    results = (engine.map(run, tasks, "tag") if engine is not None else [run(t, None) for t in tasks])
    # Per record, the position of its file in all partitions' refs laid end to end (-1:
    # not found); the id and instant columns are then one take each from those refs, not
    # a Python object per record.
    found = np.full(n, -1, dtype=np.int64)
    all_refs: list[FileRef] = []
    for (_, idx, refs), file_pos in zip(work, results):
        hit = file_pos >= 0
        found[idx[hit]] = file_pos[hit] + len(all_refs)
        all_refs.extend(refs)
    at = pa.array(found, mask=found < 0)
    file_ids = pa.array([r.file_id for r in all_refs], pa.string()).take(at)
    base_instants = pa.array([r.base_instant for r in all_refs], pa.string()).take(at)
    records = _drop(records, FILE_ID_COLUMN, BASE_INSTANT_COLUMN)
    return records.append_column(FILE_ID_COLUMN, file_ids).append_column(BASE_INSTANT_COLUMN, base_instants)


def tag_by_bucket(records: pa.Table, refs_by_partition: Mapping[str, list[FileRef]], spec: BucketSpec) -> pa.Table:
    """Add the file group of every record's bucket (:mod:`hoodie.index.bucket`): the
    group's id and base instant where its partition has one; else, for a record to write,
    its bucket's placeholder id, which the plan turns into a new file group of that
    bucket; a delete there has nothing to delete (null, dropped after). Reads no file."""
    n = records.num_rows
    buckets = bucket_ids(records.column("_hoodie_record_key"), spec)
    deletes = records.column(DELETE_COLUMN).combine_chunks().to_numpy(zero_copy_only=False)
    # per record, a position in the (file id, base instant) pairs of every partition laid
    # end to end (-1: null): the columns are then one take each
    found = np.full(n, -1, dtype=np.int64)
    ids: list[str] = []
    instants: list[str | None] = []
    for partition, idx in group_indices(records.column("_hoodie_partition_path")).items():
        refs = refs_by_partition.get(partition, [])
        pos = locate_buckets(buckets[idx], [r.file_id for r in refs], spec, partition)
        hit = pos >= 0
        found[idx[hit]] = pos[hit] + len(ids)
        ids.extend(r.file_id for r in refs)
        instants.extend(r.base_instant for r in refs)
        new = ~hit & ~deletes[idx]
        if new.any():
            wanted, which = np.unique(buckets[idx[new]], return_inverse=True)
            found[idx[new]] = which.ravel() + len(ids)
            ids.extend(new_bucket_placeholder(int(b)) for b in wanted)
            instants.extend([None] * len(wanted))
    at = pa.array(found, mask=found < 0)
    records = _drop(records, FILE_ID_COLUMN, BASE_INSTANT_COLUMN)
    return records.append_column(FILE_ID_COLUMN, pa.array(ids, pa.string()).take(at)).append_column(
        BASE_INSTANT_COLUMN, pa.array(instants, pa.string()).take(at)
    )


def untagged(records: pa.Table) -> pa.Table:
    """``records`` as inserts: null file ids and base instants."""
    n = records.num_rows
    records = _drop(records, FILE_ID_COLUMN, BASE_INSTANT_COLUMN)
    return records.append_column(FILE_ID_COLUMN, pa.nulls(n, pa.string())).append_column(BASE_INSTANT_COLUMN, pa.nulls(n, pa.string()))


@dataclass(frozen=True)
class TagTask:
    keys: pa.Array
    refs: list[FileRef]
    kept: Mapping[str, FileKeyIndex] | None = None  # the bloom source's ranges and filters of refs, looked up already


def _kept_of(kept: Mapping[str, FileKeyIndex] | None, refs: list[FileRef]) -> dict[str, FileKeyIndex] | None:
    return None if kept is None else {r.path: kept[r.path] for r in refs if r.path in kept}


def run_tag_task(task: TagTask, ctx: TaskContext | None, storage: Storage, settings: IndexSettings) -> np.ndarray:
    return tag_partition(task.keys, task.refs, storage, settings, task.kept).file_pos


def group_indices(values: pa.Array | pa.ChunkedArray) -> dict[Any, np.ndarray]:
    """Row indices of each distinct value."""
    if len(values) == 0:
        return {}
    if isinstance(values, pa.ChunkedArray):
        values = values.combine_chunks()
    encoded = values.dictionary_encode()
    codes = encoded.indices.to_numpy(zero_copy_only=False)
    if len(encoded.dictionary) <= 1 << 16:
        # numpy sorts 16-bit integers stably by radix sort: ~6x faster than int32's
        codes = codes.astype(np.uint16)
    order = np.argsort(codes, kind="stable")
    bounds = np.flatnonzero(np.diff(codes[order])) + 1
    dictionary = encoded.dictionary.to_pylist()
    out: dict[str, np.ndarray] = {}
    for chunk in np.split(order, bounds):
        out[dictionary[codes[chunk[0]]]] = chunk
    return out


def profile(records: pa.Table) -> dict[str, PartitionProfile]:
    """Per partition: records per existing file group (updates, deletes) and new inserts.

    Deletes of keys that do not exist are not work: they are dropped by the caller.
    """
    # counted by Arrow (a null file id, an insert, is a group of its own)
    counts = records.select(["_hoodie_partition_path", FILE_ID_COLUMN]).group_by(["_hoodie_partition_path", FILE_ID_COLUMN]).aggregate([([], "count_all")])
    updates: dict[str, dict[str, int]] = defaultdict(dict)
    inserts: Counter[str] = Counter()
    for p, f, n in zip(*(counts.column(c).to_pylist() for c in ("_hoodie_partition_path", FILE_ID_COLUMN, "count_all"))):
        if f is None:
            inserts[p] += n
        else:
            updates[p][f] = n
    return {p: PartitionProfile(dict(updates.get(p, {})), inserts.get(p, 0)) for p in set(updates) | set(inserts)}


def drop_unmatched_deletes(records: pa.Table) -> pa.Table:
    """Deletes of keys not in the table have nothing to delete."""
    unmatched_delete = pc.and_(records.column(DELETE_COLUMN), pc.is_null(records.column(FILE_ID_COLUMN)))
    if not pc.any(unmatched_delete).as_py():
        return records
    return records.filter(pc.invert(unmatched_delete))


def after_tagging(records: pa.Table, operation: str) -> pa.Table:
    """Drop what tagging showed needs no writing: existing keys of an insert that drops
    duplicates, and deletes of keys the table does not hold."""
    if operation == "insert":
        records = records.filter(pc.is_null(records.column(FILE_ID_COLUMN)))
    return drop_unmatched_deletes(records)


def assign_buckets(records: pa.Table, plan: WritePlan) -> pa.Table:
    """Add the bucket id of every record: its file group, or an insert target."""
    n = records.num_rows
    bucket = np.full(n, -1, dtype=np.int32)
    parts = records.column("_hoodie_partition_path").combine_chunks()
    fids = records.column(FILE_ID_COLUMN).combine_chunks()
    keys = records.column("_hoodie_record_key").combine_chunks()
    is_insert = pc.is_null(fids).to_numpy(zero_copy_only=False)
    upd = np.flatnonzero(~is_insert)
    if len(upd):
        # one lookup per distinct (partition, file group), then a numpy take per record
        pair_codes = []
        for column in (parts, fids):
            encoded = column.take(pa.array(upd)).dictionary_encode()
            pair_codes.append((encoded.indices.to_numpy(zero_copy_only=False).astype(np.int64), encoded.dictionary.to_pylist()))
        (p_codes, p_names), (f_codes, f_names) = pair_codes
        _, first, inverse = np.unique(p_codes * len(f_names) + f_codes, return_index=True, return_inverse=True)
        lookup = np.array([plan.update_bucket[(p_names[p_codes[i]], f_names[f_codes[i]])] for i in first], dtype=np.int32)
        bucket[upd] = lookup[inverse.ravel()]
    ins = np.flatnonzero(is_insert)
    if len(ins):
        insert_keys = keys.take(pa.array(ins))
        for partition, idx in group_indices(parts.take(pa.array(ins))).items():
            bucket[ins[idx]] = assign_insert_buckets(insert_keys.take(pa.array(idx)), plan.insert_targets[partition])
    return _drop(records, BUCKET_COLUMN).append_column(BUCKET_COLUMN, pa.array(bucket))


def split_by_bucket(records: pa.Table) -> list[tuple[int, pa.Table]]:
    """The rows of each bucket (without the bucket column), by bucket id: one take in
    bucket order, then zero-copy slices, cheaper than a take per bucket."""
    order = sorted((int(b), idx) for b, idx in group_indices(records.column(BUCKET_COLUMN)).items())
    if not order:
        return []
    ordered = records.drop_columns([BUCKET_COLUMN]).take(pa.array(np.concatenate([idx for _, idx in order])))
    return list(zip([b for b, _ in order], consecutive_slices(ordered, [len(idx) for _, idx in order])))


def _drop(table: pa.Table, *names: str) -> pa.Table:
    present = [n for n in names if n in table.column_names]
    return table.drop_columns(present) if present else table
