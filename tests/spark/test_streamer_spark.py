"""The streamer on Spark: files and another table's commits read by Spark, transformed with
spark.sql, written with write_dataframe; the same checkpoints as in process."""
from __future__ import annotations

import pyarrow as pa
import pytest
from landing import STREAM_OPTIONS, land, model, table_rows, trips
from readers import hudi_rs_table
from typer.testing import CliRunner

import hoodie
from hoodie.cli.main import app
from hoodie.errors import ConfigError
from hoodie.spark.streamer import SparkStreamerEngine
from hoodie.streamer import STREAMER_CHECKPOINT_KEY, Streamer, StreamerSettings
from hoodie.table import HoodieTable


def _checkpoints(target):
    timeline = HoodieTable.open(str(target)).timeline
    return [timeline.commit_metadata(i).extra_metadata.get(STREAMER_CHECKPOINT_KEY) for i in timeline.completed_writes()]


def test_spark_streamer_upserts_json_batches_with_a_transformation_and_resumes(spark, tmp_path):
    src, target = tmp_path / "in", tmp_path / "trips"
    landed = [trips(range(0, 6), 1), trips(range(3, 9), 2), trips(range(0, 2), 3)]
    for i, rows in enumerate(landed):
        land(src, f"f{i}.json", rows, mtime_ms=1000 + i)
    opts = {**STREAM_OPTIONS, "hoodie.streamer.source.dfs.root": str(src),
            "hoodie.streamer.transformer.sql": "SELECT uuid, city, ts, fare FROM <SRC> WHERE uuid <> 'k8'"}
    settings = StreamerSettings(str(target), "json", opts, source_limit=1)
    first = Streamer(settings, SparkStreamerEngine(spark)).run()
    assert first[0].rows == 6
    again = Streamer(settings, SparkStreamerEngine(spark))  # a restart: resumes after f0
    # the rows each batch took from the source (k8 of f1 is counted though the transformation drops it)
    assert again.sync_once().rows == 6 and again.sync_once().rows == 2 and again.sync_once() is None
    assert _checkpoints(target) == ["1000:f0.json", "1001:f1.json", "1002:f2.json"]
    expected = [r for r in model(landed) if r[0] != "k8"]
    assert table_rows(hoodie.read(str(target))) == expected == table_rows(hudi_rs_table(target))
    assert not [t for t in spark.catalog.listTables() if t.name.startswith("hoodie_src_tmp_table")], "the batches' views are dropped"


@pytest.mark.parametrize("fmt", ["csv", "avro", "parquet"])
def test_spark_streamer_reads_each_file_format(spark, tmp_path, fmt):
    src, target = tmp_path / "in", tmp_path / "trips"
    landed = [trips(range(4), 1), trips(range(2, 6), 2)]
    for i, rows in enumerate(landed):
        land(src, f"f{i}.{fmt}", rows, fmt, mtime_ms=1000 + i)
    settings = StreamerSettings(str(target), fmt, {**STREAM_OPTIONS, "hoodie.streamer.source.dfs.root": str(src)})
    assert Streamer(settings, SparkStreamerEngine(spark)).sync_once().rows == 8, "both files' rows, keys 2 and 3 twice"
    assert table_rows(hoodie.read(str(target))) == model(landed)


def test_spark_streamer_pulls_another_tables_commits_and_refuses_bad_sql(spark, tmp_path):
    up, down = tmp_path / "up", tmp_path / "down"
    upstream = [trips(range(i, i + 3), i + 1) for i in range(3)]
    for rows in upstream:
        hoodie.write(pa.Table.from_pylist(rows), str(up), STREAM_OPTIONS)
    opts = {**STREAM_OPTIONS, "hoodie.table.name": "down", "hoodie.streamer.source.hoodieincr.path": str(up)}
    bad = StreamerSettings(str(down), "hoodie", {**opts, "hoodie.streamer.transformer.sql": "SELECT nope FROM <SRC>"})
    with pytest.raises(ConfigError, match="transformation .* failed"):
        Streamer(bad, SparkStreamerEngine(spark)).sync_once()
    result = Streamer(StreamerSettings(str(down), "hoodie", opts), SparkStreamerEngine(spark)).sync_once()
    assert result.batch.instants == tuple(i.timestamp for i in HoodieTable.open(str(up)).timeline.completed_writes())
    assert table_rows(hoodie.read(str(down))) == model(upstream)


def test_cli_engine_spark_uses_the_active_session(spark, tmp_path):
    src, target = tmp_path / "in", tmp_path / "trips"
    land(src, "a.json", trips(range(3), 1), mtime_ms=1000)
    opts = [f"-o{k}={v}" for k, v in {**STREAM_OPTIONS, "hoodie.streamer.source.dfs.root": str(src)}.items()]
    result = CliRunner().invoke(app, ["streamer", str(target), "--source-class", "json", "--engine", "spark", *opts])
    assert result.exit_code == 0, result.output
    assert "3 rows" in result.stdout and "(spark, once)" in result.stderr
    assert _checkpoints(target) == ["1000:a.json"]


def test_spark_streamer_records_the_checkpoint_of_empty_files(spark, tmp_path):
    src, target = tmp_path / "in", tmp_path / "trips"
    land(src, "a.json", trips(range(3), 1), mtime_ms=1000)
    land(src, "b.json", [], mtime_ms=2000)
    settings = StreamerSettings(str(target), "json", {**STREAM_OPTIONS, "hoodie.streamer.source.dfs.root": str(src)}, source_limit=1)
    streamer = Streamer(settings, SparkStreamerEngine(spark))
    assert streamer.sync_once().rows == 3
    assert streamer.sync_once().rows == 0 and streamer.sync_once() is None
    assert _checkpoints(target) == ["1000:a.json", "2000:b.json"]
    assert table_rows(hoodie.read(str(target))) == model([trips(range(3), 1)])


def test_a_continuous_spark_job_compacts_a_merge_on_read_target_on_a_driver_thread(spark, tmp_path):
    import os
    import threading

    src, target = tmp_path / "in", tmp_path / "trips"
    landed = [trips(range(6), i + 1) for i in range(5)]
    for i, rows in enumerate(landed):
        land(src, f"f{i}.json", rows, mtime_ms=1000 + i)
    opts = {**STREAM_OPTIONS, "hoodie.streamer.source.dfs.root": str(src), "hoodie.datasource.write.table.type": "MERGE_ON_READ",
            "hoodie.compact.inline.max.delta.commits": "2"}
    streamer = Streamer(StreamerSettings(str(target), "json", opts, source_limit=1), SparkStreamerEngine(spark))
    stop = threading.Event()
    results = streamer.run(continuous=True, stop=stop, on_batch=lambda r: stop.set() if r is None or r.number == len(landed) else None)
    started = [r.compaction for r in results if r.compaction is not None]
    assert started and streamer.compactor is not None and not streamer.compactor.separate_process
    assert streamer.compactor.process_id is None and not streamer.compactor.running(), f"waited for, in this process ({os.getpid()})"
    timeline = HoodieTable.open(str(target)).timeline
    assert set(started) <= {i.timestamp for i in timeline.completed(["commit"])} and not timeline.pending()
    assert table_rows(hoodie.read(str(target))) == model(landed) == table_rows(hudi_rs_table(target))
