"""Catalog registration (Apache Hudi's meta sync, the Hive sync tool): what to register.

Pure and Spark-free. From a :class:`~hoodie.table.table.HoodieTable` and Hudi's sync
options (:mod:`settings`), :func:`plan_sync` says which catalog tables a table is
registered as (``<t>`` for copy-on-write; ``<t>_ro``, ``<t>_rt`` and ``<t>`` for
merge-on-read, as Hudi names them), with which columns in Hive types
(:mod:`hive_types`), partition columns, partitions (values and locations) and
properties. Applying a plan to a catalog is the adapter's job
(:mod:`hoodie.spark.catalog`).
"""
from __future__ import annotations

from hoodie.meta_sync.hive_types import hive_type
from hoodie.meta_sync.plan import (
    LAST_COMMIT_TIME_SYNC,
    CatalogColumn,
    CatalogPartition,
    CatalogTable,
    SyncPlan,
    partition_values,
    plan_sync,
)
from hoodie.meta_sync.settings import SyncSettings

__all__ = [
    "LAST_COMMIT_TIME_SYNC",
    "CatalogColumn",
    "CatalogPartition",
    "CatalogTable",
    "SyncPlan",
    "SyncSettings",
    "hive_type",
    "partition_values",
    "plan_sync",
]
