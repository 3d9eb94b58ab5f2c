"""The exactly-once rule and the retries of one streaming writer's micro-batches, shared by
both ways a streaming query writes a table: the ``foreachBatch`` sink
(:mod:`hoodie.spark.stream_sink`) and the data source's stream writer
(:mod:`hoodie.spark.stream_writer`).

A micro-batch's commit records Hudi's ``_hudi_streaming_sink_checkpoint``
(``{"<identifier>": "<batch id>"}``, the identifier being
``hoodie.datasource.write.streaming.checkpoint.identifier``); a batch whose id is at or
below the latest one the table records for the identifier is committed already.
"""
from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping
from typing import Any

from hoodie.config import options as o
from hoodie.config.options import HoodieConfig
from hoodie.errors import ConfigError, RecordError, SchemaError, UnsafePathError
from hoodie.storage.factory import normalize_path, storage_for
from hoodie.table.table import HoodieTable
from hoodie.timeline.checkpoints import SINK_CHECKPOINT_KEY, latest_checkpoint, sink_batch_of, sink_checkpoint_value

log = logging.getLogger(__name__)

# extra metadata: the id of the streaming query that wrote a batch (stable across restarts
# from one checkpoint location), beside Hudi's checkpoint
QUERY_ID_KEY = "_hoodie_streaming_query_id"
# Spark's own options of a streaming query, not the table's
_SPARK_OPTIONS = ("checkpointlocation", "path")
# errors that a second attempt would meet again: the batch's data or options are refused
_NOT_RETRIED = (ConfigError, RecordError, SchemaError, UnsafePathError)


def table_options(options: Mapping[str, Any]) -> dict[str, Any]:
    """A streaming query's options without Spark's own (checkpoint location, path)."""
    return {k: v for k, v in options.items() if k.lower() not in _SPARK_OPTIONS and v is not None}


class BatchCommits:
    """One streaming writer's micro-batches into the table at ``path`` (``options``: the
    table's options; a bad one is a :class:`~hoodie.errors.ConfigError` here)."""

    def __init__(self, path: str, options: Mapping[str, Any]) -> None:
        self.path = normalize_path(path)
        config = HoodieConfig.of(options)
        self.identifier: str = config.get(o.STREAMING_CHECKPOINT_IDENTIFIER)
        self.attempts = max(1, config.get(o.STREAMING_RETRY_COUNT))
        self.retry_interval = config.get(o.STREAMING_RETRY_INTERVAL_MS) / 1000
        self.ignore_failed = bool(config.get(o.STREAMING_IGNORE_FAILED_BATCH))

    def extra_metadata(self, batch_id: int, query_id: str | None) -> dict[str, str]:
        """What the commit of ``batch_id`` records besides the data."""
        extra = {SINK_CHECKPOINT_KEY: sink_checkpoint_value(self.identifier, batch_id)}
        return {**extra, QUERY_ID_KEY: query_id} if query_id else extra

    def committed(self, batch_id: int) -> bool:
        """Whether the table's latest checkpoint of this writer is at or past ``batch_id``."""
        storage = storage_for(self.path)
        if not HoodieTable.exists(self.path, storage):
            return False
        found = latest_checkpoint(HoodieTable.open(self.path, storage).timeline, SINK_CHECKPOINT_KEY, select=sink_batch_of(self.identifier))
        if found is None:
            return False
        try:
            return int(found.value) >= batch_id
        except ValueError:
            raise ConfigError(
                f"the streaming checkpoint of {self.identifier!r} in commit {found.instant.timestamp} of {self.path} is {found.value!r}, "
                "not a batch id: another writer uses this identifier (set hoodie.datasource.write.streaming.checkpoint.identifier)"
            ) from None

    def write(self, batch_id: int, write: Callable[[], str | None]) -> str | None:
        """Run ``write`` (one commit of batch ``batch_id``; its instant) with the retries
        of the options; None when the batch was left out or turned out committed."""
        wait = self.retry_interval
        for attempt in range(1, self.attempts + 1):
            try:
                return write()
            except Exception as e:
                if attempt < self.attempts and not isinstance(e, _NOT_RETRIED):
                    log.warning(
                        "batch %d into %s failed (attempt %d of %d), trying again: %s: %s", batch_id, self.path, attempt, self.attempts, type(e).__name__, e
                    )
                    time.sleep(wait)
                    wait *= 2
                    if self.committed(batch_id):  # a failure after the commit: never twice
                        return None
                    continue
                if not self.ignore_failed:
                    raise
                self._report_ignored(batch_id, e)
                return None
        return None

    def _report_ignored(self, batch_id: int, error: Exception) -> None:
        """Log what became of a batch whose last attempt failed and is ignored: the
        failure may have come after its commit completed (a post-commit step), and then
        its rows are in the table."""
        try:
            outcome = "is committed, but a step after its commit failed" if self.committed(batch_id) else "failed and is left out, its rows not written"
        except Exception as e:  # the table cannot be read now: say so rather than guess
            outcome = f"failed and is left out, whether committed unknown (the table could not be read: {type(e).__name__}: {e})"
        log.error("batch %d into %s %s (%s=true): %s: %s", batch_id, self.path, outcome, o.STREAMING_IGNORE_FAILED_BATCH.key, type(error).__name__, error)
