"""hoodie for PySpark's discovery of Python data sources.

PySpark 4 registers, in every new session, the ``DefaultSource`` of each installed package
whose name starts with ``pyspark_``: with hoodie installed, ``spark.read.format("hoodie")``,
``spark.readStream.format("hoodie")`` and ``df.write.format("hoodie")`` work with no
set-up call. :func:`hoodie.spark.register` remains for older sessions and for the faster
batch paths (native Parquet reads, the distributed write pipeline), which it installs over
this source.
"""
from __future__ import annotations

from hoodie.spark.source import HoodieDataSource as DefaultSource

__all__ = ["DefaultSource"]
