"""The schema a query returns, and the driver-side helpers over it.

Base files are read by :mod:`hoodie.table.slice_reader.base_file` (one picklable task
each, conformed to this schema on the executor, so the driver only concatenates);
merge-on-read slices by :mod:`hoodie.table.slice_reader.merge`. It reads; it never writes.

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

import pyarrow as pa
import pyarrow.parquet as pq

from hoodie.errors import SchemaError, UnsupportedTableError
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
    (``hoodie.read`` merges them: :mod:`hoodie.table.slice_reader.merge`)."""
    for s in slices:
        if s.log_files:
            raise UnsupportedTableError(
                f"{table.base_path}: file group {s.file_id} in partition {s.partition_path!r} has "
                f"log files ({s.log_files[0].file_name}, ...) that must be merged into its base file; "
                "merge-on-read snapshot queries are not supported yet (read_optimized reads the base files only)"
            )
