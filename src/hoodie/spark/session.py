"""A local SparkSession configured for hoodie, shared by the tests and the demo.

This module owns only session construction; it knows nothing of tables. The settings
favour small local jobs: no UI, few shuffle partitions, Arrow on, UTC session time (so
timestamps print and partition the same on every machine), a small memory footprint (the
serial garbage collector; Arrow's system allocator in Python workers), and executors
running this very interpreter so that they import the same ``hoodie``.
"""
from __future__ import annotations

import os
import sys

from pyspark.sql import SparkSession

from hoodie.spark.datasource import register
from hoodie.storage.paths import under


def local_session(app_name: str = "hoodie", cores: int = 2, master: str | None = None, catalog_dir: str | None = None) -> SparkSession:
    """``getOrCreate`` a ``local[cores]`` session (or one on the cluster ``master`` names,
    e.g. ``spark://127.0.0.1:7077``) and :func:`~hoodie.spark.register` hoodie.

    With ``catalog_dir`` the session has Hive support, its warehouse in
    ``<catalog_dir>/warehouse`` and its embedded Derby metastore in
    ``<catalog_dir>/metastore_db`` (``derby.log`` there too): tables registered in it
    (:func:`~hoodie.spark.sync_to_catalog`) are seen by every later application given
    the same folder (one at a time: embedded Derby admits one JVM).

    On a cluster the executors run on the same machine's interpreter path as the driver
    (a standalone cluster on this host, or nodes set up alike). If a session already
    exists in this process it is returned as is (Spark ignores the builder's settings
    then), with hoodie registered.
    """
    # Python workers must run the driver's interpreter: they unpickle hoodie functions.
    os.environ["PYSPARK_PYTHON"] = sys.executable
    shuffle_partitions = max(2, 2 * cores)
    java_options = "-XX:+UseSerialGC -Xms384m"
    builder = SparkSession.builder
    if catalog_dir is not None:
        home = os.path.abspath(catalog_dir)
        java_options += f" -Dderby.system.home={home}"
        builder = (
            builder.config("spark.sql.warehouse.dir", under(home, "warehouse"))
            .config("spark.hadoop.javax.jdo.option.ConnectionURL", f"jdbc:derby:;databaseName={under(home, 'metastore_db')};create=true")
            .enableHiveSupport()
        )
    spark = (
        builder.master(master or f"local[{cores}]")
        .appName(app_name)
        .config("spark.pyspark.python", sys.executable)
        .config("spark.executorEnv.PYSPARK_PYTHON", sys.executable)
        .config("spark.executor.memory", "1g")
        .config("spark.driver.memory", "2g")
        # Local mode runs every executor in this driver JVM. The serial collector grows the
        # heap only as far as the live data needs (G1 commits a large share of the 2g at
        # once, and its own bookkeeping costs ~75 MB): ~650 MB resident instead of ~1 GB
        # for the benchmark's upsert, at no measurable cost in time on small machines. The
        # initial heap is what that upsert needs, so it does not grow through full
        # collections (a smaller one saves ~30 MB and costs a stop-the-world pause).
        .config("spark.driver.extraJavaOptions", java_options)
        # Python workers: Arrow's system allocator returns freed memory (mimalloc keeps
        # ~50 MB more per worker resident after a write task).
        .config("spark.executorEnv.ARROW_DEFAULT_MEMORY_POOL", "system")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        # A laptop-sized default: 200 shuffle partitions would mean 200 tiny Python tasks.
        .config("spark.sql.shuffle.partitions", str(shuffle_partitions))
        .config("spark.default.parallelism", str(shuffle_partitions))
        .config("spark.sql.execution.arrow.pyspark.enabled", "true")
        .config("spark.sql.session.timeZone", "UTC")
        # Loopback only: a sandbox without a resolvable hostname still starts.
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.sql.execution.pyspark.udf.faulthandler.enabled", "true")
        .getOrCreate()
    )
    register(spark)
    return spark
