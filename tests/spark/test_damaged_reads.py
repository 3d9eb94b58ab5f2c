"""``spark.read.format("hoodie")`` never reads a damaged table silently: a committed file
the read needs, missing or truncated, fails the read naming it; the read options
``ignoreMissingFiles`` / ``ignoreCorruptFiles`` and Spark's session switches
``spark.sql.files.ignoreMissingFiles`` / ``ignoreCorruptFiles`` read around it."""
from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest
from table_options import MOR_TRIPS, trip_options

import hoodie
from hoodie import HoodieTable
from hoodie.errors import DamagedTableError


def _trips(n: int, ts: int) -> pa.Table:
    return pa.table({"uuid": [f"u{i:03d}" for i in range(n)], "city": ["sf" if i % 2 else "nyc" for i in range(n)], "ts": [ts] * n, "fare": [1.0] * n})


def _latest_files(path: str) -> list[str]:
    table = HoodieTable.open(path)
    return [s.path for s in table.commit_metadata(table.timeline.completed_writes()[-1]).write_stats()]


def test_missing_base_file_fails_the_read_or_is_read_around(spark, tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    hoodie.write(_trips(10, 1), path, trip_options())
    hoodie.write(_trips(10, 2), path, trip_options())
    rel = _latest_files(path)[0]
    (Path(path) / rel).unlink()
    with pytest.raises(DamagedTableError, match=rel):
        spark.read.format("hoodie").load(path)
    assert spark.read.format("hoodie").option("ignoreMissingFiles", "true").load(path).count() == 5
    spark.conf.set("spark.sql.files.ignoreMissingFiles", "true")
    try:
        assert spark.read.format("hoodie").load(path).count() == 5
    finally:
        spark.conf.unset("spark.sql.files.ignoreMissingFiles")


def test_truncated_committed_log_fails_the_read_or_is_read_around(spark, tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    hoodie.write(_trips(50, 1), path, MOR_TRIPS)
    hoodie.write(_trips(25, 2), path, MOR_TRIPS)
    log_file = Path(path) / next(p for p in _latest_files(path) if "/." in p)
    data = log_file.read_bytes()
    log_file.write_bytes(data[: len(data) // 2])
    with pytest.raises(Exception, match=r"DamagedTableError.*" + log_file.name):
        spark.read.format("hoodie").load(path).collect()
    rows = spark.read.format("hoodie").option("ignoreCorruptFiles", "true").load(path)
    assert rows.count() == 50
