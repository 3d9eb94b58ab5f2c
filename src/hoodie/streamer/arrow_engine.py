"""The streamer in this process: a batch read into Arrow, transformed with DuckDB, written
with :func:`hoodie.write`.

Files are read with pyarrow (JSON lines, CSV, Parquet) and fastavro (Avro, by the
schema each file carries); the batch is their rows, columns unified by name (a column
missing from a file is null there; an integer column of one file and a floating one of
another become floating). A file that cannot be read as its format is a
:class:`~hoodie.errors.FormatError` naming it, and nothing of the batch is written.
"""
from __future__ import annotations

import io
from collections.abc import Mapping
from typing import Any

import fastavro
import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.json as pajson
import pyarrow.parquet as pq

from hoodie import api
from hoodie.errors import FormatError
from hoodie.formats.avro_schema import avro_schema_to_arrow
from hoodie.formats.meta_columns import META_COLUMNS, PARTITION_PATH
from hoodie.storage.base import Storage, arrow_path
from hoodie.storage.factory import storage_for
from hoodie.streamer import transform
from hoodie.streamer.batches import CSV, JSON, PARQUET, FilesBatch, InstantsBatch, SourceBatch, SourceFile
from hoodie.table.table import HoodieTable


class ArrowEngine:
    """Reads, transforms and writes batches in this process (the streamer's default)."""

    name = "in-process"

    def __init__(self, storage: Storage | None = None) -> None:
        self.storage = storage

    def read(self, batch: SourceBatch) -> tuple[pa.Table, int]:
        data = read_instants(batch) if isinstance(batch, InstantsBatch) else read_files(batch, self.storage)
        return data, data.num_rows

    def transform(self, data: pa.Table, sql: str) -> pa.Table:
        return transform.with_duckdb(data, sql)

    def write(self, data: pa.Table, path: str, options: Mapping[str, Any], extra_metadata: Mapping[str, str]) -> str | None:
        if data.num_columns == 0:
            schema = columns_of_empty_batch(path, self.storage)
            if schema is None:
                return None
            data = schema.empty_table()
        return api.write(data, path, options, extra_metadata=extra_metadata, storage=self.storage)

    def compaction_engine(self) -> None:
        """None: a continuous job compacts in an OS process of its own."""
        return None


def columns_of_empty_batch(path: str, storage: Storage | None = None) -> pa.Schema | None:
    """The columns a batch of empty files only (no columns at all) is written with: the
    table's, so that an empty commit records the checkpoint; None before the table exists
    (nothing to create it from: the files are taken again with the next batch)."""
    storage = storage or storage_for(path)
    return HoodieTable.open(path, storage).data_schema() if HoodieTable.exists(path, storage) else None


def read_files(batch: FilesBatch, storage: Storage | None = None) -> pa.Table:
    """The rows of the batch's files, in the batch's order."""
    # an empty JSON or CSV file holds no rows (pyarrow refuses to read one)
    parts = [_read_file(f, batch, storage or storage_for(f.path)) for f in batch.files if f.size > 0 or batch.file_format not in (JSON, CSV)]
    return pa.concat_tables(parts, promote_options="permissive") if parts else pa.table({})


def _read_file(f: SourceFile, batch: FilesBatch, storage: Storage) -> pa.Table:
    try:
        if batch.file_format == PARQUET:
            fs, path = arrow_path(storage, f.path)
            return pq.read_table(path, filesystem=fs)
        data = io.BytesIO(storage.read_bytes(f.path))
        if batch.file_format == JSON:
            return pajson.read_json(data)
        if batch.file_format == CSV:
            read_options = pacsv.ReadOptions(autogenerate_column_names=not batch.csv_header)
            return pacsv.read_csv(data, read_options=read_options, parse_options=pacsv.ParseOptions(delimiter=batch.csv_sep))
        reader = fastavro.reader(data)
        if not isinstance(reader.writer_schema, dict) or reader.writer_schema.get("type") != "record":
            raise ValueError(f"its schema is not a record: {reader.writer_schema!r}"[:200])
        return pa.Table.from_pylist(list(reader), schema=avro_schema_to_arrow(reader.writer_schema))
    except (pa.ArrowException, ValueError, TypeError, EOFError) as e:
        raise FormatError(f"source file {f.path} cannot be read as {batch.file_format}: {e}") from e


def read_instants(batch: InstantsBatch) -> pa.Table:
    """The incremental pull of the batch's range, its meta columns dropped as Hudi's
    HoodieIncrSource drops them (all but ``_hoodie_partition_path``, or all)."""
    rows = api.read(batch.source_path, {
        "hoodie.datasource.query.type": "incremental",
        "hoodie.datasource.read.begin.instanttime": batch.begin,
        "hoodie.datasource.read.end.instanttime": batch.end,
    })
    return rows.drop_columns([c for c in dropped_meta_columns(batch) if c in rows.column_names])


def dropped_meta_columns(batch: InstantsBatch) -> list[str]:
    return [c for c in META_COLUMNS if batch.drop_all_meta or c != PARTITION_PATH]
