"""``df.writeStream.format("hoodie")``: Structured Streaming from a file source into a
table, one commit per micro-batch, exactly once across restarts, async compaction."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from pyspark.errors import StreamingQueryException
from stream_landing import TRIPS_OPTIONS as OPTIONS
from stream_landing import Landing, batch, batch_ids, landing_schema, rows_of, sink_commits

import hoodie
from hoodie.errors import ConfigError
from hoodie.spark import register
from hoodie.spark.jobs import job_group
from hoodie.spark.micro_batch import QUERY_ID_KEY
from hoodie.spark.stream_sink import HoodieStreamingSink, wait_for_compaction
from hoodie.spark.write import write_dataframe
from hoodie.table.table import HoodieTable
from hoodie.timeline.checkpoints import SINK_CHECKPOINT_KEY
from hoodie.timeline.instant import Action


def run_query(spark, landing: Landing, path: str, checkpoint: Path, options: dict[str, str], partition_by: str | None = "city") -> Any:
    """Start the query, let it take every landed file, stop it; the query."""
    stream = spark.readStream.schema(landing_schema(spark)).option("maxFilesPerTrigger", 1).parquet(str(landing.folder))
    writer = stream.writeStream.format("hoodie").options(**options).option("checkpointLocation", str(checkpoint)).outputMode("append")
    if partition_by:
        writer = writer.partitionBy(partition_by)
    query = writer.start(path)
    try:
        query.processAllAvailable()
    finally:
        query.stop()
    return query


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_micro_batches_upsert_and_delete_one_commit_each(spark, tmp_path, helpers, table_type) -> None:
    register(spark)
    path, landing = str(tmp_path / "t"), Landing(tmp_path / "landing")
    options = {**OPTIONS, "hoodie.datasource.write.table.type": table_type, "hoodie.datasource.compaction.async.enable": "false"}
    landing.land(batch([(f"k{i}", "sf" if i % 2 else "la", 1, float(i), False) for i in range(8)]))
    landing.land(batch([("k0", "la", 2, 100.0, False), ("k1", "sf", 2, 101.0, False), ("k8", "la", 2, 8.0, False)]))
    landing.land(batch([]))  # a micro-batch without rows writes nothing
    landing.land(batch([("k2", "la", 3, 0.0, True), ("k3", "sf", 3, 0.0, True), ("k0", "la", 1, -1.0, False)]))  # deletes; k0's late update loses
    query = run_query(spark, landing, path, tmp_path / "ckpt", options)
    assert batch_ids(path) == [0, 1, 3], "one commit per batch with rows, each recording its batch id"
    action = Action.DELTA_COMMIT if table_type == "MERGE_ON_READ" else Action.COMMIT
    assert {a for a, _ in sink_commits(path)} == {action}
    assert all(extra[QUERY_ID_KEY] == str(query.id) for _, extra in sink_commits(path))
    assert rows_of(hoodie.read(path)) == landing.expected()
    assert rows_of(helpers.hudi_rs_snapshot(path)) == landing.expected()
    assert sorted(hoodie.read(path).column("_hoodie_partition_path").unique().to_pylist()) == ["la", "sf"]


def test_a_replayed_batch_is_not_applied_twice(spark, tmp_path) -> None:
    """The commit of batch 1 is in the table, Spark's record of it is not (the process died
    between the two): the restarted query replays batch 1, and the sink skips it."""
    register(spark)
    path, landing, checkpoint = str(tmp_path / "t"), Landing(tmp_path / "landing"), tmp_path / "ckpt"
    options = {**OPTIONS, "hoodie.datasource.write.operation": "insert"}  # a batch applied twice would duplicate its rows
    landing.land(batch([("a", "sf", 1, 1.0, False), ("b", "sf", 1, 2.0, False)]))
    landing.land(batch([("c", "la", 1, 3.0, False)]))
    first = run_query(spark, landing, path, checkpoint, options)
    assert batch_ids(path) == [0, 1]
    for name in ("1", ".1.crc"):
        (checkpoint / "commits" / name).unlink(missing_ok=True)
    assert (checkpoint / "offsets" / "1").exists()
    landing.land(batch([("d", "la", 1, 4.0, False)]))
    second = run_query(spark, landing, path, checkpoint, options)
    assert second.id == first.id, "the same query, restarted from its checkpoint location"
    assert batch_ids(path) == [0, 1, 2], "batch 1 replayed by Spark, skipped by the sink"
    assert sorted(hoodie.read(path).column("uuid").to_pylist()) == ["a", "b", "c", "d"]
    assert (checkpoint / "commits" / "1").exists(), "Spark recorded the replayed batch as done"


def test_restart_with_a_new_checkpoint_location_skips_committed_batch_ids(spark, tmp_path) -> None:
    """Another query (a new checkpoint location) numbers its batches from 0 again: under the
    same identifier they count as committed; a new identifier writes them."""
    register(spark)
    path, landing = str(tmp_path / "t"), Landing(tmp_path / "landing")
    options = {**OPTIONS, "hoodie.datasource.write.operation": "insert"}
    landing.land(batch([("a", "sf", 1, 1.0, False)]))
    run_query(spark, landing, path, tmp_path / "ckpt1", options)
    run_query(spark, landing, path, tmp_path / "ckpt2", options)
    assert hoodie.read(path).column("uuid").to_pylist() == ["a"]
    assert batch_ids(path) == [0]
    run_query(spark, landing, path, tmp_path / "ckpt3", {**options, "hoodie.datasource.write.streaming.checkpoint.identifier": "second"})
    checkpoints = [json.loads(extra[SINK_CHECKPOINT_KEY]) for _, extra in sink_commits(path)]
    assert checkpoints == [{"default_single_writer": "0"}, {"second": "0"}], "the second writer's batch 0 is its own"


def test_a_failing_batch_stops_the_query_or_is_left_out(spark, tmp_path) -> None:
    register(spark)
    landing = Landing(tmp_path / "landing")
    landing.land(batch([("a", "sf", 1, 1.0, False)]))
    landing.land(batch([("b", "..", 1, 2.0, False)]))  # a partition value that is no folder of the table
    landing.land(batch([("c", "la", 1, 3.0, False)]))
    strict = str(tmp_path / "strict")
    with pytest.raises(StreamingQueryException, match=r"'\.\.'"):
        run_query(spark, landing, strict, tmp_path / "ckpt1", OPTIONS)
    assert hoodie.read(strict).column("uuid").to_pylist() == ["a"], "nothing of the refused batch, nor after it"
    lenient = str(tmp_path / "lenient")
    run_query(spark, landing, lenient, tmp_path / "ckpt2", {**OPTIONS, "hoodie.datasource.write.streaming.ignore.failed.batch": "true"})
    assert sorted(hoodie.read(lenient).column("uuid").to_pylist()) == ["a", "c"]
    assert batch_ids(lenient) == [0, 2]


def test_bad_options_stop_the_query_before_it_starts(spark, tmp_path) -> None:
    register(spark)
    landing = Landing(tmp_path / "landing")
    stream = spark.readStream.schema(landing_schema(spark)).parquet(str(landing.folder))
    with pytest.raises(ConfigError, match="hoodie.datasource.write.streaming.retry.count"):
        stream.writeStream.format("hoodie").options(**OPTIONS).option("hoodie.datasource.write.streaming.retry.cont", "2").start(str(tmp_path / "t"))
    with pytest.raises(ConfigError, match="output mode 'update'"):
        stream.writeStream.format("hoodie").options(**OPTIONS).outputMode("update").start(str(tmp_path / "t"))
    with pytest.raises(ConfigError, match="needs a table path"):
        stream.writeStream.format("hoodie").options(**OPTIONS).start()
    assert not (tmp_path / "t").exists()
    assert not spark.streams.active


def test_other_formats_keep_partition_by(spark, tmp_path) -> None:
    register(spark)
    landing = Landing(tmp_path / "landing")
    landing.land(batch([("a", "sf", 1, 1.0, False)]))
    stream = spark.readStream.schema(landing_schema(spark)).parquet(str(landing.folder))
    out = tmp_path / "out"
    query = stream.writeStream.format("parquet").partitionBy("city").option("checkpointLocation", str(tmp_path / "ck")).start(str(out))
    query.processAllAvailable()
    query.stop()
    assert (out / "city=sf").is_dir()


@pytest.mark.slow
def test_async_compaction_runs_beside_the_batches(spark, tmp_path, helpers) -> None:
    register(spark)
    path, landing = str(tmp_path / "t"), Landing(tmp_path / "landing")
    options = {**OPTIONS, "hoodie.datasource.write.table.type": "MERGE_ON_READ", "hoodie.compact.inline.max.delta.commits": "2"}
    landing.land(batch([(f"k{i}", "sf", 1, float(i), False) for i in range(6)]))
    for ts in range(2, 7):
        deletes = [("k2", "sf", ts, 0.0, True)] if ts == 2 else []
        landing.land(batch([(f"k{i}", "sf", ts, float(ts * 10 + i), False) for i in (0, 4)] + deletes + [(f"n{ts}", "la", ts, 0.0, False)]))
    run_query(spark, landing, path, tmp_path / "ckpt", options)
    assert wait_for_compaction(path, timeout=300)
    timeline = HoodieTable.open(path).timeline
    compactions = [i for i in timeline.completed([Action.COMMIT]) if timeline.commit_metadata(i).operation_type == "COMPACT"]
    assert compactions, "a compaction completed"
    assert not timeline.pending([Action.COMPACTION]), "none is left pending"
    assert batch_ids(path) == list(range(6))
    assert all(a == Action.DELTA_COMMIT for a, _ in sink_commits(path)), "no batch compacted inline"
    assert rows_of(hoodie.read(path)) == landing.expected()
    assert rows_of(helpers.hudi_rs_snapshot(path)) == landing.expected()


def jobs_run_by(spark, action: Any) -> int:
    """How many Spark jobs ``action()`` ran: a context numbers its jobs in order, so the
    ids of a marker job before and after it bound theirs (no listener needed)."""
    sc = spark.sparkContext

    def marker(name: str) -> int:
        with job_group(sc, name, "job count marker"):
            sc.parallelize([0], 1).count()
        (job,) = sc.statusTracker().getJobIdsForGroup(name)
        return job

    before = marker(f"before-{id(action)}")
    action()
    return marker(f"after-{id(action)}") - before - 1


def test_a_micro_batch_runs_no_spark_job_beyond_its_write(spark, tmp_path) -> None:
    """The sink asks Spark nothing of its own before a batch's write (an isEmpty() per
    batch was one job more): a batch read from files, as a stream's are, costs the jobs
    ``write_dataframe`` of the same rows into the same table state costs; an empty batch
    on an existing table makes no commit."""
    options = {**OPTIONS, "hoodie.datasource.write.partitionpath.field": "city", "hoodie.clean.automatic": "false", "hoodie.archive.automatic": "false"}
    direct, sunk = str(tmp_path / "direct"), str(tmp_path / "sunk")
    sink = HoodieStreamingSink(spark, sunk, options, "append")
    landing = Landing(tmp_path / "landing")

    def landed(rows: list[tuple[str, str, int, float, bool]]) -> Any:
        landing.land(batch(rows))
        return spark.read.schema(landing_schema(spark)).parquet(str(landing.folder / f"batch-{landing.files - 1:03d}.parquet"))

    first = landed([(f"k{i}", "sf" if i % 2 else "la", 1, float(i), False) for i in range(6)])
    write_dataframe(first, direct, options)
    sink.add_batch(first, 0)  # creates the table
    second = landed([("k0", "la", 2, 10.0, False), ("k7", "ny", 2, 7.0, False)])
    by_the_write = jobs_run_by(spark, lambda: write_dataframe(second, direct, options))
    by_the_sink = jobs_run_by(spark, lambda: sink.add_batch(second, 1))
    assert by_the_write > 0 and by_the_sink == by_the_write
    assert rows_of(hoodie.read(sunk)) == rows_of(hoodie.read(direct)) == landing.expected()

    commits = HoodieTable.open(sunk).timeline.completed_writes()
    sink.add_batch(landed([]), 2)
    assert HoodieTable.open(sunk).timeline.completed_writes() == commits, "an empty micro-batch makes no commit"
    assert batch_ids(sunk) == [0, 1]
