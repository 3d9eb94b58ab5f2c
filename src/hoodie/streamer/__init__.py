"""The streamer: Apache Hudi's HoodieStreamer (DeltaStreamer), in our words.

``hoodie streamer`` ingests mini-batches from a source into a target table, once or
continuously, each batch one commit carrying its checkpoint (``deltastreamer.checkpoint.key``
in the commit's extra metadata), so that a restarted job resumes exactly where it stopped.

* :mod:`~hoodie.streamer.batches` — what a batch takes (plain data both engines read);
* :mod:`~hoodie.streamer.dfs_source` — new files landing in a folder (JSON, CSV,
  Parquet, Avro) and their exact checkpoint;
* :mod:`~hoodie.streamer.incr_source` — another Hudi table's commits (incremental pulls);
* :mod:`~hoodie.streamer.transform` — the SQL transformation (``<SRC>``);
* :mod:`~hoodie.streamer.arrow_engine` — reading, transforming (DuckDB) and writing in
  this process;
* :mod:`~hoodie.streamer.loop` — the checkpoint, the sync and the loop, stopping cleanly
  on a signal;
* :mod:`~hoodie.streamer.engines` — the engine a job runs on, by name.

``hoodie.spark.streamer`` runs the same loop on Spark; ``hoodie.cli.streamer`` is the
command.
"""
from __future__ import annotations

from hoodie.streamer import transform
from hoodie.streamer.arrow_engine import ArrowEngine, columns_of_empty_batch, dropped_meta_columns, read_files
from hoodie.streamer.batches import AVRO, CSV, JSON, PARQUET, FilesBatch, InstantsBatch, SourceBatch, SourceFile
from hoodie.streamer.dfs_source import DfsSource, FilePosition
from hoodie.streamer.engines import IN_PROCESS, SPARK, engine_for
from hoodie.streamer.incr_source import HoodieIncrSource
from hoodie.streamer.loop import (
    CHECKPOINT_RESET_KEY,
    SOURCE_CLASSES,
    SOURCE_KINDS,
    BatchEngine,
    BatchResult,
    Streamer,
    StreamerSettings,
    stopping_on_signals,
)
from hoodie.timeline.checkpoints import STREAMER_CHECKPOINT_KEY

__all__ = [
    "AVRO",
    "CSV",
    "JSON",
    "PARQUET",
    "CHECKPOINT_RESET_KEY",
    "IN_PROCESS",
    "SOURCE_CLASSES",
    "SOURCE_KINDS",
    "SPARK",
    "STREAMER_CHECKPOINT_KEY",
    "ArrowEngine",
    "BatchEngine",
    "BatchResult",
    "DfsSource",
    "FilePosition",
    "FilesBatch",
    "HoodieIncrSource",
    "InstantsBatch",
    "SourceBatch",
    "SourceFile",
    "Streamer",
    "StreamerSettings",
    "columns_of_empty_batch",
    "dropped_meta_columns",
    "engine_for",
    "read_files",
    "stopping_on_signals",
    "transform",
]
