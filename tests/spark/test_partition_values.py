"""Partition columns in Spark reads: by default (``hoodie.datasource.read.extract.partition.
values.from.path`` unset, or true) the values the partition paths give, as Apache Hudi 1.x
reads them, so that Spark prunes partitions for SQL on views too; with the option false
what the data files store, as ``hoodie.read`` reads them, filters on the DataFrame still
pruning partitions by their paths and Spark applying them to the stored values.

The case that tells them apart: with ``hoodie.index.type=RECORD_INDEX`` and
``hoodie.record.index.update.partition.path=false`` a record whose partition field changes
is updated in its old partition, with the new value in the file.
"""
from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest
from global_modeling import global_options
from pyspark.sql import functions as F

import hoodie
from hoodie.errors import ConfigError

FROM_PATH = "hoodie.datasource.read.extract.partition.values.from.path"
STORED = {FROM_PATH: "false"}


def _options(table_type: str, **extra: str) -> dict[str, str]:
    # RECORD_INDEX, update.partition.path false: a record naming another partition stays put
    return {**global_options(table_type, False), **extra}


def _rows(keys: list[str], cities: list[str], ts: int) -> pa.Table:
    return pa.table({
        "uuid": pa.array(keys, pa.string()),
        "city": pa.array(cities, pa.string()),
        "ts": pa.array([ts] * len(keys), pa.int64()),
        "fare": pa.array([float(ts * 10 + i) for i in range(len(keys))], pa.float64()),
    })


def _moved_table(path: str, table_type: str, **extra: str) -> None:
    """k0 and k1 in sf, k2 in la; then k0 says la: it stays in sf holding "la"."""
    opts = _options(table_type, **extra)
    hoodie.write(_rows(["k0", "k1", "k2"], ["sf", "sf", "la"], 1), path, opts)
    hoodie.write(_rows(["k0"], ["la"], 2), path, opts)


def _by_key(data) -> dict[str, tuple[str, str]]:
    table = data if isinstance(data, pa.Table) else data.toArrow()
    return {r["uuid"]: (r["_hoodie_partition_path"], r["city"]) for r in table.to_pylist()}


# MOR compacted after every write (base files only, the native scan), and MOR with its
# update in a log file (the merged scan)
CASES = [
    ("COPY_ON_WRITE", {}),
    ("MERGE_ON_READ", {"hoodie.compact.inline": "true", "hoodie.compact.inline.max.delta.commits": "1"}),
    ("MERGE_ON_READ", {}),
]


@pytest.mark.parametrize(("table_type", "extra"), CASES, ids=["cow", "mor-compacted", "mor-logs"])
def test_a_moved_record_shows_its_stored_partition_value(spark, tmp_path: Path, helpers, table_type: str, extra: dict[str, str]) -> None:
    path = str(tmp_path / "t")
    _moved_table(path, table_type, **extra)
    expected = hoodie.read(path)
    assert _by_key(expected) == {"k0": ("sf", "la"), "k1": ("sf", "sf"), "k2": ("la", "la")}
    df = spark.read.format("hoodie").options(**STORED).load(path)
    assert helpers.rows(df) == helpers.rows(expected)
    ro = {"hoodie.datasource.query.type": "read_optimized"}
    assert helpers.rows(spark.read.format("hoodie").options(**ro, **STORED).load(path)) == helpers.rows(hoodie.read(path, ro))
    pull = {"hoodie.datasource.query.type": "incremental", "hoodie.datasource.read.begin.instanttime": "0"}
    assert helpers.rows(spark.read.format("hoodie").options(**pull, **STORED).load(path)) == helpers.rows(hoodie.read(path, pull))

    # filters prune by partition path (as Apache Hudi's file index does) and hold on the stored values
    in_la = df.filter(F.col("city") == "la")
    assert {s.partition_path for s in in_la.hoodie_file_slices} == {"la"}
    assert _by_key(in_la) == {"k2": ("la", "la")}
    in_sf = df.filter(F.col("city") == "sf")
    assert {s.partition_path for s in in_sf.hoodie_file_slices} == {"sf"}
    assert _by_key(in_sf) == {"k1": ("sf", "sf")}
    # a filter on other columns prunes nothing and keeps the stored value
    assert _by_key(df.filter(F.col("uuid") == "k0")) == {"k0": ("sf", "la")}


@pytest.mark.parametrize("asked", [{}, {FROM_PATH: "true"}], ids=["unset", "true"])
def test_values_from_the_path_by_default_and_when_asked(spark, tmp_path: Path, helpers, asked: dict[str, str]) -> None:
    """Unset or ``extract.partition.values.from.path=true``: the path's value, as Apache Hudi
    1.x gives it, for base files and merged slices alike, and Spark prunes by it on its own,
    SQL on a view included; ``hoodie.read`` refuses true."""
    for table_type, extra in CASES[:1] + CASES[2:]:
        path = str(tmp_path / table_type)
        _moved_table(path, table_type, **extra)
        df = spark.read.format("hoodie").options(**asked).load(path)
        assert _by_key(df) == {"k0": ("sf", "sf"), "k1": ("sf", "sf"), "k2": ("la", "la")}
        assert _by_key(df.filter(F.col("city") == "sf")) == {"k0": ("sf", "sf"), "k1": ("sf", "sf")}
        expected = hoodie.read(path)
        assert helpers.rows(df, drop=("city",)) == helpers.rows(expected, drop=("city",))
        df.createOrReplaceTempView("moved")
        in_la = spark.sql("SELECT uuid FROM moved WHERE city = 'la'")
        assert sorted(r.uuid for r in in_la.collect()) == ["k2"]
        if table_type == "COPY_ON_WRITE":  # (merged slices are read by Python tasks, not files Spark lists)
            assert {Path(f).parent.name for f in in_la.inputFiles()} == {"la"}
    with pytest.raises(ConfigError, match=FROM_PATH):
        hoodie.read(path, {FROM_PATH: "true"})


def test_hive_style_partitions_prune_and_read_the_stored_value(spark, tmp_path: Path, helpers) -> None:
    """A hive-style table: the read of stored values prunes by the path's value without Spark's
    partition discovery (which would put the path's value in place of the stored one)."""
    path = str(tmp_path / "hive")
    _moved_table(path, "COPY_ON_WRITE", **{"hoodie.datasource.write.hive_style_partitioning": "true"})
    df = spark.read.format("hoodie").options(**STORED).load(path)
    assert helpers.rows(df) == helpers.rows(hoodie.read(path))
    assert _by_key(df)["k0"] == ("city=sf", "la")
    in_la = df.filter(F.col("city").isin("la", "nyc"))
    assert {Path(f).parent.name for f in in_la.inputFiles()} == {"city=la"}
    assert sorted(_by_key(in_la)) == ["k2"]


def test_files_without_the_partition_column_take_it_from_the_path(spark, tmp_path: Path, helpers) -> None:
    """A table written with ``hoodie.datasource.write.drop.partition.columns=true`` (as
    Apache Hudi writes it: base files without the partition column) reads the column from
    the partition path, by default."""
    path = Path(tmp_path / "dropped")
    hoodie.write(_rows(["k0", "k1", "k2"], ["sf", "sf", "la"], 1), str(path), _options("COPY_ON_WRITE"))
    expected = hoodie.read(str(path))
    props = path / ".hoodie" / "hoodie.properties"
    text = props.read_text().replace("hoodie.datasource.write.drop.partition.columns=false", "hoodie.datasource.write.drop.partition.columns=true")
    assert text != props.read_text()
    props.write_text(text)
    for f in helpers.data_files(path):
        stored = pq.read_table(f)
        pq.write_table(stored.drop_columns(["city"]).replace_schema_metadata(stored.schema.metadata), f)
    df = spark.read.format("hoodie").load(str(path))
    assert helpers.rows(df) == helpers.rows(expected)
    assert sorted(r.uuid for r in df.filter(F.col("city") == "sf").collect()) == ["k0", "k1"]
    assert pc.sum(pc.is_null(expected.column("city"))).as_py() == 0
