"""Prepare a batch for writing: record keys, partition paths, and dedupe by ordering field.

The output keeps the data columns and adds ``_hoodie_record_key`` and
``_hoodie_partition_path`` (and the internal ``__hoodie_delete`` flag). Dedupe keeps one
record per (partition, key): the version that survives when the records meet in batch
order under the table's event-time rules (:mod:`hoodie.table.slice_reader.merge_rules`,
the rules every merge of two versions follows): the largest ordering value, the later
record on a tie (Hudi's ``preCombine`` with ``DefaultHoodieRecordPayload``).
"""
from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from hoodie.errors import RecordError
from hoodie.table.slice_reader.merge_rules import MergeMode, fold_versions, surviving_versions
from hoodie.table.slice_reader.ordering import column_ordering_values, columnar_kind, sort_keys
from hoodie.writer.keygen import KeyGenerator
from hoodie.writer.schema import DELETE_COLUMN

IS_DELETED_FIELD = "_hoodie_is_deleted"


def add_keys(batch: pa.Table, keygen: KeyGenerator, is_delete: bool) -> pa.Table:
    """Append key, partition path and the delete flag to ``batch``."""
    keys = keygen.record_keys(batch)
    partitions = keygen.partition_paths(batch)
    if is_delete:
        deletes = pa.array(np.ones(batch.num_rows, dtype=bool))
    elif IS_DELETED_FIELD in batch.column_names:
        deletes = pc.fill_null(batch.column(IS_DELETED_FIELD), False).combine_chunks()
    else:
        deletes = pa.array(np.zeros(batch.num_rows, dtype=bool))
    for name in ("_hoodie_record_key", "_hoodie_partition_path", DELETE_COLUMN):
        if name in batch.column_names:
            batch = batch.drop_columns([name])
    return batch.append_column("_hoodie_record_key", keys).append_column("_hoodie_partition_path", partitions).append_column(DELETE_COLUMN, deletes)


def check_ordering_field(batch: pa.Table, field: str | None, required: bool) -> None:
    if field is None:
        return
    if field not in batch.column_names and required:
        raise RecordError(f"ordering (precombine) field {field!r} is not a column of the batch (columns: {', '.join(batch.column_names)})")


def dedupe(batch: pa.Table, ordering_field: str | None, by_key: bool = False) -> pa.Table:
    """One record per (partition path, record key), or per record key with ``by_key``
    (a global index: a key is one record whatever partitions its records name, as Hudi
    dedupes for one), the one the merge rules keep."""
    n = batch.num_rows
    if n <= 1:
        return batch
    # (unique costs half of count_distinct; keys are never null here)
    if len(pc.unique(batch.column("_hoodie_record_key"))) == n:
        return batch  # distinct keys make distinct (partition, key) pairs: the usual batch
    encoded = (batch.column("_hoodie_record_key").combine_chunks() if by_key else _composite_key(batch)).dictionary_encode()
    keys = len(encoded.dictionary)
    if keys == n:
        return batch
    codes = encoded.indices.to_numpy(zero_copy_only=False).astype(np.int64)
    if ordering_field is None or ordering_field not in batch.column_names:
        winners = surviving_versions(codes, keys, None)  # commit time: the latest
    else:
        winners = _event_time_winners(batch, codes, keys, ordering_field)
    return batch.take(pa.array(np.sort(winners)))  # keep the batch's order


def _event_time_winners(batch: pa.Table, codes: np.ndarray, keys: int, ordering_field: str) -> np.ndarray:
    """Column at a time when the ordering values are totally ordered and no delete lacks
    an ordering value (a commit-time delete always wins); otherwise record by record."""
    column = batch.column(ordering_field)
    deletes = batch.column(DELETE_COLUMN).to_numpy(zero_copy_only=False)
    kind = columnar_kind(column.type)
    order = sort_keys(column, kind) if kind is not None else None
    if order is not None and not (deletes & pc.is_null(column).to_numpy(zero_copy_only=False)).any():
        return surviving_versions(codes, keys, order)
    return fold_versions(codes, keys, column_ordering_values([column]), deletes, MergeMode.EVENT_TIME_ORDERING)


def _composite_key(batch: pa.Table) -> pa.Array:
    keys = batch.column("_hoodie_record_key")
    parts = batch.column("_hoodie_partition_path")
    if pc.all(pc.equal(parts, "")).as_py():
        return keys.combine_chunks()
    return pc.binary_join_element_wise(parts, keys, "\x00").combine_chunks()
