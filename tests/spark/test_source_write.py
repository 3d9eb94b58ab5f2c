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
from hoodie.spark import source_write
from hoodie.spark.source_write import STAGING_STALE_AFTER_SECONDS, HoodieBatchWriter, remove_abandoned_staging
from hoodie.storage.base import FileInfo, Storage
from hoodie.storage.factory import storage_for
from hoodie.storage.local import LocalStorage

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


@pytest.fixture(autouse=True)
def new_process(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test's writes are those of a process that has not swept its table yet."""
    monkeypatch.setattr(source_write, "_SWEPT", {})


def test_the_next_write_removes_a_killed_writers_staging_folder_and_keeps_a_live_ones(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = str(tmp_path / "t")
    _write(path, "a")
    killed = leftover(tmp_path / "t", "spark-write-killed", STAGING_STALE_AFTER_SECONDS + 60)
    live = leftover(tmp_path / "t", "spark-write-live", 60)  # a write whose tasks still run
    other = leftover(tmp_path / "t", "not-a-staging-folder", STAGING_STALE_AFTER_SECONDS + 60)
    monkeypatch.setattr(source_write, "_SWEPT", {})  # (the next write is another application's)
    _write(path, "b")
    assert not killed.exists()
    assert live.exists() and (live / "0123.arrow").exists()
    assert other.exists(), "only the data source's staging folders are its to remove"
    assert sorted(hoodie.read(path).column("uuid").to_pylist()) == ["a", "b"]
    assert sorted(p.name for p in (tmp_path / "t" / ".hoodie" / ".temp").iterdir() if p.name.startswith("spark-write-")) == ["spark-write-live"]


def test_an_aborted_write_sweeps_too(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = str(tmp_path / "t")
    _write(path, "a")
    killed = leftover(tmp_path / "t", "spark-write-killed", STAGING_STALE_AFTER_SECONDS + 60)
    monkeypatch.setattr(source_write, "_SWEPT", {})
    writer = HoodieBatchWriter(path, OPTIONS, SCHEMA, overwrite=False)
    writer.abort([writer.write(iter([_rows("b")]))])
    assert not killed.exists()
    assert hoodie.read(path).column("uuid").to_pylist() == ["a"]


class _TempListings(LocalStorage):
    """Local storage that counts the listings of the table's ``.hoodie/.temp`` (one shared
    instance serves every storage a write asks for)."""

    def __init__(self, temp: Path) -> None:
        super().__init__()
        self.temp, self.listed = str(temp), 0

    def list_dir(self, path: str) -> list[FileInfo]:
        self.listed += path.rstrip("/") == self.temp
        return super().list_dir(path)


def test_a_process_lists_the_staging_folders_once_a_day(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Consecutive writes of one process list ``.hoodie/.temp`` once; a folder abandoned
    meanwhile goes at the first write a day later (or a later application's first)."""
    path = str(tmp_path / "t")
    storage = _TempListings(tmp_path / "t" / ".hoodie" / ".temp")
    monkeypatch.setattr(source_write, "storage_for", lambda _: storage)
    _write(path, "a")
    _write(path, "b")
    assert storage.listed == 1
    killed = leftover(tmp_path / "t", "spark-write-killed", STAGING_STALE_AFTER_SECONDS + 60)
    _write(path, "c")
    assert storage.listed == 1 and killed.exists()
    clock = time.monotonic() + STAGING_STALE_AFTER_SECONDS + 1
    monkeypatch.setattr(source_write.time, "monotonic", lambda: clock)
    writer = HoodieBatchWriter(path, OPTIONS, SCHEMA, overwrite=False)
    writer.abort([writer.write(iter([_rows("d")]))])
    assert storage.listed == 2 and not killed.exists()
    assert sorted(hoodie.read(path).column("uuid").to_pylist()) == ["a", "b", "c"]


def test_a_failed_sweep_is_tried_again_by_the_next_write(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = str(tmp_path / "t")
    failing = [True]
    sweep = source_write.remove_abandoned_staging

    def flaky(storage: Storage, base_path: str) -> list[str]:
        if failing.pop():
            raise OSError("storage unavailable")
        return sweep(storage, base_path)

    monkeypatch.setattr(source_write, "remove_abandoned_staging", flaky)
    _write(path, "a")
    killed = leftover(tmp_path / "t", "spark-write-killed", STAGING_STALE_AFTER_SECONDS + 60)
    failing.append(False)
    _write(path, "b")
    assert not killed.exists()


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
    """(The Python worker that commits sweeps a table on its first write to it: the
    folders are left before the table's first write, in ``.hoodie`` only, as an
    application killed in that write leaves them.)"""
    path = str(tmp_path / "t")
    killed = leftover(tmp_path / "t", "spark-write-killed", STAGING_STALE_AFTER_SECONDS + 60)
    live = leftover(tmp_path / "t", "spark-write-live", 60)
    spark.createDataFrame([("a", "sf", 1)], SCHEMA).write.format("hoodie").options(**OPTIONS).mode("append").save(path)
    assert not killed.exists() and live.exists()
    spark.createDataFrame([("b", "sf", 1)], SCHEMA).write.format("hoodie").options(**OPTIONS).mode("append").save(path)
    assert sorted(hoodie.read(path).column("uuid").to_pylist()) == ["a", "b"]
