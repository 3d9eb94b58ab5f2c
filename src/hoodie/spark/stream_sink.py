"""The Structured Streaming sink: each micro-batch of ``df.writeStream.format("hoodie")``
becomes one commit, exactly once.

:mod:`hoodie.spark.datasource` starts such a query with :class:`HoodieStreamingSink`'s
``add_batch`` as its ``foreachBatch`` function, so every micro-batch runs through the whole
Spark write pipeline (:func:`~hoodie.spark.write.write_dataframe`), as Apache Hudi's
``HoodieStreamingSink`` runs ``HoodieSparkSqlWriter``.

Exactly once (:mod:`hoodie.spark.micro_batch`): the commit of a batch records, in its extra metadata, Hudi's
``_hudi_streaming_sink_checkpoint`` (``{"<identifier>": "<batch id>"}``, the identifier
being ``hoodie.datasource.write.streaming.checkpoint.identifier``) and the query's id. A
batch whose id is at or below the one the table's latest checkpoint of this identifier
records was committed already (Spark replays the last batch after a failure between the
commit and its own offset log, or a restart) and is skipped. A micro-batch without rows
makes no commit (nor a table that does not exist yet); the write tells it from the
partition paths it computes anyway, so a batch costs no Spark job for the question. A failed write was rolled back by the pipeline; it is tried again
(``...streaming.retry.count`` attempts, waiting ``...retry.interval.ms``, doubled each
time), then fails the query, or with ``...streaming.ignore.failed.batch`` is left out.

Merge-on-read with ``hoodie.datasource.compaction.async.enable`` (the default): the
batches do not compact inline; after a batch commits, a compaction is scheduled when due
(``hoodie.compact.inline.max.delta.commits``; a pending one, left by a stopped
application, is taken first) and run on a background thread of the driver through Spark,
at most one per table at a time
(:class:`~hoodie.services.async_compaction.AsyncCompactor`, with Spark's engine). Batches
keep committing while it runs (their log files go to the slices after it); only the
compaction's completion and a batch's commit exclude each other (the table's commit lock),
so a batch waits at most for one completion (the metadata table's records and an instant
file) and a completion for one commit.
"""
from __future__ import annotations

import logging
import threading
from collections.abc import Mapping
from typing import Any

from pyspark.sql import DataFrame, SparkSession

from hoodie.config import options as o
from hoodie.config.options import HoodieConfig
from hoodie.errors import ConfigError
from hoodie.services.async_compaction import AsyncCompactor
from hoodie.spark.engine import SparkEngine
from hoodie.spark.micro_batch import BatchCommits, table_options
from hoodie.spark.write import write_dataframe
from hoodie.storage.factory import normalize_path, storage_for
from hoodie.table.table import HoodieTable

log = logging.getLogger(__name__)

# Spark's local property naming the running query (StreamExecution.QUERY_ID_KEY)
_SPARK_QUERY_ID = "sql.streaming.queryId"
# output mode -> save mode of each batch's write (Hudi's: complete replaces the table)
_SAVE_MODES = {"append": "append", "complete": "overwrite"}


class HoodieStreamingSink:
    """Writes the micro-batches of one streaming query to the table at ``path``."""

    def __init__(self, spark: SparkSession, path: str, options: Mapping[str, Any], output_mode: str | None) -> None:
        mode = (output_mode or "append").strip().lower()
        if mode not in _SAVE_MODES:
            raise ConfigError(
                f"output mode {output_mode!r} is not supported by format('hoodie'): use append (each batch upserted, or written "
                "with hoodie.datasource.write.operation) or complete (each batch replaces the table)"
            )
        self.save_mode = _SAVE_MODES[mode]
        self.options = table_options(options)
        self.batches = BatchCommits(path, self.options)  # a bad option stops the query before it starts
        self.path = self.batches.path
        self.async_compaction = bool(HoodieConfig.of(self.options).get(o.ASYNC_COMPACT_ENABLE))
        if self.async_compaction:
            # a merge-on-read table compacts on the compactor's thread, never inline (as in Hudi)
            self.options[o.COMPACT_INLINE.key] = "false"
        self.compactor = compactor_for(spark, self.path, self.options)

    def add_batch(self, data: DataFrame, batch_id: int) -> None:
        """Write micro-batch ``batch_id`` as one commit, unless it is committed already or
        has no rows (Spark's ``foreachBatch`` function)."""
        query_id = data.sparkSession.sparkContext.getLocalProperty(_SPARK_QUERY_ID) or ""
        with self.compactor.lock:
            if self.batches.committed(batch_id):
                log.warning("batch %d of query %s is committed in %s already (%s): skipped", batch_id, query_id, self.path, self.batches.identifier)
                return
            # an empty batch makes no commit: the write tells it from the partition paths it
            # computes anyway (no job of its own); only a table not created yet is not
            # created for no rows, which takes a job of its own
            if not HoodieTable.exists(self.path, storage_for(self.path)) and data.isEmpty():
                log.info("batch %d of query %s has no rows: nothing written to %s", batch_id, query_id, self.path)
                return
            extra = self.batches.extra_metadata(batch_id, query_id)

            def write() -> str | None:
                instant = write_dataframe(data, self.path, self.options, self.save_mode, extra_metadata=extra, skip_empty=True)
                if instant is None:
                    log.info("batch %d of query %s has no rows: nothing written to %s", batch_id, query_id, self.path)
                return instant

            instant = self.batches.write(batch_id, write)
            if instant is not None and self.async_compaction:
                self.compactor.after_batch()


_COMPACTORS: dict[str, AsyncCompactor] = {}
_COMPACTORS_LOCK = threading.Lock()


def compactor_for(spark: SparkSession, path: str, options: Mapping[str, Any]) -> AsyncCompactor:
    """The one :class:`AsyncCompactor` of the table at ``path`` in this process (two
    queries writing one table share it, and its lock)."""
    key = normalize_path(path)
    with _COMPACTORS_LOCK:
        compactor = _COMPACTORS.get(key)
        if compactor is None:
            compactor = _COMPACTORS[key] = AsyncCompactor(key, options, SparkEngine(spark))
        elif not compactor.running():
            compactor.engine, compactor.options = SparkEngine(spark), dict(options)  # the latest query's
        return compactor


def wait_for_compaction(path: str, timeout: float | None = None) -> bool:
    """Wait for the background compaction a streaming query started on the table at
    ``path`` (e.g. before stopping the application); whether none runs any more."""
    with _COMPACTORS_LOCK:
        compactor = _COMPACTORS.get(normalize_path(path))
    return compactor is None or compactor.wait(timeout)
