"""PySpark integration: the only package of hoodie that imports pyspark.

* :func:`register` — ``df.write.format("hoodie")`` and ``spark.read.format("hoodie")``
  (:mod:`~hoodie.spark.datasource`); ``df.writeStream.format("hoodie")``, a commit per
  micro-batch (:mod:`~hoodie.spark.stream_sink`); and ``spark.readStream.format("hoodie")``,
  the Python data source :class:`~hoodie.spark.source.HoodieDataSource`
  (:mod:`~hoodie.spark.stream_source`);
* :func:`local_session` — a local session configured for hoodie, registered
  (:mod:`~hoodie.spark.session`);
* :func:`write_dataframe` — the distributed copy-on-write pipeline
  (:mod:`~hoodie.spark.write`, executor side in :mod:`~hoodie.spark.tasks`);
* :func:`read_dataframe` — snapshot, time-travel, read-optimized and incremental reads
  through Spark's native Parquet reader, pruned by partition
  (:mod:`~hoodie.spark.read`, :mod:`~hoodie.table.partition_values`);
* :class:`SparkEngine` — the :class:`~hoodie.engine.Engine` protocol on Spark
  (:mod:`~hoodie.spark.engine`);
* :func:`sync_to_catalog` — register a table in the session's catalog (Hudi's meta sync:
  ``<t>``, ``<t>_ro``, ``<t>_rt`` with partitions), :func:`catalog_partitions` — the
  partitions a registered table has there (:mod:`~hoodie.spark.catalog`).

Everything here adapts; the write, index, query and table logic it runs is the core's.
"""
from __future__ import annotations

from hoodie.spark.catalog import catalog_partitions, sync_to_catalog
from hoodie.spark.datasource import register, unregister
from hoodie.spark.engine import SparkEngine
from hoodie.spark.read import read_dataframe
from hoodie.spark.session import local_session
from hoodie.spark.write import write_dataframe

__all__ = [
    "SparkEngine",
    "catalog_partitions",
    "local_session",
    "read_dataframe",
    "register",
    "sync_to_catalog",
    "unregister",
    "write_dataframe",
]
