"""Table services through Spark: compaction and cleaning run their tasks on executors
(``SparkEngine``), inline compaction follows a Spark write, and an inline service that
fails after the commit leaves the Spark write successful, with a warning."""
from __future__ import annotations

import logging
from pathlib import Path

import pyarrow as pa
import pytest
from hostile_paths import forge_clean_outside
from readers import sorted_tuples

import hoodie
from hoodie.services.clean_plan import CleanPolicy, CleanSettings
from hoodie.services.cleaning import clean
from hoodie.services.compaction import UNBOUNDED_STRATEGY, CompactionSettings, run_compaction, schedule_compaction
from hoodie.services.opening import open_for_services
from hoodie.spark import SparkEngine
from hoodie.table.table import HoodieTable

OPTS = {
    "hoodie.table.name": "t",
    "hoodie.datasource.write.recordkey.field": "k",
    "hoodie.datasource.write.partitionpath.field": "p",
    "hoodie.datasource.write.precombine.field": "ts",
    "hoodie.datasource.write.table.type": "MERGE_ON_READ",
    "hoodie.index.bloom.num_entries": "500",
    "hoodie.clean.automatic": "false",
}


def rows(path: str) -> list[tuple]:
    return sorted_tuples(hoodie.read(path), ["k", "p", "ts"])


def test_compaction_and_cleaning_on_executors(spark, tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    hoodie.write(pa.table({"k": [f"k{i}" for i in range(12)], "p": ["a", "b", "c"] * 4, "ts": [0] * 12}), path, OPTS)
    for ts in (1, 2):
        hoodie.write(pa.table({"k": ["k0", "k1", "k2"], "p": ["a", "b", "c"], "ts": [ts] * 3}), path, OPTS)
    before = rows(path)
    engine = SparkEngine(spark)
    instant, decision = schedule_compaction(open_for_services(path), CompactionSettings(strategy=UNBOUNDED_STRATEGY), require_threshold=False)
    assert instant and len(decision.operations) == 3
    run_compaction(open_for_services(path), instant, engine=engine)
    table = open_for_services(path)  # (its completions keep the metadata table, on by default)
    assert all(s.base_instant == instant and not s.log_files for s in table.view().latest_slices_all())
    assert rows(path) == before
    # Hudi keeps the last slice before the oldest retained commit: keep one version instead
    result = clean(table, CleanSettings(policy=CleanPolicy.KEEP_LATEST_FILE_VERSIONS, file_versions_retained=1), engine=engine)
    assert result.ran and sum(len(v) for v in result.deleted.values()) > 0
    assert rows(path) == before


def test_inline_compaction_after_a_spark_write(spark, tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    opts = {**OPTS, "hoodie.compact.inline": "true", "hoodie.compact.inline.max.delta.commits": "2"}
    for ts in (0, 1):
        df = spark.createDataFrame(pa.table({"k": ["a", "b"], "p": ["x", "x"], "ts": [ts, ts]}).to_pandas())
        df.write.format("hoodie").options(**opts).mode("append").save(path)
    table = HoodieTable.open(path)
    (commit,) = table.timeline.completed(["commit"])
    assert table.commit_metadata(commit).compacted
    assert rows(path) == [("a", "x", 1), ("b", "x", 1)]


def test_partition_aligned_write_equals_in_process(spark, tmp_path: Path) -> None:
    """With many partitions per shuffle task the handles run where the tagged records are
    (no second shuffle); the table must come out as the in-process client writes it."""
    opts = {**OPTS, "hoodie.datasource.write.table.type": "COPY_ON_WRITE", "hoodie.upsert.shuffle.parallelism": "1"}
    first = pa.table({"k": [f"k{i}" for i in range(30)], "p": [f"p{i % 5}" for i in range(30)], "ts": [1] * 30})
    second = pa.table({"k": [f"k{i}" for i in range(0, 40, 2)], "p": [f"p{i % 5}" for i in range(0, 40, 2)], "ts": [2] * 20})
    ours, theirs = str(tmp_path / "local"), str(tmp_path / "spark")
    for batch in (first, second):
        hoodie.write(batch, ours, opts)
        spark.createDataFrame(batch.to_pandas()).write.format("hoodie").options(**opts).mode("append").save(theirs)
    assert rows(theirs) == rows(ours)
    seqnos = hoodie.read(theirs).column("_hoodie_commit_seqno").to_pylist()
    assert len(seqnos) == len(set(seqnos)) == 35  # 30 keys, then 15 updated and 5 new


def test_a_spark_write_whose_inline_clean_fails_succeeds_with_a_warning(spark, tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    path = tmp_path / "t"
    victim = tmp_path / "victim.txt"
    victim.write_text("not the table's")
    opts = {**OPTS, "hoodie.clean.automatic": "true", "hoodie.datasource.write.table.type": "COPY_ON_WRITE"}
    hoodie.write(pa.table({"k": ["a"], "p": ["x"], "ts": [0]}), str(path), opts)
    clean_instant = forge_clean_outside(path, victim)
    df = spark.createDataFrame(pa.table({"k": ["b"], "p": ["x"], "ts": [0]}).to_pandas())
    with caplog.at_level(logging.WARNING, logger="hoodie"):
        df.write.format("hoodie").options(**opts, **{"hoodie.datasource.write.operation": "insert"}).mode("append").save(str(path))
    assert rows(str(path)) == [("a", "x", 0), ("b", "x", 0)]
    instant = HoodieTable.open(str(path)).timeline.completed_writes()[-1].timestamp
    (warning,) = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING and "inline" in r.getMessage()]
    for text in (f"write {instant} committed", "inline clean failed", f"the plan of clean {clean_instant}", str(victim)):
        assert text in warning, warning
    assert victim.read_text() == "not the table's"
