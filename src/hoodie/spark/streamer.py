"""The streamer on Spark: the same loop and sources (:mod:`hoodie.streamer`), each batch
read by Spark, transformed with ``spark.sql`` and written with
:func:`~hoodie.spark.write.write_dataframe`.

``hoodie streamer --engine spark`` uses the session ``spark-submit`` made, else a local
one (:func:`~hoodie.spark.session.local_session`); in Python::

    from hoodie.spark.streamer import SparkStreamerEngine
    from hoodie.streamer import Streamer, StreamerSettings

    Streamer(StreamerSettings(path, "json", options), SparkStreamerEngine(spark)).run(continuous=True)

JSON, CSV and Parquet files are read by Spark's own readers (``FAILFAST``: a malformed
record fails the batch, nothing is written; CSV with its header and inferred types, as
the in-process reader reads it). Avro files are read on the driver by the in-process
reader and handed to Spark as Arrow (PySpark ships no Avro reader without the external
``spark-avro`` package). Another table's commits are read with
:func:`~hoodie.spark.read.read_dataframe` (an incremental query). A batch's rows are those
it took from the source, as in process: the DataFrame read is kept (memory, then disk)
while the batch is counted, transformed and written, so the source is read once.
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pyspark import StorageLevel
from pyspark.errors import AnalysisException
from pyspark.sql import DataFrame, SparkSession

from hoodie.spark.engine import SparkEngine
from hoodie.spark.read import read_dataframe
from hoodie.spark.write import write_dataframe
from hoodie.streamer import (
    CSV,
    JSON,
    PARQUET,
    FilesBatch,
    InstantsBatch,
    SourceBatch,
    columns_of_empty_batch,
    dropped_meta_columns,
    read_files,
    transform,
)


class SparkStreamerEngine:
    """Reads, transforms and writes streamer batches on ``spark``."""

    name = "spark"

    def __init__(self, spark: SparkSession) -> None:
        self.spark = spark
        # what a batch keeps until it is written: its views, and its DataFrame as read
        self._views: list[str] = []
        self._cached: list[DataFrame] = []

    @classmethod
    def for_streamer(cls) -> SparkStreamerEngine:
        """The engine of ``hoodie streamer --engine spark``: the active session, else a local one."""
        spark = SparkSession.getActiveSession()
        if spark is None:
            from hoodie.spark.session import local_session

            spark = local_session("hoodie-streamer")
        return cls(spark)

    def read(self, batch: SourceBatch) -> tuple[DataFrame, int]:
        self._release()  # a batch whose transformation failed leaves them
        df = self._read(batch).persist(StorageLevel.MEMORY_AND_DISK)
        self._cached.append(df)
        return df, df.count()

    def _read(self, batch: SourceBatch) -> DataFrame:
        if isinstance(batch, InstantsBatch):
            df = read_dataframe(self.spark, batch.source_path, {
                "hoodie.datasource.query.type": "incremental",
                "hoodie.datasource.read.begin.instanttime": batch.begin,
                "hoodie.datasource.read.end.instanttime": batch.end,
            })
            return df.drop(*[c for c in dropped_meta_columns(batch) if c in df.columns])
        return self._read_files(batch)

    def _read_files(self, batch: FilesBatch) -> DataFrame:
        paths = [f.path for f in batch.files]
        reader = self.spark.read
        if batch.file_format == JSON:
            return reader.option("mode", "FAILFAST").json(paths)
        if batch.file_format == CSV:
            return reader.options(header=str(batch.csv_header).lower(), sep=batch.csv_sep, inferSchema="true", mode="FAILFAST").csv(paths)
        if batch.file_format == PARQUET:
            return reader.parquet(*paths)
        return self.spark.createDataFrame(read_files(batch))  # Avro: see the module docstring

    def transform(self, data: DataFrame, sql: str) -> DataFrame:
        view = transform.view_name()
        data.createOrReplaceTempView(view)
        self._views.append(view)  # the result reads it lazily: dropped once the batch is written
        try:
            return self.spark.sql(transform.with_view(sql, view))
        except AnalysisException as e:
            raise transform.failed(sql, e) from e

    def write(self, data: DataFrame, path: str, options: Mapping[str, Any], extra_metadata: Mapping[str, str]) -> str | None:
        try:
            if not data.columns:  # empty files only (see columns_of_empty_batch)
                schema = columns_of_empty_batch(path)
                if schema is None:
                    return None
                data = self.spark.createDataFrame(schema.empty_table())
            return write_dataframe(data, path, options, extra_metadata=extra_metadata)
        finally:
            self._release()

    def compaction_engine(self) -> SparkEngine:
        """A continuous job compacts on a thread of the driver, through Spark (as the
        streaming sink does)."""
        return SparkEngine(self.spark)

    def _release(self) -> None:
        """Drop what the last batch kept (its views and its DataFrame as read)."""
        for view in self._views:
            self.spark.catalog.dropTempView(view)
        self._views.clear()
        for df in self._cached:
            df.unpersist()
        self._cached.clear()
