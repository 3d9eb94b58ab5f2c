"""Catalog registration, the pure part: which tables a hoodie table is registered as,
with which columns, partition columns and partitions (hoodie.meta_sync), from real tables
written in process."""
from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest
from table_options import MOR_TRIPS, trip_options

import hoodie
from hoodie.errors import ConfigError, PartitionPathError, SchemaError
from hoodie.meta_sync import SyncSettings, hive_type, partition_values, plan_sync
from hoodie.meta_sync.plan import LAST_COMMIT_TIME_SYNC
from hoodie.table.table import HoodieTable


def trips(cities: list[str], ts: int = 1) -> pa.Table:
    n = len(cities)
    return pa.table({"uuid": [f"k{i}" for i in range(n)], "city": cities, "ts": [ts] * n, "fare": [float(i) for i in range(n)]})


def test_copy_on_write_is_one_snapshot_table(tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    instant = hoodie.write(trips(["sf", "nyc", "sf"]), path, trip_options())
    plan = plan_sync(HoodieTable.open(path), SyncSettings.of({"hoodie.datasource.meta.sync.enable": "true"}))
    assert [(t.qualified_name, t.query_type) for t in plan.tables] == [("default.trips", "snapshot")]
    table = plan.tables[0]
    # what a read returns, partition columns last
    assert table.schema.names == [*hoodie.read(path).column_names[:5], "uuid", "ts", "fare", "city"]
    assert [(c.name, c.type) for c in table.columns()][-4:] == [("uuid", "string"), ("ts", "bigint"), ("fare", "double"), ("city", "string")]
    assert table.partition_columns == ("city",)
    assert table.properties[LAST_COMMIT_TIME_SYNC] == instant == plan.instant
    assert [(p.values, p.path, p.location) for p in plan.partitions] == [(("nyc",), "nyc", f"{path}/nyc"), (("sf",), "sf", f"{path}/sf")]


@pytest.mark.parametrize(
    ("extra", "expected"),
    [
        ({}, [("trips_ro", "read_optimized"), ("trips_rt", "snapshot"), ("trips", "snapshot")]),
        ({"hoodie.datasource.hive_sync.skip_ro_suffix": "true"}, [("trips", "read_optimized"), ("trips_rt", "snapshot")]),
        ({"hoodie.datasource.hive_sync.table.strategy": "RT"}, [("trips", "snapshot")]),
        ({"hoodie.datasource.hive_sync.table.strategy": "ro", "hoodie.datasource.hive_sync.table": "rides"}, [("rides", "read_optimized")]),
    ],
)
def test_merge_on_read_names_as_hudi_does(tmp_path: Path, extra: dict[str, str], expected: list[tuple[str, str]]) -> None:
    path = str(tmp_path / "t")
    hoodie.write(trips(["sf"]), path, MOR_TRIPS)
    settings = SyncSettings.of({"hoodie.datasource.hive_sync.enable": "true", "hoodie.datasource.hive_sync.database": "lake", **extra})
    plan = plan_sync(HoodieTable.open(path), settings)
    assert [(t.name, t.query_type) for t in plan.tables] == expected
    assert {t.database for t in plan.tables} == {"lake"}
    assert {t.properties["hoodie.table.type"] for t in plan.tables} == {"MERGE_ON_READ"}


def test_new_columns_and_partitions_are_planned(tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    hoodie.write(trips(["sf"]), path, trip_options())
    wider = trips(["la"], ts=2).append_column("tip", pa.array([1.5]))
    hoodie.write(wider, path, trip_options())
    plan = plan_sync(HoodieTable.open(path), SyncSettings.of({}))
    assert plan.tables[0].schema.names[-2:] == ["tip", "city"]
    assert [p.values for p in plan.partitions] == [("la",), ("sf",)]


def test_hive_style_and_multi_field_partitions(tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    data = trips(["sf", "la"]).append_column("day", pa.array(["d1", "d2"]))
    options = trip_options(**{"hoodie.datasource.write.partitionpath.field": "city,day", "hoodie.datasource.write.hive_style_partitioning": "true"})
    hoodie.write(data, path, options)
    plan = plan_sync(HoodieTable.open(path), SyncSettings.of({}))
    assert plan.tables[0].partition_columns == ("city", "day")
    assert [(p.values, p.path) for p in plan.partitions] == [(("la", "d2"), "city=la/day=d2"), (("sf", "d1"), "city=sf/day=d1")]


def test_non_partitioned_table_has_no_partitions(tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    hoodie.write(trips(["sf"]), path, trip_options(**{"hoodie.datasource.write.partitionpath.field": ""}))
    plan = plan_sync(HoodieTable.open(path), SyncSettings.of({}))
    assert plan.tables[0].partition_columns == () and plan.partitions == ()


def test_partition_values_as_hudis_extractors_read_them() -> None:
    assert partition_values("2024/01/02", ["y", "m", "d"], "MultiPartKeysValueExtractor") == ("2024", "01", "02")
    assert partition_values("y=2024/m=01", ["y", "m"], "MultiPartKeysValueExtractor") == ("2024", "01")
    assert partition_values("city=san%20francisco", ["city"], "HiveStylePartitionValueExtractor", decode=True) == ("san francisco",)
    with pytest.raises(PartitionPathError, match="'2024/01' has 2 folder"):
        partition_values("2024/01", ["day"], "MultiPartKeysValueExtractor")
    with pytest.raises(PartitionPathError, match="field=value"):
        partition_values("sf", ["city"], "HiveStylePartitionValueExtractor")


def test_bad_settings_name_the_value(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="partition_extractor_class='com.acme.Mine'"):
        SyncSettings.of({"hoodie.datasource.hive_sync.partition_extractor_class": "com.acme.Mine"})
    with pytest.raises(ConfigError, match="hoodie.datasource.hive_sync.table='trips; drop'"):
        SyncSettings.of({"hoodie.datasource.hive_sync.table": "trips; drop"})
    with pytest.raises(ConfigError, match="did you mean hoodie.datasource.hive_sync.database"):
        SyncSettings.of({"hoodie.datasource.hive_sync.databse": "x"})
    path = str(tmp_path / "t")
    hoodie.write(trips(["sf"]), path, trip_options())
    with pytest.raises(ConfigError, match="'region'"):
        plan_sync(HoodieTable.open(path), SyncSettings.of({"hoodie.datasource.hive_sync.partition_fields": "region"}))


def test_hive_types() -> None:
    struct = pa.struct([("a", pa.int32()), ("b c", pa.list_(pa.string()))])
    assert hive_type(struct) == "struct<`a`:int,`b c`:array<string>>"
    assert hive_type(pa.map_(pa.string(), pa.decimal128(10, 2))) == "map<string,decimal(10,2)>"
    assert hive_type(pa.timestamp("us", tz="UTC")) == "timestamp"
    assert hive_type(pa.date32()) == "date" and hive_type(pa.int16()) == "smallint"
    with pytest.raises(SchemaError, match="'u'"):
        hive_type(pa.uint64(), "u")


def test_in_process_write_with_sync_on_is_refused_before_writing(tmp_path: Path) -> None:
    path = tmp_path / "t"
    with pytest.raises(ConfigError, match="sync_to_catalog"):
        hoodie.write(trips(["sf"]), str(path), trip_options(**{"hoodie.datasource.hive_sync.enable": "true"}))
    assert not path.exists()


def test_hudi_sync_options_hoodie_answers_or_refuses(tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    hoodie.write(trips(["san francisco"]), path, trip_options())
    table = HoodieTable.open(path)
    assert [p.values for p in plan_sync(table, SyncSettings.of({})).partitions] == [("san francisco",)]
    # decoding is asked for: a value with a %xx sequence is decoded
    assert partition_values("a%2Fb", ["city"], "MultiPartKeysValueExtractor", decode=True) == ("a/b",)
    settings = SyncSettings.of({
        "hoodie.meta.sync.client.tool.class": "org.apache.hudi.hive.HiveSyncTool",
        "hoodie.datasource.hive_sync.use_jdbc": "false",
        "hoodie.datasource.hive_sync.mode": "HMS",
        "hoodie.meta.sync.decode_partition": "true",
        "hoodie.meta.sync.metadata_file_listing": "false",
    })
    assert settings.decode_partition and not settings.metadata_listing
    with pytest.raises(ConfigError, match="hoodie.meta.sync.client.tool.class"):
        SyncSettings.of({"hoodie.meta.sync.client.tool.class": "org.apache.hudi.aws.sync.AwsGlueCatalogSyncTool"})
    with pytest.raises(ConfigError, match="hoodie.datasource.hive_sync.mode"):
        SyncSettings.of({"hoodie.datasource.hive_sync.mode": "jdbc"})
    with pytest.raises(ConfigError, match="hoodie.datasource.hive_sync.use_jdbc"):
        SyncSettings.of({"hoodie.datasource.hive_sync.use_jdbc": "true"})
