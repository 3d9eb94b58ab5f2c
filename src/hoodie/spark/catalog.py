"""Catalog registration on Spark: a :mod:`hoodie.meta_sync` plan applied to a session's catalog.

:func:`sync_to_catalog` registers a table as :func:`~hoodie.meta_sync.plan_sync` plans it
(``<t>``; ``<t>_ro``, ``<t>_rt`` and ``<t>`` for merge-on-read) in the session's catalog:
with Hive support (``enableHiveSupport()``), its Hive metastore (the embedded Derby one of a
local Spark, or a shared one), so a new application sees them; otherwise the session's
in-memory catalog. Each is an external table ``USING hoodie`` at the table's path, with the
query type as its option, the partition columns last and Hudi's ``last_commit_time_sync``
property; ``spark.sql("SELECT ... FROM trips_rt")`` reads it through hoodie's data source
(:mod:`hoodie.spark.source_batch`). A later sync adds the columns the table gained
(``alterTableDataSchema``), the partitions that appeared, and drops from the catalog the
partitions that hold no live file any more (their files are never touched).

Two things Spark 4 does not do for a table read by a Python data source, and how this
module does without them:

* it hands the data source none of the catalog table's options or location, only its
  schema: the table's path and query type travel as metadata of the first data column
  (:data:`~hoodie.spark.source_batch.SOURCE_KEY`), which the reader takes them from;
* its partition commands (``ALTER TABLE ... ADD PARTITION``, ``SHOW PARTITIONS``) refuse
  such tables (``PARTITION_MANAGEMENT_IS_UNSUPPORTED``): partitions are written through
  the session catalog's own calls (what a Hive metastore's other clients see), and
  :func:`catalog_partitions` lists them.

What a sync cannot do in place it refuses, naming the table and what differs, and it never
drops a table: another table of that name (another provider or location), one partitioned
by other columns, a column the catalog has and the table lost.
"""
from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from pyspark.sql import SparkSession
from pyspark.sql.pandas.types import from_arrow_schema
from pyspark.sql.types import StructField, StructType

from hoodie.config.options import HoodieConfig
from hoodie.errors import ConfigError, SchemaError, TableError
from hoodie.meta_sync import CatalogPartition, CatalogTable, SyncPlan, SyncSettings, plan_sync
from hoodie.meta_sync.hive_types import quote
from hoodie.metadata_table.listing import listed_through_metadata, metadata_listing
from hoodie.spark.read import spark_uri
from hoodie.spark.source import FORMAT, register_source
from hoodie.spark.source_batch import SOURCE_KEY
from hoodie.table.table import HoodieTable


def sync_to_catalog(spark: SparkSession, path: str, options: Mapping[str, Any] | None = None) -> SyncPlan:
    """Register or update the table at ``path`` in ``spark``'s catalog, as Hudi's
    ``hoodie.datasource.hive_sync.*`` options in ``options`` say (module docstring);
    returns what was registered. ``hoodie.datasource.meta.sync.enable`` need not be set
    for this call."""
    config = HoodieConfig.of(options)
    settings = SyncSettings.from_config(config)
    listing = metadata_listing(config) if settings.metadata_listing else None
    table = listed_through_metadata(HoodieTable.open(path), listing)
    plan = plan_sync(table, settings)
    register_source(spark)  # CREATE TABLE ... USING hoodie needs the source known
    _ensure_database(spark, settings)
    for t in plan.tables:
        _sync_table(spark, t, plan.partitions)
    return plan


def sync_after_commit(spark: SparkSession, path: str, options: Mapping[str, Any] | None, instant: str | None) -> None:
    """:func:`sync_to_catalog` after a write's commit: a failure says the commit stands."""
    try:
        sync_to_catalog(spark, path, options)
    except Exception as e:
        # as Apache Hudi's sync: the data is committed; only its registration failed
        raise TableError(f"commit {instant} of {path} completed, but registering it in the catalog failed: {e}") from e


def catalog_partitions(spark: SparkSession, name: str) -> list[str]:
    """The partitions ``name`` (``db.table`` or ``table``) has in the catalog, as
    ``SHOW PARTITIONS`` names them (``city=sf/day=1``), sorted."""
    catalog = _session_catalog(spark)
    names = catalog.listPartitionNames(_ident(spark, name), spark._jvm.scala.Option.empty())  # type: ignore[union-attr]
    return sorted(str(n) for n in _to_list(spark, names))


# --- one table ------------------------------------------------------------------------------


def _ensure_database(spark: SparkSession, settings: SyncSettings) -> None:
    if spark.catalog.databaseExists(settings.database):
        return
    if not settings.auto_create_database:
        raise ConfigError(f"database {settings.database!r} does not exist (hoodie.datasource.hive_sync.auto_create_database=false)")
    spark.sql(f"CREATE DATABASE IF NOT EXISTS {quote(settings.database)}")


def _sync_table(spark: SparkSession, table: CatalogTable, partitions: Sequence[CatalogPartition]) -> None:
    data_schema = _data_schema(table)
    catalog = _session_catalog(spark)
    ident = _ident(spark, table.qualified_name)
    if spark.catalog.tableExists(table.qualified_name):
        existing = catalog.getTableMetadata(ident)
        _check_ours(table, existing)
        registered_partitioning = tuple(str(c) for c in _to_list(spark, existing.partitionColumnNames()))
        if registered_partitioning != table.partition_columns:
            raise ConfigError(
                f"catalog table {table.qualified_name} is partitioned by ({', '.join(registered_partitioning)}), the sync asks for "
                f"({', '.join(table.partition_columns)}) (hoodie.datasource.hive_sync.partition_fields): drop it "
                "(DROP TABLE keeps the data of this external table) and sync again"
            )
        registered = existing.dataSchema().json()
        if registered != data_schema.json():
            _check_no_column_dropped(table, StructType.fromJson(json.loads(registered)), data_schema)
            catalog.alterTableDataSchema(ident, _jvm_schema(spark, data_schema))
        spark.sql(f"ALTER TABLE {_name(table)} SET TBLPROPERTIES ({_properties(table)})")
    else:
        _create(spark, table)
        # the source travels in the schema's metadata, which DDL cannot write (module docstring)
        catalog.alterTableDataSchema(ident, _jvm_schema(spark, data_schema))
    if table.partition_columns:
        _sync_partitions(spark, table, partitions)


def _create(spark: SparkSession, table: CatalogTable) -> None:
    columns = ", ".join(f"{quote(c.name)} {c.type}" for c in table.columns())
    options = ", ".join(f"{_literal(k)} {_literal(v)}" for k, v in table.options.items())
    partitioned = f" PARTITIONED BY ({', '.join(quote(c) for c in table.partition_columns)})" if table.partition_columns else ""
    spark.sql(
        f"CREATE TABLE {_name(table)} ({columns}) USING {FORMAT}{partitioned} OPTIONS ({options}) "
        f"LOCATION {_literal(spark_uri(table.base_path))} TBLPROPERTIES ({_properties(table)})"
    )


def _check_ours(table: CatalogTable, existing: Any) -> None:
    provider = existing.provider().get() if existing.provider().isDefined() else None
    location = str(existing.location()) if existing.storage().locationUri().isDefined() else None
    if str(provider).lower() != FORMAT or location is None or _uri(location) != _uri(spark_uri(table.base_path)):
        raise ConfigError(
            f"catalog table {table.qualified_name} already exists and is not the hoodie table at {table.base_path} "
            f"(provider {provider}, location {location}); choose another hoodie.datasource.hive_sync.table or drop it"
        )


def _check_no_column_dropped(table: CatalogTable, registered: StructType, data_schema: StructType) -> None:
    # a catalog cannot drop a column in place, and dropping the table is not for a sync to do
    gone = [n for n in registered.fieldNames() if n not in data_schema.fieldNames()]
    if gone:
        raise SchemaError(
            f"catalog table {table.qualified_name} has column(s) {', '.join(map(repr, gone))} that the table at {table.base_path} "
            "no longer has; a catalog table cannot drop columns: drop it (DROP TABLE keeps the data of this external table) and sync again"
        )


def _data_schema(table: CatalogTable) -> StructType:
    """The catalog's data columns (partition columns left out), the first one carrying the source."""
    fields = [f for f in from_arrow_schema(table.schema).fields if f.name not in table.partition_columns]
    if not fields:
        raise ConfigError(f"catalog table {table.qualified_name} would have partition columns only: {', '.join(table.partition_columns)}")
    source = json.dumps({"path": table.base_path, **table.options}, sort_keys=True)
    first = fields[0]
    fields[0] = StructField(first.name, first.dataType, first.nullable, {**(first.metadata or {}), SOURCE_KEY: source})
    return StructType(fields)


# --- partitions -----------------------------------------------------------------------------


def _sync_partitions(spark: SparkSession, table: CatalogTable, partitions: Sequence[CatalogPartition]) -> None:
    catalog = _session_catalog(spark)
    ident = _ident(spark, table.qualified_name)
    columns = table.partition_columns
    have = {}
    for p in _to_list(spark, catalog.listPartitions(ident, spark._jvm.scala.Option.empty())):  # type: ignore[union-attr]
        spec = p.spec()
        key = tuple(str(spec.apply(c)) for c in columns)
        have[key] = str(p.location()) if p.storage().locationUri().isDefined() else ""
    want = {p.values: spark_uri(p.location) for p in partitions}
    stale = [k for k, loc in have.items() if k not in want or _uri(loc) != _uri(want[k])]
    if stale:
        # retainData: the catalog forgets the partition; its files stay (they are the table's)
        catalog.dropPartitions(ident, _seq(spark, [_map(spark, dict(zip(columns, k))) for k in stale]), True, False, True)
    new = [k for k in want if k not in have or k in stale]
    if new:
        parts = [_partition(spark, dict(zip(columns, k)), want[k]) for k in sorted(new)]
        catalog.createPartitions(ident, _seq(spark, parts), True)


def _partition(spark: SparkSession, spec: dict[str, str], location: str) -> Any:
    jvm = spark._jvm
    assert jvm is not None
    cls = jvm.org.apache.spark.sql.catalyst.catalog.CatalogTablePartition
    storage = _storage_at(spark, location)
    defaults = [getattr(cls, f"apply$default${i}")() for i in range(3, 7)]  # parameters, times, statistics
    return cls.apply(_map(spark, spec), storage, *defaults)


def _storage_at(spark: SparkSession, location: str) -> Any:
    """``CatalogStorageFormat.empty`` with ``location``: built field by field from the
    empty one, whose number of fields differs between Spark versions."""
    jvm = spark._jvm
    assert jvm is not None
    empty = jvm.org.apache.spark.sql.catalyst.catalog.CatalogStorageFormat.empty()
    constructor = empty.getClass().getConstructors()[0]
    n = constructor.getParameterCount()
    args = spark.sparkContext._gateway.new_array(jvm.java.lang.Object, n)  # type: ignore[union-attr]
    args[0] = jvm.scala.Option.apply(jvm.java.net.URI(location))
    for i in range(1, n):
        args[i] = empty.productElement(i)
    return constructor.newInstance(args)


# --- the JVM side ---------------------------------------------------------------------------


def _session_catalog(spark: SparkSession) -> Any:
    return spark._jsparkSession.sessionState().catalog()


def _ident(spark: SparkSession, name: str) -> Any:
    return spark._jsparkSession.sessionState().sqlParser().parseTableIdentifier(name)


def _jvm_schema(spark: SparkSession, schema: StructType) -> Any:
    assert spark._jvm is not None
    return spark._jvm.org.apache.spark.sql.types.DataType.fromJson(schema.json())


def _map(spark: SparkSession, values: dict[str, str]) -> Any:
    assert spark._jvm is not None
    return spark._jvm.org.apache.spark.api.python.PythonUtils.toScalaMap(values)


def _seq(spark: SparkSession, items: list[Any]) -> Any:
    assert spark._jvm is not None
    return spark._jvm.org.apache.spark.api.python.PythonUtils.toSeq(items)


def _to_list(spark: SparkSession, seq: Any) -> list[Any]:
    assert spark._jvm is not None
    return list(spark._jvm.scala.jdk.javaapi.CollectionConverters.asJava(seq))


def _uri(location: str) -> str:
    # the metastore gives file:/x for what was registered as file:///x
    return location.replace("file:///", "file:/").rstrip("/")


def _name(table: CatalogTable) -> str:
    return f"{quote(table.database)}.{quote(table.name)}"


def _properties(table: CatalogTable) -> str:
    """The table's properties as the list ``TBLPROPERTIES (...)`` takes."""
    return ", ".join(f"{_literal(k)} = {_literal(v)}" for k, v in sorted(table.properties.items()))


def _literal(value: str) -> str:
    """A Spark SQL string literal."""
    return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"
