"""The data source's batch writer (hoodie.spark.source_write) run in process, as PySpark
runs it in its Python workers (no JVM needed): tasks stage, the commit writes, and a
staging folder a killed application left behind is removed by the next write, while a
live write's stays."""
from __future__ import annotations

import os
import time
from pathlib import Path

import pyarrow as pa
import pytest
from pyspark.sql.types import LongType, StringType, StructField, StructType

import hoodie
from hoodie.spark.source_write import STAGING_STALE_AFTER_SECONDS, HoodieBatchWriter, remove_abandoned_staging
from hoodie.storage.factory import storage_for

OPTIONS = {
    "hoodie.table.name": "t",
    "hoodie.datasource.write.recordkey.field": "uuid",
    "hoodie.datasource.write.partitionpath.field": "city",
    "hoodie.datasource.write.precombine.field": "ts",
}
SCHEMA = StructType([StructField("uuid", StringType()), StructField("city", StringType()), StructField("ts", LongType())])


def _rows(*keys: str) -> pa.RecordBatch:
    return pa.record_batch({"uuid": list(keys), "city": ["sf"] * len(keys), "ts": [1] * len(keys)})


def leftover(table: Path, name: str, age_seconds: float) -> Path:
    """A staging folder with one staged file, last changed ``age_seconds`` ago, as a writer
    killed then leaves it."""
    folder = table / ".hoodie" / ".temp" / name
    folder.mkdir(parents=True)
    staged = folder / "0123.arrow"
    staged.write_bytes(b"staged rows")
    then = time.time() - age_seconds
    os.utime(staged, (then, then))
    os.utime(folder, (then, then))
    return folder


def _write(path: str, *keys: str) -> None:
    writer = HoodieBatchWriter(path, OPTIONS, SCHEMA, overwrite=False)
    writer.commit([writer.write(iter([_rows(*keys)]))])


def test_the_next_write_removes_a_killed_writers_staging_folder_and_keeps_a_live_ones(tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    _write(path, "a")
    killed = leftover(tmp_path / "t", "spark-write-killed", STAGING_STALE_AFTER_SECONDS + 60)
    live = leftover(tmp_path / "t", "spark-write-live", 60)  # a write whose tasks still run
    other = leftover(tmp_path / "t", "not-a-staging-folder", STAGING_STALE_AFTER_SECONDS + 60)
    _write(path, "b")
    assert not killed.exists()
    assert live.exists() and (live / "0123.arrow").exists()
    assert other.exists(), "only the data source's staging folders are its to remove"
    assert sorted(hoodie.read(path).column("uuid").to_pylist()) == ["a", "b"]
    assert sorted(p.name for p in (tmp_path / "t" / ".hoodie" / ".temp").iterdir() if p.name.startswith("spark-write-")) == ["spark-write-live"]


def test_an_aborted_write_sweeps_too(tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    _write(path, "a")
    killed = leftover(tmp_path / "t", "spark-write-killed", STAGING_STALE_AFTER_SECONDS + 60)
    writer = HoodieBatchWriter(path, OPTIONS, SCHEMA, overwrite=False)
    writer.abort([writer.write(iter([_rows("b")]))])
    assert not killed.exists()
    assert hoodie.read(path).column("uuid").to_pylist() == ["a"]


def test_the_age_is_that_of_the_newest_staged_file(tmp_path: Path) -> None:
    # an old folder in which a task staged a file lately is a live write's
    folder = leftover(tmp_path / "t", "spark-write-busy", STAGING_STALE_AFTER_SECONDS + 60)
    (folder / "4567.arrow").write_bytes(b"just staged")
    then = time.time() - STAGING_STALE_AFTER_SECONDS - 60
    os.utime(folder, (then, then))
    assert remove_abandoned_staging(storage_for(str(tmp_path / "t")), str(tmp_path / "t")) == []
    assert folder.exists()
    later = time.time() + STAGING_STALE_AFTER_SECONDS + 60
    assert len(remove_abandoned_staging(storage_for(str(tmp_path / "t")), str(tmp_path / "t"), now=later)) == 1
    assert not folder.exists()


@pytest.mark.parametrize("missing", [True, False])
def test_no_temp_folder_or_no_staging_is_fine(tmp_path: Path, missing: bool) -> None:
    if not missing:
        (tmp_path / "t" / ".hoodie" / ".temp").mkdir(parents=True)
    assert remove_abandoned_staging(storage_for(str(tmp_path / "t")), str(tmp_path / "t")) == []


def test_a_spark_write_through_the_data_source_removes_a_killed_writers_folder(spark, tmp_path: Path, helpers, source_only) -> None:
    path = str(tmp_path / "t")
    df = spark.createDataFrame([("a", "sf", 1)], SCHEMA)
    df.write.format("hoodie").options(**OPTIONS).mode("append").save(path)
    killed = leftover(tmp_path / "t", "spark-write-killed", STAGING_STALE_AFTER_SECONDS + 60)
    live = leftover(tmp_path / "t", "spark-write-live", 60)
    spark.createDataFrame([("b", "sf", 1)], SCHEMA).write.format("hoodie").options(**OPTIONS).mode("append").save(path)
    assert not killed.exists() and live.exists()
    assert sorted(hoodie.read(path).column("uuid").to_pylist()) == ["a", "b"]
