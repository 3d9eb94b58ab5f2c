"""``df.writeStream.format("hoodie")`` through the Python data source, for sessions that
found :class:`~hoodie.spark.source.HoodieDataSource` without :func:`~hoodie.spark.register`
(which starts such queries on the ``foreachBatch`` sink of :mod:`hoodie.spark.stream_sink`).

PySpark's stream writer hands each task its share of a micro-batch, and the driver's
``commit`` only what the tasks returned. So each task stages its rows as one Arrow IPC file
(as the data source's batch writer does, :mod:`hoodie.spark.source_write`) under the
table's ``.hoodie/.temp/streaming/`` (created beside a table not made yet: a ``.hoodie``
folder alone is what a table's home may hold) and reports it;
``commit(messages, batch_id)`` reads the staged files and writes them as one commit in
process (``hoodie.write``), with the exactly-once rule and retries of
:mod:`hoodie.spark.micro_batch`; ``abort`` deletes them. Staged files never become part of
the table, whatever happens: they are deleted after the commit (or its refusal), and a
folder left by a killed application is swept by the next commit of the same writer.

PySpark runs ``commit`` in a Python worker of the driver, not in the application's
process: there is no Spark session there, so compaction follows ``hoodie.compact.inline``
after the commit (``hoodie.datasource.compaction.async.enable`` has no effect), and the
commit records the batch id but no query id (Spark does not say it there).
"""
from __future__ import annotations

import hashlib
import logging
from collections.abc import Iterator, Mapping

import pyarrow as pa
from pyspark.sql.datasource import WriterCommitMessage
from pyspark.sql.pandas.types import to_arrow_schema
from pyspark.sql.types import StructType

from hoodie.api import write as write_in_process
from hoodie.config import options as o
from hoodie.errors import ConfigError
from hoodie.layout import HOODIE_FOLDER, TEMP_FOLDER
from hoodie.spark.micro_batch import BatchCommits, table_options
from hoodie.spark.source_write import StagedFile, path_option, refuse_catalog_sync, stage, staged_rows
from hoodie.storage.factory import storage_for
from hoodie.storage.paths import under

try:  # PySpark 4.1+: the tasks are handed Arrow record batches
    from pyspark.sql.datasource import DataSourceStreamArrowWriter as _StreamWriter

    ARROW_STREAM_WRITER = True
except ImportError:  # PySpark 4.0: refused by stream_writer
    from pyspark.sql.datasource import DataSourceStreamWriter as _StreamWriter  # type: ignore[assignment]

    ARROW_STREAM_WRITER = False

log = logging.getLogger(__name__)

STAGING_FOLDER = "streaming"


def stream_writer(options: Mapping[str, str], schema: StructType, overwrite: bool) -> HoodieStreamWriter:
    """The data source's stream writer (``HoodieDataSource.streamWriter``)."""
    if not ARROW_STREAM_WRITER:
        raise ConfigError("df.writeStream.format('hoodie') without hoodie.spark.register(spark) needs PySpark 4.1 or later")
    refuse_catalog_sync(options)
    return HoodieStreamWriter(dict(options), schema, overwrite)


class HoodieStreamWriter(_StreamWriter):
    """Stages a micro-batch's rows on the tasks, commits them on the driver (module docstring)."""

    def __init__(self, options: dict[str, str], schema: StructType, overwrite: bool) -> None:
        path = path_option(options)
        if path is None:
            raise ConfigError("df.writeStream.format('hoodie').start() needs a table path: start(path) or option('path', path)")
        self.options = table_options(options)
        if overwrite:  # complete output mode: each batch replaces the table, as Hudi does
            self.options[o.OPERATION.key] = "insert_overwrite_table"
        self.batches = BatchCommits(path, self.options)  # a bad option stops the query here
        self.schema = to_arrow_schema(schema, timezone="UTC")
        # one folder per writer identifier (hashed: any text may name a writer)
        digest = hashlib.sha256(self.batches.identifier.encode("utf-8")).hexdigest()[:16]
        self.staging = under(self.batches.path, HOODIE_FOLDER, TEMP_FOLDER, STAGING_FOLDER, digest)

    def write(self, iterator: Iterator[pa.RecordBatch]) -> StagedFile:
        return stage(iterator, self.batches.path, self.staging)

    def commit(self, messages: list[WriterCommitMessage | None], batchId: int) -> None:  # noqa: N803 (PySpark's name)
        try:
            self._commit(messages, batchId)
        finally:
            self._sweep()

    def abort(self, messages: list[WriterCommitMessage | None], batchId: int) -> None:  # noqa: N803
        log.warning("micro-batch %d into %s aborted by Spark: its staged rows are deleted", batchId, self.batches.path)
        self._sweep()

    def _commit(self, messages: list[WriterCommitMessage | None], batch_id: int) -> None:
        if self.batches.committed(batch_id):
            log.warning("batch %d is committed in %s already (%s): skipped", batch_id, self.batches.path, self.batches.identifier)
            return
        rows = staged_rows(messages, self.batches.path, self.schema)
        if rows.num_rows == 0:
            log.info("batch %d has no rows: nothing written to %s", batch_id, self.batches.path)
            return
        extra = self.batches.extra_metadata(batch_id, None)
        self.batches.write(batch_id, lambda: write_in_process(rows, self.batches.path, self.options, extra_metadata=extra))

    def _sweep(self) -> None:
        """Delete the writer's staged files: those of this batch, and any a failed task
        attempt or a killed application left (a writer's batches run one at a time)."""
        storage_for(self.batches.path).delete_dir(self.staging)  # a no-op when absent
