"""Hudi's five meta columns: their names, the layout files store them in, and vectorised
builders (no per-row Python) for the rows of one file or of several files at once.

This module is the one place the meta columns are listed; it knows nothing of tables,
writers or readers.
"""
from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from hoodie.formats.conform import conform

#: Hudi's meta columns, in file order (``HoodieRecord.HOODIE_META_COLUMNS``).
META_COLUMNS: tuple[str, ...] = (
    "_hoodie_commit_time",
    "_hoodie_commit_seqno",
    "_hoodie_record_key",
    "_hoodie_partition_path",
    "_hoodie_file_name",
)
COMMIT_TIME, COMMIT_SEQNO, RECORD_KEY, PARTITION_PATH, FILE_NAME = META_COLUMNS


def constant_column(value: str, n: int) -> pa.Array:
    """``n`` copies of ``value`` (commit time, file name or file id)."""
    return pa.repeat(pa.scalar(value, pa.string()), n)


def sequence_numbers(prefix: str, start: int, n: int) -> pa.Array:
    """``_hoodie_commit_seqno`` values ``<instant>_<partition>_<i>`` for i from ``start``."""
    counters = pc.cast(pa.array(np.arange(start, start + n, dtype=np.int64)), pa.string())
    return pc.binary_join_element_wise(constant_column(prefix, n), counters, "")


def repeated_values(values: list[str], lengths: np.ndarray) -> pa.Array:
    """``values[i]`` ``lengths[i]`` times each, in order: a per-file constant (file name,
    sequence prefix) for the rows of several files built at once."""
    return pa.array(values, pa.string()).take(pa.array(np.repeat(np.arange(len(values)), lengths)))


def sequence_numbers_of_runs(prefixes: list[str], lengths: np.ndarray) -> pa.Array:
    """:func:`sequence_numbers` from 0 for consecutive runs of rows, ``prefixes[i]`` for
    the ``lengths[i]`` rows of run ``i``: the sequence numbers of several files in one pass."""
    lengths = np.asarray(lengths, dtype=np.int64)
    starts = np.cumsum(lengths) - lengths
    counters = np.arange(int(lengths.sum()), dtype=np.int64) - np.repeat(starts, lengths)
    return pc.binary_join_element_wise(repeated_values(prefixes, lengths), pc.cast(pa.array(counters), pa.string()), "")


def stored_layout(data_schema: pa.Schema) -> pa.Schema:
    """The schema files store: the five meta columns (nullable strings), then the data
    columns of ``data_schema`` (any meta column in it is left out)."""
    return pa.schema([pa.field(m, pa.string(), True) for m in META_COLUMNS] + data_fields(data_schema))


def data_fields(schema: pa.Schema) -> list[pa.Field]:
    """The fields of ``schema`` that are not meta columns, in order."""
    return [f for f in schema if f.name not in META_COLUMNS]


def with_meta_columns(
    records: pa.Table, data_schema: pa.Schema, instant: str, seq_prefixes: list[str], file_names: list[str], lengths: np.ndarray
) -> pa.Table:
    """Incoming ``records`` (keyed, no deletes) in table layout with fresh meta columns:
    consecutive runs of ``lengths`` rows, one run per file, run ``i`` numbered from 0
    after ``seq_prefixes[i]`` and naming ``file_names[i]`` (a log names its file id).
    Several files' rows are built in one pass: at a thousand rows a file, the per-call
    cost of these Arrow calls is most of the work."""
    n = records.num_rows
    if len(lengths) == 1:
        seqno, names = sequence_numbers(seq_prefixes[0], 0, n), constant_column(file_names[0], n)
    else:
        seqno, names = sequence_numbers_of_runs(seq_prefixes, lengths), repeated_values(file_names, lengths)
    meta = [
        constant_column(instant, n),
        seqno,
        records.column("_hoodie_record_key").cast(pa.string()),
        records.column("_hoodie_partition_path").cast(pa.string()),
        names,
    ]
    return pa.Table.from_arrays(meta + conform(records, data_schema).columns, schema=stored_layout(data_schema))
