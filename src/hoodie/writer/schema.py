"""Schemas of incoming batches: normalise to what a Hudi table stores, and check a batch
against the table's schema before anything is written.

Hudi's Avro model has no 8/16-bit integers, unsigned types or nanosecond timestamps; Java
writes them as int/long and microseconds, so hoodie does the same. Allowed evolution is
Hudi's default: new nullable columns may appear; a column may widen (int → long → double,
float → double); dropping or otherwise retyping a column is an error naming the column.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from hoodie.errors import SchemaError

# Columns hoodie adds to a batch while it moves through the write pipeline, never stored.
INTERNAL_PREFIX = "__hoodie_"
DELETE_COLUMN = "__hoodie_delete"


def delete_mask(records: pa.Table) -> np.ndarray:
    """Per record, whether it deletes its key (all False without a delete flag column)."""
    if DELETE_COLUMN not in records.column_names:
        return np.zeros(records.num_rows, bool)
    return records.column(DELETE_COLUMN).to_numpy(zero_copy_only=False)


def consecutive_slices(table: pa.Table, lengths: Sequence[int] | np.ndarray) -> list[pa.Table]:
    """``table`` cut into consecutive zero-copy slices of ``lengths`` rows each."""
    out, offset = [], 0
    for n in lengths:
        out.append(table.slice(offset, int(n)))
        offset += int(n)
    return out


@dataclass(frozen=True)
class SplitParts:
    """Several buckets' records concatenated, split into the records written and the
    deletes (:func:`split_deletes_of_parts`)."""

    written: pa.Table  # every part's records that are not deletes, part after part
    lengths: np.ndarray  # rows of each part in ``written``
    deletes: list[np.ndarray]  # each part's delete mask

    def deletes_of(self, i: int, part: pa.Table) -> pa.Table:
        """The deletes among ``part``, the ``i``-th part."""
        mask = self.deletes[i]
        return part.filter(pa.array(mask)) if mask.any() else part.slice(0, 0)


def split_deletes_of_parts(parts: list[pa.Table]) -> SplitParts:
    """:func:`split_deletes` of several parts (of one batch, so of one schema) in one pass."""
    records = pa.concat_tables(parts)
    mask = delete_mask(records)
    written = records.filter(pa.array(~mask)) if mask.any() else records
    bounds = np.cumsum([0] + [p.num_rows for p in parts])
    kept_before = np.concatenate([[0], np.cumsum(~mask)])
    lengths = kept_before[bounds[1:]] - kept_before[bounds[:-1]]
    return SplitParts(written, lengths, [mask[bounds[i] : bounds[i + 1]] for i in range(len(parts))])


def split_deletes(records: pa.Table) -> tuple[pa.Table, pa.Table]:
    """(the records written, the deletes); ``records`` itself, uncopied, when none deletes."""
    mask = delete_mask(records)
    if not mask.any():
        return records, records.slice(0, 0)
    return records.filter(pa.array(~mask)), records.filter(pa.array(mask))
FILE_ID_COLUMN = "__hoodie_file_id"
BASE_INSTANT_COLUMN = "__hoodie_base_instant"
BUCKET_COLUMN = "__hoodie_bucket"


def normalize_type(t: pa.DataType) -> pa.DataType:
    if pa.types.is_int8(t) or pa.types.is_int16(t) or pa.types.is_uint8(t) or pa.types.is_uint16(t):
        return pa.int32()
    if pa.types.is_uint32(t) or pa.types.is_uint64(t):
        return pa.int64()
    if pa.types.is_float16(t):
        return pa.float32()
    if pa.types.is_large_string(t) or pa.types.is_string_view(t):
        return pa.string()
    if pa.types.is_large_binary(t) or pa.types.is_binary_view(t) or pa.types.is_fixed_size_binary(t):
        return pa.binary()
    if pa.types.is_timestamp(t) and t.unit in ("ns", "s"):
        return pa.timestamp("us", t.tz)
    if pa.types.is_date64(t):
        return pa.date32()
    if pa.types.is_dictionary(t):
        return normalize_type(t.value_type)
    if pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t):
        return pa.list_(pa.field(t.value_field.name, normalize_type(t.value_type), True))
    if pa.types.is_map(t):
        return pa.map_(normalize_type(t.key_type), pa.field(t.item_field.name, normalize_type(t.item_type), True))
    if pa.types.is_struct(t):
        return pa.struct([pa.field(f.name, normalize_type(f.type), True) for f in t])
    return t


def normalize_schema(schema: pa.Schema) -> pa.Schema:
    """All fields nullable, types mapped to what Hudi stores."""
    return pa.schema([pa.field(f.name, normalize_type(f.type), True) for f in schema])


def normalize_batch(batch: pa.Table) -> pa.Table:
    target = normalize_schema(batch.schema)
    if target.equals(batch.schema.remove_metadata()):
        return batch.replace_schema_metadata(None)
    try:
        return batch.cast(target)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as e:
        raise SchemaError(f"batch cannot be stored as {target}: {e}") from e


_WIDENINGS = {
    (pa.int32(), pa.int64()),
    (pa.int32(), pa.float32()),
    (pa.int32(), pa.float64()),
    (pa.int64(), pa.float32()),
    (pa.int64(), pa.float64()),
    (pa.float32(), pa.float64()),
}


def reconcile(table_schema: pa.Schema | None, batch_schema: pa.Schema, allow_drop: bool = False) -> pa.Schema:
    """The table schema after writing a batch with ``batch_schema``.

    Raises :class:`SchemaError` naming the column when the batch drops a column (unless
    ``allow_drop``) or changes its type in a way Hudi does not allow.
    """
    if table_schema is None:
        return batch_schema
    batch_fields = {f.name: f for f in batch_schema}
    fields: list[pa.Field] = []
    for f in table_schema:
        incoming = batch_fields.get(f.name)
        if incoming is None:
            if not allow_drop:
                raise SchemaError(
                    f"batch is missing column {f.name!r} of the table schema "
                    f"(set hoodie.datasource.write.schema.allow.auto.evolution.column.drop=true to allow)"
                )
            fields.append(f)
            continue
        if incoming.type.equals(f.type) or _same_ignoring_names(incoming.type, f.type):
            fields.append(f)
        elif (f.type, incoming.type) in _WIDENINGS:
            fields.append(pa.field(f.name, incoming.type, True))
        elif (incoming.type, f.type) in _WIDENINGS:
            fields.append(f)  # narrower values are widened on write
        else:
            raise SchemaError(f"column {f.name!r} has type {incoming.type} in the batch but {f.type} in the table")
    known = {f.name for f in table_schema}
    fields.extend(pa.field(f.name, f.type, True) for f in batch_schema if f.name not in known)
    return pa.schema(fields)


def _same_ignoring_names(a: pa.DataType, b: pa.DataType) -> bool:
    """List/map child field names differ between writers (element/array/item)."""
    if pa.types.is_list(a) and pa.types.is_list(b):
        return _same_ignoring_names(a.value_type, b.value_type)
    if pa.types.is_map(a) and pa.types.is_map(b):
        return _same_ignoring_names(a.key_type, b.key_type) and _same_ignoring_names(a.item_type, b.item_type)
    if pa.types.is_struct(a) and pa.types.is_struct(b):
        return a.num_fields == b.num_fields and all(
            x.name == y.name and _same_ignoring_names(x.type, y.type) for x, y in zip(a, b)
        )
    return a.equals(b)
