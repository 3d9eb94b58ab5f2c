"""``spark.read.format("hoodie")`` never reads a damaged table silently: a committed file
the read needs, missing or truncated, fails the read naming it; the read options
``ignoreMissingFiles`` / ``ignoreCorruptFiles`` and Spark's session switches
``spark.sql.files.ignoreMissingFiles`` / ``ignoreCorruptFiles`` read around it."""
from __future__ import annotations

import re
from pathlib import Path

import pyarrow as pa
import pytest
from table_options import MOR_TRIPS, trip_options

import hoodie
from hoodie import HoodieTable
from hoodie.errors import DamagedTableError, FormatError, TimelineError, UnsupportedTableError

# a lost file is found by the check of a listing of storage against the committed files
COW = trip_options(**{"hoodie.metadata.enable": "false"})
MOR = {**MOR_TRIPS, "hoodie.metadata.enable": "false"}


def _trips(n: int, ts: int) -> pa.Table:
    return pa.table({"uuid": [f"u{i:03d}" for i in range(n)], "city": ["sf" if i % 2 else "nyc" for i in range(n)], "ts": [ts] * n, "fare": [1.0] * n})


def _latest_files(path: str) -> list[str]:
    table = HoodieTable.open(path)
    return [s.path for s in table.commit_metadata(table.timeline.completed_writes()[-1]).write_stats()]


def test_missing_base_file_fails_the_read_or_is_read_around(spark, tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    hoodie.write(_trips(10, 1), path, COW)
    hoodie.write(_trips(10, 2), path, COW)
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
    hoodie.write(_trips(50, 1), path, MOR)
    hoodie.write(_trips(25, 2), path, MOR)
    log_file = Path(path) / next(p for p in _latest_files(path) if "/." in p)
    data = log_file.read_bytes()
    log_file.write_bytes(data[: len(data) // 2])
    with pytest.raises(Exception, match=r"DamagedTableError.*" + log_file.name):
        spark.read.format("hoodie").load(path).collect()
    rows = spark.read.format("hoodie").option("ignoreCorruptFiles", "true").load(path)
    assert rows.count() == 50


def test_forged_timeline_fails_spark_reads_and_writes_naming_the_cause(spark, tmp_path: Path) -> None:
    """An empty latest commit whose file is gone, a timeline file dated far ahead and a
    layout the table version does not have stop ``format("hoodie")`` reads and writes as
    they stop ``hoodie.read``/``hoodie.write``: nothing stale, no wait, nothing written."""
    path = str(tmp_path / "t")
    hoodie.write(_trips(10, 1), path, trip_options())
    latest = hoodie.write(_trips(10, 2), path, trip_options())
    hoodie_dir = Path(path) / ".hoodie"
    commit = hoodie_dir / f"{latest}.commit"
    good_commit, rel = commit.read_bytes(), _latest_files(path)[0]
    props = hoodie_dir / "hoodie.properties"
    good_props = props.read_text()
    writer = spark.createDataFrame(_trips(2, 3).to_pandas()).write.format("hoodie").options(**trip_options()).mode("append")
    forgeries = [
        (lambda: commit.write_bytes(b""), FormatError, f"commit metadata of instant {latest} is empty"),
        (lambda: (hoodie_dir / "99991231235959999.clean").write_bytes(b""), TimelineError, "99991231235959999.clean"),
        (lambda: props.write_text(good_props.replace("layout.version=1\n", "layout.version=2\n")), UnsupportedTableError, "hoodie.timeline.layout.version='2'"),
    ]
    for forge, error, expected in forgeries:
        forge()
        saved = (Path(path) / rel).read_bytes()
        (Path(path) / rel).unlink()  # the latest base file too: a stale read would show ts 1
        with pytest.raises(error, match=re.escape(expected)):
            spark.read.format("hoodie").load(path).collect()
        with pytest.raises(error, match=re.escape(expected)):
            writer.save(path)
        (Path(path) / rel).write_bytes(saved)
        commit.write_bytes(good_commit)
        (hoodie_dir / "99991231235959999.clean").unlink(missing_ok=True)
        props.write_text(good_props)
    assert sorted(r.ts for r in spark.read.format("hoodie").load(path).collect()) == [2] * 10
