"""Prepare a batch for writing: record keys, partition paths, and dedupe by ordering field.

The output keeps the data columns and adds ``_hoodie_record_key`` and
``_hoodie_partition_path`` (and the internal ``__hoodie_delete`` flag). Dedupe keeps one
record per (partition, key): the one with the largest ordering value, the later one on a
tie (Hudi's ``preCombine`` with ``DefaultHoodieRecordPayload``).
"""
from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from hoodie.errors import RecordError
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


def dedupe(batch: pa.Table, ordering_field: str | None) -> pa.Table:
    """One record per (partition path, record key): largest ordering value, later on ties."""
    n = batch.num_rows
    if n <= 1:
        return batch
    # (unique costs half of count_distinct; keys are never null here)
    if len(pc.unique(batch.column("_hoodie_record_key"))) == n:
        return batch  # distinct keys make distinct (partition, key) pairs: the usual batch
    composite = _composite_key(batch)
    if len(pc.unique(composite)) == n:
        return batch
    # null ordering values lose against any value (sorted last within a key)
    order_cols: list[tuple[str, str, str]] = [("k", "ascending", "at_end")]
    arrays: dict[str, pa.Array] = {"k": composite, "i": pa.array(np.arange(n, dtype=np.int64))}
    if ordering_field is not None and ordering_field in batch.column_names:
        arrays["o"] = batch.column(ordering_field).combine_chunks()
        order_cols.append(("o", "descending", "at_end"))
    order_cols.append(("i", "descending", "at_end"))
    helper = pa.table(arrays)
    sorted_idx = pc.sort_indices(helper, sort_keys=order_cols)
    sorted_keys = pc.take(composite, sorted_idx).to_numpy(zero_copy_only=False)
    first = np.ones(n, dtype=bool)
    first[1:] = sorted_keys[1:] != sorted_keys[:-1]
    keep = np.sort(sorted_idx.to_numpy()[first])  # keep the batch's original order
    return batch.take(pa.array(keep))


def _composite_key(batch: pa.Table) -> pa.Array:
    keys = batch.column("_hoodie_record_key")
    parts = batch.column("_hoodie_partition_path")
    if pc.all(pc.equal(parts, "")).as_py():
        return keys.combine_chunks()
    return pc.binary_join_element_wise(parts, keys, "\x00").combine_chunks()
