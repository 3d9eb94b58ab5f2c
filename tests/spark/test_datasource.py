"""``format("hoodie")`` on DataFrameWriter/DataFrameReader: save modes, the ways Spark
users pass options and paths, unknown options, and that other formats are untouched."""
from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest
from pyspark.sql.readwriter import DataFrameReader, DataFrameWriter

import hoodie
from hoodie.errors import ConfigError, TableError
from hoodie.spark import register
from hoodie.table.table import HoodieTable


def _trips(keys: list[str], ts: int) -> pa.Table:
    return pa.table({
        "uuid": keys,
        "city": ["sf" if i % 2 else "la" for i in range(len(keys))],
        "ts": pa.array([ts] * len(keys), pa.int64()),
        "fare": [float(i) for i in range(len(keys))],
    })


def _commits(path: str) -> list[tuple[str, str]]:
    table = HoodieTable.open(path)
    return [(i.action, table.commit_metadata(i).operation_type) for i in table.timeline.completed_writes()]


def test_save_modes(spark, tmp_path, helpers) -> None:
    path = str(tmp_path / "t")
    opts = helpers.base_options()
    first, second = _trips(["a", "b", "c"], 1), _trips(["c", "d"], 2)

    def writer(data: pa.Table) -> DataFrameWriter:
        return helpers.to_df(spark, data).write.format("hoodie").options(**opts)

    writer(first).save(path)  # Spark's default mode (errorifexists) creates a new table
    assert _commits(path) == [("commit", "UPSERT")]
    for mode in (None, "error", "errorifexists"):
        w = writer(second) if mode is None else writer(second).mode(mode)
        with pytest.raises(TableError, match=str(tmp_path / "t")):
            w.save(path)
    writer(second).mode("ignore").save(path)
    assert _commits(path) == [("commit", "UPSERT")]
    writer(second).mode("append").save(path)
    assert sorted(hoodie.read(path).column("uuid").to_pylist()) == ["a", "b", "c", "d"]
    # overwrite on an existing table is insert_overwrite_table: only the new rows remain
    writer(second).mode("overwrite").save(path)
    assert _commits(path)[-1] == ("replacecommit", "INSERT_OVERWRITE_TABLE")
    assert helpers.rows(hoodie.read(path), drop=helpers.META) == helpers.rows(second)
    assert helpers.rows(helpers.hudi_rs_snapshot(path), drop=helpers.META) == helpers.rows(second)
    # overwrite where no table exists is a plain first write
    fresh = str(tmp_path / "fresh")
    writer(first).mode("overwrite").save(fresh)
    assert _commits(fresh) == [("commit", "UPSERT")]


def test_options_paths_and_formats(spark, tmp_path, helpers) -> None:
    path = str(tmp_path / "t")
    data = _trips(["a", "b", "c", "d"], 1)
    df = helpers.to_df(spark, data)
    # non-string option values, the path as an option, partitionBy instead of the field
    (
        df.write.format("hoodie")
        .option("path", path)
        .option("hoodie.table.name", "trips")
        .options(**{"hoodie.datasource.write.recordkey.field": "uuid", "hoodie.datasource.write.precombine.field": "ts"})
        .option("hoodie.datasource.write.hive_style_partitioning", True)
        .option("hoodie.copyonwrite.insert.split.size", 100)
        .partitionBy("city")
        .mode("append")
        .save()
    )
    assert sorted(p.name for p in Path(path).iterdir() if not p.name.startswith(".")) == ["city=la", "city=sf"]
    assert HoodieTable.open(path).config.partition_fields == ("city",)
    # save(path, format=..., mode=..., **options), as DataFrameWriter.save allows
    df.limit(1).write.save(path, format="hoodie", mode="append", **{"hoodie.datasource.write.operation": "upsert"})
    expected = helpers.rows(hoodie.read(path))
    assert helpers.rows(spark.read.format("hoodie").load(path)) == expected
    assert helpers.rows(spark.read.format("hoodie").option("path", path).load()) == expected
    assert helpers.rows(spark.read.load(path, format="hoodie")) == expected

    with pytest.raises(ConfigError, match="did you mean hoodie.datasource.write.recordkey.field"):
        df.write.format("hoodie").option("hoodie.datasource.write.recordkey.feild", "uuid").mode("append").save(path)
    with pytest.raises(ConfigError, match="hoodie.datasource.query.typ"):
        spark.read.format("hoodie").option("hoodie.datasource.query.typ", "snapshot").load(path)
    with pytest.raises(ConfigError, match="path"):
        df.write.format("hoodie").mode("append").save()

    # registering again changes nothing; other formats go to Spark untouched
    save, load = DataFrameWriter.save, DataFrameReader.load
    register(spark)
    register(spark)
    assert (DataFrameWriter.save, DataFrameReader.load) == (save, load)
    plain = str(tmp_path / "plain")
    df.write.format("parquet").mode("overwrite").save(plain)
    assert spark.read.format("parquet").load(plain).count() == 4
    df.write.mode("overwrite").parquet(plain)
    assert spark.read.parquet(plain).count() == 4


def test_misspelled_options_and_bad_values_are_errors_naming_them(spark, tmp_path, helpers) -> None:
    # issue 27 items 9 and 14 through format("hoodie"): a typo outside hoodie.* is not read
    # past (which would return the latest snapshot), Spark's own keys pass
    path = str(tmp_path / "t")
    df = helpers.to_df(spark, _trips(["a", "b"], 1))
    df.write.format("hoodie").options(**helpers.base_options()).mode("append").save(path)
    first = HoodieTable.open(path).timeline.completed_writes()[0].timestamp
    helpers.to_df(spark, _trips(["a"], 2)).write.format("hoodie").options(**helpers.base_options()).mode("append").save(path)
    with pytest.raises(ConfigError, match=r"^unknown option as\.of\.instnt; did you mean as\.of\.instant\?$"):
        spark.read.format("hoodie").option("as.of.instnt", first).load(path)
    as_of = spark.read.format("hoodie").option("header", "true").option("path", path).option("as.of.instant", first).load()
    assert sorted(r["ts"] for r in as_of.collect()) == [1, 1]
    with pytest.raises(ConfigError, match=r"^invalid value 'big' for option hoodie.parquet.max.file.size: expected an integer from 1$"):
        df.write.format("hoodie").options(**helpers.base_options()).option("hoodie.parquet.max.file.size", "big").mode("append").save(path)
    with pytest.raises(ConfigError, match=r"^invalid value 'sometimes' for option ignoreMissingFiles: expected true or false$"):
        spark.read.format("hoodie").option("ignoreMissingFiles", "sometimes").load(path)
    assert len(HoodieTable.open(path).timeline.completed_writes()) == 2


def test_a_folder_of_other_files_is_refused_unless_allowed(spark, tmp_path, helpers) -> None:
    home = tmp_path / "csv"
    home.mkdir()
    (home / "part-0.csv").write_text("id\n1\n")
    df = helpers.to_df(spark, _trips(["a", "b"], 1))
    with pytest.raises(TableError, match=r"holds files that are not a Hudi table \(part-0\.csv\); no Hudi table was created there"):
        df.write.format("hoodie").options(**helpers.base_options()).mode("append").save(str(home))
    assert sorted(p.name for p in home.iterdir()) == ["part-0.csv"]
    df.write.format("hoodie").options(**helpers.base_options()).option("hoodie.table.create.allow.foreign.files", "true").mode("append").save(str(home))
    assert sorted(hoodie.read(str(home)).column("uuid").to_pylist()) == ["a", "b"]
