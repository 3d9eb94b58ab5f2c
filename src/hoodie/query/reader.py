"""Reading base files into the query schema.

This module owns the output schema of a query and the reading of base files: each base
file becomes one picklable task (run through the :class:`~hoodie.engine.Engine` by
:mod:`hoodie.query.slices`), read with pyarrow and conformed to the query schema (cast,
reordered, missing columns as nulls) on the executor, so the driver only concatenates.
Merge-on-read slices with log files are merged by :mod:`hoodie.query.merge`, which uses
:func:`conform` for log records too. It reads; it never writes.

The output schema is what hudi-rs returns, column for column: the five meta columns first
(Arrow ``string not null``, as hudi-rs declares them) and then the table's data columns
from its Avro schema, in the schema's order (Spark puts partition columns last). Tables
written with ``hoodie.populate.meta.fields=false`` carry only ``_hoodie_file_name`` in
their meta columns; hudi-rs leaves the meta columns out of such tables altogether, and so
does hoodie. Where the raw Parquet differs from that schema (Avro-writer lists named
``array`` with non-null items, maps named after their field, nullable meta columns), the
data is cast to it.
"""
from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from hoodie.engine import TaskContext
from hoodie.errors import FormatError, SchemaError, UnsupportedTableError
from hoodie.formats.bloom_footer import FooterIndex, read_footer_index
from hoodie.formats.conform import conform
from hoodie.formats.meta_columns import META_COLUMNS, data_fields
from hoodie.storage.base import Storage, arrow_path
from hoodie.table.file_group import FileSlice
from hoodie.table.table import HoodieTable

COMMIT_TIME_COLUMN = "_hoodie_commit_time"


log = logging.getLogger(__name__)

def meta_schema() -> pa.Schema:
    # hudi-rs prepends its meta fields as non-nullable strings; matching it makes the two
    # readers' results compare equal type for type.
    return pa.schema([pa.field(name, pa.string(), nullable=False) for name in META_COLUMNS])


def output_schema(table: HoodieTable, as_of: str | None = None, slices: Sequence[FileSlice] = ()) -> pa.Schema | None:
    """The schema a query on ``table`` returns, or None when nothing defines one.

    Data columns come from the Avro schema of the latest commit at or before ``as_of``
    (falling back to the latest schema, then to ``hoodie.table.create.schema``). A table
    whose commits carry no schema at all takes it from its base files' footers.
    """
    data = table.data_schema(as_of) if as_of is not None else None
    if data is None:
        data = table.data_schema()
    if data is None and slices:
        data = _schema_from_files(table.storage, slices)
    if data is None:
        return None
    fields = data_fields(data)
    if not table.config.populate_meta_fields:
        return pa.schema(fields)
    return pa.schema(list(meta_schema()) + fields)


def _schema_from_files(storage: Storage, slices: Sequence[FileSlice]) -> pa.Schema | None:
    schemas = []
    for s in slices:
        if s.base_file is not None:
            fs, path = arrow_path(storage, s.base_file.path)
            with fs.open_input_file(path) as f:
                schemas.append(pq.ParquetFile(f).schema_arrow.remove_metadata())
    if not schemas:
        return None
    try:
        return pa.unify_schemas(schemas, promote_options="permissive")
    except (pa.ArrowInvalid, pa.ArrowTypeError) as e:
        raise SchemaError(f"base files disagree on their schema and no commit records one: {e}") from e


def project(schema: pa.Schema, columns: Sequence[str] | None) -> pa.Schema:
    """``schema`` restricted to ``columns`` (in the caller's order); unknown names raise."""
    if columns is None:
        return schema
    missing = [c for c in columns if schema.get_field_index(c) < 0]
    if missing:
        raise SchemaError(f"unknown column(s) {', '.join(map(repr, missing))}; the table has {', '.join(schema.names)}")
    return pa.schema([schema.field(c) for c in columns])


def require_base_files_only(table: HoodieTable, slices: Sequence[FileSlice]) -> None:
    """Refuse slices that need a log merge, for read paths that read base files only
    (``hoodie.read`` merges them: :mod:`hoodie.query.merge`)."""
    for s in slices:
        if s.log_files:
            raise UnsupportedTableError(
                f"{table.base_path}: file group {s.file_id} in partition {s.partition_path!r} has "
                f"log files ({s.log_files[0].file_name}, ...) that must be merged into its base file; "
                "merge-on-read snapshot queries are not supported yet (read_optimized reads the base files only)"
            )


# --- tasks ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class BaseFileTask:
    """Read one base file, conformed to ``schema``; picklable for Spark executors."""

    storage: Storage
    path: str
    schema: pa.Schema
    # Arrow decodes columns on its own threads: only when the tasks are fewer than the
    # engine's workers, else those threads would oversubscribe the cores
    use_threads: bool = False
    # a base file Parquet cannot decode is skipped with a warning (ignoreCorruptFiles)
    ignore_corrupt: bool = False


def read_base_file_task(task: BaseFileTask, ctx: TaskContext | None = None) -> pa.Table:
    """Run a :class:`BaseFileTask`: read the columns it needs and conform them."""
    return _read(task, with_footer=False)[0]


def read_base_file_and_footer(task: BaseFileTask) -> tuple[pa.Table, FooterIndex | None]:
    """:func:`read_base_file_task`, and the file's record-key footer (bloom filter, key
    range) from the same open: compaction carries the filter over to the file it writes."""
    return _read(task, with_footer=True)


def _read(task: BaseFileTask, with_footer: bool) -> tuple[pa.Table, FooterIndex | None]:
    fs, path = arrow_path(task.storage, task.path)
    task.storage.counters.bump("read")
    try:
        with fs.open_input_file(path) as f:
            pf = pq.ParquetFile(f)
            present = set(pf.schema_arrow.names)
            wanted = [n for n in task.schema.names if n in present]
            # Tasks usually run one per core; Arrow's own column threads would only
            # oversubscribe them (measured 7-15% slower over the 200-file benchmark).
            data = pf.read(columns=wanted, use_threads=task.use_threads)
            footer = read_footer_index(pf.metadata.metadata) if with_footer else None
    except FileNotFoundError:
        raise
    except (pa.ArrowInvalid, OSError) as e:
        if not task.ignore_corrupt:
            raise FormatError(f"cannot read base file {task.path}: {e}") from e
        log.warning("base file %s cannot be read (%s); reading around it (ignoreCorruptFiles)", task.path, e)
        return task.schema.empty_table(), None
    return conform(data, task.schema, task.path), footer


# --- driver side ------------------------------------------------------------------------------


def filter_commit_times(data: pa.Table, keep: frozenset[str] | None = None, after: str | None = None, upto: str | None = None) -> pa.Table:
    """Rows whose ``_hoodie_commit_time`` is in ``keep``, or in ``(after, upto]``."""
    column = data.column(COMMIT_TIME_COLUMN)
    if keep is not None:
        mask = pc.is_in(column, value_set=pa.array(sorted(keep), pa.string()))
    else:
        mask = pc.and_(pc.greater(column, after), pc.less_equal(column, upto))
    return data.filter(pc.fill_null(mask, False))
