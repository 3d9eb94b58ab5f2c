"""Batch writes through hoodie's Python data source: ``df.write.format("hoodie")`` when
:func:`~hoodie.spark.register` was not called (PySpark found the ``pyspark_hoodie`` package).

PySpark's data source API writes partition by partition, but a Hudi commit needs the whole
batch (dedupe across it, one plan, one commit). So each task stages its rows as an Arrow
IPC file in a folder of its own under the table's ``.hoodie/.temp/``
(``spark-write-<id>/``), and :meth:`HoodieBatchWriter.commit` — run once, beside the
driver, after every task succeeded — reads the staged files the tasks reported and
writes them as one commit with the in-process write client (``hoodie.write``: the same
pipeline, options and checks), then removes the staging folder; ``abort`` removes it
without writing. Files of failed or speculative task attempts are never read (only the
reported ones are) and go with the folder. The table sees nothing until the commit.

A killed application (or a lost driver) removes neither: its folder is left behind. A
write through the data source to the table — its commit or abort — removes every
``spark-write-*`` folder in which nothing changed for a day
(:data:`STAGING_STALE_AFTER_SECONDS`): the first such write of a process (the Python
worker that commits) to the table, then at most one a day, so an abandoned folder goes
within two days of its last change and the writes in between list nothing for it. A live
write's folder changes whenever one of its
tasks ends (each stages its file then), and its commit reads the staged files first: only
a write whose tasks have all been running for a day since the last one of them ended could
lose its folder, and then its commit fails (a staged file is missing) without writing.

Save modes: ``append`` writes with the configured operation, ``overwrite`` replaces the
table's contents (``insert_overwrite_table``, as :func:`~hoodie.spark.write_dataframe`
does). The whole batch passes through one process's memory; the distributed pipeline of
:func:`~hoodie.spark.register` (``write_dataframe``) is the one for large writes, and the
one that registers the table in a catalog after its commit (that needs the Spark session,
which the data source's commit does not have: ``hoodie.datasource.meta.sync.enable`` is
refused here).
"""
from __future__ import annotations

import logging
import time
import uuid
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
from pyspark.sql.datasource import DataSourceArrowWriter, WriterCommitMessage
from pyspark.sql.pandas.types import to_arrow_schema
from pyspark.sql.types import StructType

from hoodie.api import write
from hoodie.config import options as o
from hoodie.config.options import HoodieConfig, lookup
from hoodie.errors import ConfigError
from hoodie.layout import HOODIE_FOLDER, TEMP_FOLDER
from hoodie.meta_sync import SyncSettings
from hoodie.storage.base import FileInfo, Storage
from hoodie.storage.factory import normalize_path, storage_for
from hoodie.storage.paths import under
from hoodie.table.table import HoodieTable

log = logging.getLogger(__name__)

STAGING_PREFIX = "spark-write-"
# How long nothing may change in a batch write's staging folder before the folder counts as
# left by an application that is gone (module docstring): far longer than the time between
# two of a live write's tasks ending, or its commit reading what they staged.
STAGING_STALE_AFTER_SECONDS = 24 * 3600.0
# when this process last swept each table's staging folders (time.monotonic(), by base path)
_SWEPT: dict[str, float] = {}


@dataclass(frozen=True)
class StagedFile(WriterCommitMessage):
    """What one task staged: an Arrow IPC stream file (None when it had no rows)."""

    path: str | None
    rows: int


class HoodieBatchWriter(DataSourceArrowWriter):
    """One ``save()``: tasks stage, the commit writes (module docstring). Picklable."""

    def __init__(self, path: str, options: Mapping[str, str], schema: StructType, overwrite: bool) -> None:
        self.path = normalize_path(path)
        self.options = dict(options)
        HoodieConfig.of(self.options)  # a mistaken option fails before any task runs
        refuse_catalog_sync(self.options)
        self.schema = to_arrow_schema(schema, timezone="UTC")
        self.overwrite = overwrite
        self.staging = under(self.path, HOODIE_FOLDER, TEMP_FOLDER, f"{STAGING_PREFIX}{uuid.uuid4().hex}")

    # --- on executors ---------------------------------------------------------------------------

    def write(self, iterator: Iterator[pa.RecordBatch]) -> StagedFile:
        return stage(iterator, self.path, self.staging)

    # --- beside the driver, once --------------------------------------------------------------

    def commit(self, messages: list[WriterCommitMessage | None]) -> None:
        storage = storage_for(self.path)
        try:
            data = staged_rows(messages, self.path, self.schema)
            options = dict(self.options)
            if self.overwrite and HoodieTable.exists(self.path, storage):
                options = {k: v for k, v in options.items() if lookup(k) is not o.OPERATION}
                options[o.OPERATION.key] = "insert_overwrite_table"
            write(data, self.path, options, storage=storage)
        finally:
            storage.delete_dir(self.staging)
            _sweep(storage, self.path)

    def abort(self, messages: list[WriterCommitMessage | None]) -> None:
        storage = storage_for(self.path)
        storage.delete_dir(self.staging)
        _sweep(storage, self.path)


def remove_abandoned_staging(storage: Storage, base_path: str, now: float | None = None) -> list[str]:
    """Remove the staging folders of batch writes whose application is gone: those in which
    nothing changed for :data:`STAGING_STALE_AFTER_SECONDS` before ``now`` (module
    docstring); the folders removed. A folder whose times storage does not tell stays."""
    cutoff_ms = ((time.time() if now is None else now) - STAGING_STALE_AFTER_SECONDS) * 1000
    removed = []
    for entry in storage.list_dir(under(base_path, HOODIE_FOLDER, TEMP_FOLDER)):
        if not (entry.is_dir and entry.name.startswith(STAGING_PREFIX)):
            continue
        changed = _last_change_ms(storage, entry)
        if changed is not None and changed < cutoff_ms:
            storage.delete_dir(entry.path)
            removed.append(entry.path)
    return removed


def _last_change_ms(storage: Storage, folder: FileInfo) -> int | None:
    """When ``folder`` or a file in it last changed (ms since the epoch), None when unknown
    (an object store's folders have no time)."""
    known = [t for t in (folder.mtime_ms, *(f.mtime_ms for f in storage.list_dir(folder.path))) if t > 0]
    return max(known) if known else None


def _sweep(storage: Storage, base_path: str) -> None:
    """Remove abandoned staging folders, unless this process did so for ``base_path``
    within :data:`STAGING_STALE_AFTER_SECONDS` (module docstring)."""
    now = time.monotonic()
    last = _SWEPT.get(base_path)
    if last is not None and now - last < STAGING_STALE_AFTER_SECONDS:
        return
    try:
        for folder in remove_abandoned_staging(storage, base_path):
            log.info("removed %s, the staging folder of a batch write whose application is gone", folder)
        _SWEPT[base_path] = now
    except Exception as e:  # the write's own outcome stands; the next write sweeps again
        log.warning("could not remove abandoned staging folders under %s: %s: %s", base_path, type(e).__name__, e)


def refuse_catalog_sync(options: Mapping[str, str]) -> None:
    """The data source's writes commit in a Python worker, where no Spark session is: they
    cannot register the table in a catalog, so asking them to is an error, before any task runs."""
    if SyncSettings.of(options).enabled:
        raise ConfigError(
            "hoodie.datasource.meta.sync.enable / hive_sync.enable needs the Spark session after the commit, which "
            "format('hoodie') through the Python data source does not have: call hoodie.spark.register(spark) first "
            "(its batch and streaming format('hoodie') writes register the table), or hoodie.spark.sync_to_catalog(spark, path) after the write"
        )


def stage(batches: Iterator[pa.RecordBatch], base_path: str, staging: str) -> StagedFile:
    """Stage a task's record batches as one Arrow IPC stream file in the ``staging`` folder
    of the table at ``base_path`` (on an executor); nothing for a task without rows."""
    sink = pa.BufferOutputStream()
    writer: pa.ipc.RecordBatchStreamWriter | None = None
    rows = 0
    for batch in batches:
        if writer is None:
            writer = pa.ipc.new_stream(sink, batch.schema)
        writer.write_batch(batch)
        rows += batch.num_rows
    if writer is None or rows == 0:
        return StagedFile(None, 0)
    writer.close()
    # a name of its own per attempt: a retried task never overwrites what another reported
    staged = under(staging, f"{uuid.uuid4().hex}.arrow")
    storage_for(base_path).write_bytes(staged, sink.getvalue().to_pybytes())
    return StagedFile(staged, rows)


def staged_rows(messages: list[WriterCommitMessage | None], base_path: str, schema: pa.Schema) -> pa.Table:
    """The rows the tasks reported staged (only those: files of failed attempts are never
    read), an empty table of ``schema`` when there are none."""
    storage = storage_for(base_path)
    tables = []
    for m in messages:
        if isinstance(m, StagedFile) and m.path is not None:
            with pa.ipc.open_stream(storage.read_bytes(m.path)) as reader:
                tables.append(reader.read_all())
    if not tables:
        return schema.empty_table()
    return pa.concat_tables(tables, promote_options="permissive") if len(tables) > 1 else tables[0]


def path_option(options: Mapping[str, Any]) -> str | None:
    """The table path a data source was given: ``option("path", ...)``, or the path of
    ``load``/``save``/``start``, which Spark passes as that option (any case)."""
    return next((str(v) for k, v in options.items() if k.lower() == "path" and v), None)


def writer_options(options: Mapping[str, Any]) -> tuple[str, dict[str, str]]:
    """The table path and write options of ``df.write.format("hoodie")`` options."""
    given = {str(k): str(v) for k, v in options.items() if v is not None}
    path = path_option(given)
    if path is None:
        raise ConfigError("df.write.format('hoodie').save() needs a table path: save(path) or option('path', path)")
    return path, {k: v for k, v in given.items() if k.lower() != "path"}
