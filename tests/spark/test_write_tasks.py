"""A Spark write spreads its files over the tasks Spark is asked for: adaptive execution,
which sizes tasks by shuffled bytes, must not fold a small batch that rewrites many files
into one task (20,000 updated rows are ~1 MB of shuffle, one task, yet may rewrite 100
files). Both write paths: tasks holding whole partitions, and tasks running file groups."""
from __future__ import annotations

import pyarrow as pa
import pytest

import hoodie
from hoodie.spark.write import write_dataframe
from hoodie.table.table import HoodieTable


def _batch(n: int, partitions: int, ts: int) -> pa.Table:
    return pa.table({
        "uuid": pa.array([f"k{i:04d}" for i in range(n)]),
        "city": pa.array([f"c{i % partitions}" for i in range(n)]),
        "ts": pa.array([ts] * n, pa.int64()),
        "fare": pa.array([float(i) for i in range(n)]),
    })


def _tasks_of_last_stage(spark, instant: str) -> int:
    """Tasks of the stage that wrote the files: the last stage of the write's last job."""
    tracker = spark.sparkContext.statusTracker()
    job = tracker.getJobInfo(max(tracker.getJobIdsForGroup(f"hoodie-write-{instant}")))
    return tracker.getStageInfo(max(job.stageIds)).numTasks


@pytest.mark.parametrize(("partitions", "expected"), [(8, 4), (3, 3)], ids=["whole-partitions", "file-groups"])
def test_a_small_upsert_of_many_files_runs_in_as_many_tasks_as_asked(spark, tmp_path, helpers, partitions: int, expected: int) -> None:
    path = str(tmp_path / "t")
    assert int(spark.conf.get("spark.sql.shuffle.partitions")) == 4
    write_dataframe(helpers.to_df(spark, _batch(400, partitions, 1)), path, helpers.base_options(**{"hoodie.datasource.write.operation": "bulk_insert"}))
    write_dataframe(helpers.to_df(spark, _batch(400, partitions, 2)), path, helpers.base_options())
    upsert = HoodieTable.open(path).timeline.completed_writes()[-1].timestamp
    # at most one task a partition (8 -> Spark's 4) or a file group (3 -> 3), never 1
    assert _tasks_of_last_stage(spark, upsert) == expected
    assert hoodie.read(path).num_rows == 400
    assert set(hoodie.read(path).column("ts").to_pylist()) == {2}
