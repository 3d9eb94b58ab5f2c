"""Catalog registration in the shared session (its in-memory catalog: the Hive metastore
seen from new applications is tested in test_catalog_apps.py): the tables a write with
hoodie.datasource.meta.sync.enable registers, read with SQL through hoodie's data source,
kept in step with new columns, new partitions and partitions an overwrite emptied; the
Python API; a table of that name that is not this table is never replaced. And that
register(spark) still answers batch format("hoodie") itself when the data source is
installed too."""
from __future__ import annotations

import itertools
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from pyspark.sql.types import StructType

import hoodie
from hoodie.errors import ConfigError, SchemaError, TableError
from hoodie.spark import catalog_partitions, sync_to_catalog
from hoodie.table.table import HoodieTable

_DATABASES = itertools.count()


@pytest.fixture
def database(spark) -> Iterator[str]:
    name = f"sync_{next(_DATABASES)}"
    yield name
    spark.sql(f"DROP DATABASE IF EXISTS {name} CASCADE")


def trips(rows: list[tuple[str, str, int, float]]) -> pa.Table:
    return pa.table({
        "uuid": [r[0] for r in rows], "city": [r[1] for r in rows],
        "ts": pa.array([r[2] for r in rows], pa.int64()), "fare": [r[3] for r in rows],
    })


def canonical(rows: list[dict[str, Any]]) -> list[str]:
    return sorted(json.dumps(r, sort_keys=True, default=str) for r in rows)


def sql_rows(spark, query: str) -> list[str]:
    return canonical([r.asDict() for r in spark.sql(query).collect()])


def last_commit_time_sync(spark, name: str) -> str:
    # the catalog's own record: SHOW TBLPROPERTIES shows a Python data source table's as empty
    ident = spark._jsparkSession.sessionState().sqlParser().parseTableIdentifier(name)
    return str(spark._jsparkSession.sessionState().catalog().getTableMetadata(ident).properties().get("last_commit_time_sync").get())


def test_a_write_with_sync_registers_and_updates_the_table(spark, tmp_path: Path, helpers, database: str) -> None:
    path = str(tmp_path / "t")
    opts = helpers.base_options(**{"hoodie.datasource.meta.sync.enable": "true", "hoodie.datasource.hive_sync.database": database})
    helpers.to_df(spark, trips([("a", "sf", 1, 1.0), ("b", "la", 1, 2.0)])).write.format("hoodie").options(**opts).mode("append").save(path)
    assert [t.name for t in spark.catalog.listTables(database)] == ["trips"]
    assert sql_rows(spark, f"SELECT * FROM {database}.trips") == canonical(hoodie.read(path).to_pylist())
    assert catalog_partitions(spark, f"{database}.trips") == ["city=la", "city=sf"]
    first = hoodie.read(path).column("_hoodie_commit_time")[0].as_py()
    assert last_commit_time_sync(spark, f"{database}.trips") == first

    # a new column and a new partition
    wider = trips([("c", "nyc", 2, 3.0)]).append_column("tip", pa.array([0.5]))
    helpers.to_df(spark, wider).write.format("hoodie").options(**opts).mode("append").save(path)
    assert spark.table(f"{database}.trips").columns[-3:] == ["fare", "tip", "city"]
    assert sql_rows(spark, f"SELECT * FROM {database}.trips") == canonical(hoodie.read(path).to_pylist())
    assert catalog_partitions(spark, f"{database}.trips") == ["city=la", "city=nyc", "city=sf"]
    assert last_commit_time_sync(spark, f"{database}.trips") == max(hoodie.read(path).column("_hoodie_commit_time").to_pylist()) != first

    # an overwrite leaves one partition: the others leave the catalog, their folders stay
    last = trips([("z", "la", 3, 9.0)]).append_column("tip", pa.array([None], pa.float64()))
    helpers.to_df(spark, last).write.format("hoodie").options(**opts).mode("overwrite").save(path)
    assert catalog_partitions(spark, f"{database}.trips") == ["city=la"]
    assert sql_rows(spark, f"SELECT uuid FROM {database}.trips") == canonical([{"uuid": "z"}])
    assert (tmp_path / "t" / "sf").is_dir()


def test_every_streaming_micro_batch_is_synced(spark, tmp_path: Path, database: str) -> None:
    import pyarrow.parquet as pq

    landing, path = tmp_path / "landing", str(tmp_path / "t")
    landing.mkdir()
    pq.write_table(trips([("a", "sf", 1, 1.0)]), landing / "0.parquet")
    pq.write_table(trips([("b", "la", 1, 2.0)]), landing / "1.parquet")
    options = {**_cow_options(), "hoodie.datasource.hive_sync.enable": "true", "hoodie.datasource.hive_sync.database": database}
    stream = spark.readStream.schema("uuid string, city string, ts long, fare double").option("maxFilesPerTrigger", 1).parquet(str(landing))
    query = stream.writeStream.format("hoodie").options(**options).option("checkpointLocation", str(tmp_path / "cp")).start(path)
    try:
        query.processAllAvailable()
    finally:
        query.stop()
    assert len(HoodieTable.open(path).timeline.completed_writes()) == 2  # two micro-batches, two commits
    assert catalog_partitions(spark, f"{database}.trips") == ["city=la", "city=sf"]
    assert sql_rows(spark, f"SELECT * FROM {database}.trips") == canonical(hoodie.read(path).to_pylist())
    assert last_commit_time_sync(spark, f"{database}.trips") == HoodieTable.open(path).timeline.completed_writes()[-1].timestamp


def test_sync_to_catalog_registers_a_table_written_in_process(spark, tmp_path: Path, database: str) -> None:
    path = str(tmp_path / "t")
    options = {**_mor_options(), "hoodie.datasource.hive_sync.table": "rides"}
    hoodie.write(trips([("a", "sf", 1, 1.0), ("b", "la", 1, 2.0)]), path, options)
    hoodie.write(trips([("a", "sf", 2, 5.0)]), path, options)
    plan = sync_to_catalog(spark, path, {"hoodie.datasource.hive_sync.database": database, "hoodie.datasource.hive_sync.table": "rides"})
    assert [(t.name, t.query_type) for t in plan.tables] == [("rides_ro", "read_optimized"), ("rides_rt", "snapshot"), ("rides", "snapshot")]
    assert sorted(t.name for t in spark.catalog.listTables(database)) == ["rides", "rides_ro", "rides_rt"]
    snapshot = canonical(hoodie.read(path).to_pylist())
    assert sql_rows(spark, f"SELECT * FROM {database}.rides_rt") == sql_rows(spark, f"SELECT * FROM {database}.rides") == snapshot
    optimized = canonical(hoodie.read(path, {"hoodie.datasource.query.type": "read_optimized"}).to_pylist())
    assert sql_rows(spark, f"SELECT * FROM {database}.rides_ro") == optimized != snapshot
    # read options given to a query win over the table's
    assert sql_rows(spark, f"SELECT * FROM {database}.rides_rt WITH ('hoodie.datasource.query.type' = 'read_optimized')") == optimized
    # syncing again changes nothing
    sync_to_catalog(spark, path, {"hoodie.datasource.hive_sync.database": database, "hoodie.datasource.hive_sync.table": "rides"})
    assert sql_rows(spark, f"SELECT * FROM {database}.rides_rt") == snapshot
    # the tables are external: dropping them leaves the hoodie table whole
    for name in ("rides", "rides_ro", "rides_rt"):
        spark.sql(f"DROP TABLE {database}.{name}")
    assert canonical(hoodie.read(path).to_pylist()) == snapshot


def test_a_column_the_table_lost_or_other_partitioning_is_an_error_naming_it(spark, tmp_path: Path, database: str) -> None:
    path = str(tmp_path / "t")
    hoodie.write(trips([("a", "sf", 1, 1.0)]), path, _cow_options())
    sync = {"hoodie.datasource.hive_sync.database": database}
    sync_to_catalog(spark, path, sync)
    with pytest.raises(ConfigError, match=r"is partitioned by \(city\), the sync asks for \(\)"):
        sync_to_catalog(spark, path, {**sync, "hoodie.datasource.hive_sync.partition_fields": ""})
    # the catalog knows a column the table does not have (another writer dropped it, say)
    catalog = spark._jsparkSession.sessionState().catalog()
    ident = spark._jsparkSession.sessionState().sqlParser().parseTableIdentifier(f"{database}.trips")
    wider = StructType.fromJson(json.loads(catalog.getTableMetadata(ident).dataSchema().json())).add("legacy", "string")
    catalog.alterTableDataSchema(ident, spark._jvm.org.apache.spark.sql.types.DataType.fromJson(wider.json()))
    with pytest.raises(SchemaError, match="has column\\(s\\) 'legacy' that the table at"):
        sync_to_catalog(spark, path, sync)


def test_a_table_that_is_not_this_one_is_never_replaced(spark, tmp_path: Path, database: str) -> None:
    path = str(tmp_path / "t")
    hoodie.write(trips([("a", "sf", 1, 1.0)]), path, _cow_options())
    spark.sql(f"CREATE DATABASE {database}")
    spark.sql(f"CREATE TABLE {database}.trips (x int) USING parquet LOCATION '{tmp_path / 'other'}'")
    with pytest.raises(ConfigError, match=f"{database}.trips already exists and is not the hoodie table at {path}"):
        sync_to_catalog(spark, path, {"hoodie.datasource.hive_sync.database": database})
    assert spark.table(f"{database}.trips").columns == ["x"]
    # a write with sync on commits, then says the registration failed
    df = spark.createDataFrame([("b", "la", 2, 2.0)], "uuid string, city string, ts long, fare double")
    opts = {**_cow_options(), "hoodie.datasource.hive_sync.enable": "true", "hoodie.datasource.hive_sync.database": database}
    with pytest.raises(TableError, match="completed, but registering it in the catalog failed"):
        df.write.format("hoodie").options(**opts).mode("append").save(path)
    assert sorted(hoodie.read(path).column("uuid").to_pylist()) == ["a", "b"]


def test_a_missing_database_is_an_error_without_auto_create(spark, tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    hoodie.write(trips([("a", "sf", 1, 1.0)]), path, _cow_options())
    with pytest.raises(ConfigError, match="database 'nowhere' does not exist"):
        sync_to_catalog(spark, path, {"hoodie.datasource.hive_sync.database": "nowhere", "hoodie.datasource.hive_sync.auto_create_database": "false"})


def test_register_still_answers_batch_format_hoodie(spark, tmp_path: Path, helpers) -> None:
    """The data source is registered too, but batch reads keep Spark's native Parquet scan
    and writes the distributed pipeline (Spark's default save mode works, which the data
    source refuses)."""
    path = str(tmp_path / "t")
    helpers.to_df(spark, trips([("a", "sf", 1, 1.0)])).write.format("hoodie").options(**helpers.base_options()).save(path)
    df = spark.read.format("hoodie").load(path)
    plan = df._jdf.queryExecution().executedPlan().toString()
    assert "FileScan parquet" in plan and "BatchEvalPythonUDTF" not in plan and "PythonScan" not in plan
    assert not (tmp_path / "t" / ".hoodie" / ".temp").exists() or not any((tmp_path / "t" / ".hoodie" / ".temp").glob("spark-write-*"))


def _cow_options() -> dict[str, str]:
    return {"hoodie.table.name": "trips", "hoodie.datasource.write.recordkey.field": "uuid",
            "hoodie.datasource.write.partitionpath.field": "city", "hoodie.datasource.write.precombine.field": "ts"}


def _mor_options() -> dict[str, str]:
    return {**_cow_options(), "hoodie.datasource.write.table.type": "MERGE_ON_READ", "hoodie.index.bloom.num_entries": "1000"}
