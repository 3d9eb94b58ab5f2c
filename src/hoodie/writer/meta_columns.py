"""Column builders for the five meta columns, vectorised (no per-row Python), for one
file or for the rows of several files at once."""
from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from hoodie.formats.conform import conform
from hoodie.writer.schema import META_COLUMNS


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


def table_layout(data_schema: pa.Schema) -> pa.Schema:
    """The stored layout: the five meta columns (strings), then the data columns."""
    return pa.schema([pa.field(m, pa.string(), True) for m in META_COLUMNS] + list(data_schema))


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
    return pa.Table.from_arrays(meta + conform(records, data_schema).columns, schema=table_layout(data_schema))
