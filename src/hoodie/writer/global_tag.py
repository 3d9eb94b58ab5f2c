"""Tagging with a global index (RECORD_INDEX): each key where the index places it,
whatever partition its record names, with Apache Hudi's rules for a key whose record
names another partition than the one it is in.

* ``hoodie.record.index.update.partition.path=false`` (the default): the record updates
  (or deletes) the key where it is; its partition path becomes that partition (its data
  columns are written as given), as Hudi's ``tagGlobalLocationBackToRecords``.
* ``true``: a delete is tagged where the key is. Otherwise the record is merged with the
  stored one as Hudi's ``mergeForPartitionUpdatesIfNeeded`` does: when the stored record
  wins (a larger ordering value), the record is tagged where the key is (the write's
  merge keeps the stored record); when the incoming one wins, a delete of the key is
  tagged where it was and the record is inserted into its new partition; when the index
  names a key whose record is gone, it is an insert.

The records must be deduplicated by key alone (a global index's dedupe), so each key is
one record here.
"""
from __future__ import annotations

from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from hoodie.formats.meta_columns import PARTITION_PATH, RECORD_KEY
from hoodie.index import GlobalLocations, IndexSettings, locate_keys
from hoodie.writer.schema import BASE_INSTANT_COLUMN, DELETE_COLUMN, FILE_ID_COLUMN


def tag_globally(records: pa.Table, index: IndexSettings, ordering_field: str | None, workers: int = 1) -> pa.Table:
    """``records`` (keyed, one per key) with the file id of every key the record index
    holds, partition paths and extra delete rows as the module docstring says; the index
    is read on up to ``workers`` threads (the engine's parallelism)."""
    if index.locator is None:
        raise ValueError(f"hoodie.index.type={index.index_type} needs the record index's locator, which the write did not wire")
    keys = records.column(RECORD_KEY).combine_chunks()
    given = records.column(PARTITION_PATH).combine_chunks()
    found = locate_keys(keys, index.locator, workers=workers)
    hit = pc.is_valid(found.file_ids)
    moved = pc.fill_null(pc.and_(hit, pc.not_equal(found.partitions, given)), False).to_numpy(zero_copy_only=False)
    if not index.update_partition_path or not moved.any():
        return _with_location(records, pc.if_else(hit, found.partitions, given), found.file_ids)
    deletes = records.column(DELETE_COLUMN).combine_chunks().to_numpy(zero_copy_only=False)
    moving = np.flatnonzero(moved & ~deletes)
    wins, gone = _incoming_wins(records, moving, found, index, ordering_field)
    # the key is inserted into its new partition: where the incoming record wins (its old
    # place gets a delete) or the stored record is gone
    to_insert = moving[wins | gone]
    partitions = found.partitions.to_numpy(zero_copy_only=False).copy()
    file_ids = found.file_ids.to_numpy(zero_copy_only=False).copy()
    partitions[to_insert] = given.take(pa.array(to_insert)).to_numpy(zero_copy_only=False)
    file_ids[to_insert] = None
    partitions[~hit.to_numpy(zero_copy_only=False)] = given.filter(pc.invert(hit)).to_numpy(zero_copy_only=False)
    tagged = _with_location(records, pa.array(partitions, pa.string()), pa.array(file_ids, pa.string()))
    removed = moving[wins]
    if not len(removed):
        return tagged
    at = pa.array(removed)
    olds = records.take(at)
    olds = olds.set_column(olds.schema.get_field_index(DELETE_COLUMN), DELETE_COLUMN, pa.array(np.ones(len(removed), dtype=bool)))
    olds = _with_location(olds, found.partitions.take(at), found.file_ids.take(at))
    return pa.concat_tables([tagged, olds])


def _incoming_wins(
    records: pa.Table, moving: np.ndarray, found: GlobalLocations, index: IndexSettings, ordering_field: str | None
) -> tuple[np.ndarray, np.ndarray]:
    """Of the records at ``moving``: whether each beats the stored record of its key
    (event-time ordering: a larger or equal ordering value, a missing one always), and
    whether the stored record is gone."""
    assert index.locator is not None
    located = {
        k: (p, f)
        for k, p, f in zip(
            records.column(RECORD_KEY).take(pa.array(moving)).to_pylist(),
            found.partitions.take(pa.array(moving)).to_pylist(),
            found.file_ids.take(pa.array(moving)).to_pylist(),
        )
    }
    has_ordering = ordering_field is not None and ordering_field in records.column_names
    stored = index.locator.stored_values(located, ordering_field if has_ordering else None)
    keys = list(located)
    gone = np.array([k not in stored for k in keys], dtype=bool)
    if not has_ordering:
        return ~gone, gone
    assert ordering_field is not None
    incoming = records.column(ordering_field).take(pa.array(moving)).to_pylist()
    wins = np.array([not g and _not_older(new, stored.get(k)) for k, new, g in zip(keys, incoming, gone)], dtype=bool)
    return wins, gone


def _not_older(incoming: Any, stored: Any) -> bool:
    if incoming is None or stored is None:
        return True  # nothing to compare: the newer version wins
    try:
        return bool(incoming >= stored)
    except TypeError:
        return True


def _with_location(records: pa.Table, partitions: pa.Array, file_ids: pa.Array) -> pa.Table:
    records = records.set_column(records.schema.get_field_index(PARTITION_PATH), PARTITION_PATH, partitions)
    present = [c for c in (FILE_ID_COLUMN, BASE_INSTANT_COLUMN) if c in records.column_names]
    records = records.drop_columns(present) if present else records
    return records.append_column(FILE_ID_COLUMN, file_ids).append_column(BASE_INSTANT_COLUMN, pa.nulls(records.num_rows, pa.string()))
