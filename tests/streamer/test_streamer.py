"""The streamer in process: batches committed with their checkpoints, resumed after a
restart, transformed, and read back by hoodie and by the hudi reader."""
from __future__ import annotations

import os
import threading

import pyarrow as pa
import pytest
from landing import STREAM_OPTIONS, land, model, table_rows, trips
from readers import hudi_rs_table

import hoodie
from hoodie.errors import ConfigError, TimelineError
from hoodie.streamer import CHECKPOINT_RESET_KEY, STREAMER_CHECKPOINT_KEY, ArrowEngine, Streamer, StreamerSettings
from hoodie.table import HoodieTable

# the in-process transformation runs in DuckDB (the "streamer" extra; the test extra has it)


def _streamer(src, target, fmt="json", source_limit=None, checkpoint=None, **options):
    opts = {**STREAM_OPTIONS, "hoodie.streamer.source.dfs.root": str(src), **options}
    return Streamer(StreamerSettings(str(target), fmt, opts, source_limit, checkpoint), ArrowEngine())


def _checkpoints(target):
    timeline = HoodieTable.open(str(target)).timeline
    return [timeline.commit_metadata(i).extra_metadata.get(STREAMER_CHECKPOINT_KEY) for i in timeline.completed_writes()]


@pytest.mark.parametrize("fmt", ["json", "csv", "parquet", "avro"])
def test_each_file_format_is_upserted_batch_by_batch_and_reads_back(tmp_path, fmt):
    src, target = tmp_path / "in", tmp_path / "trips"
    landed = [trips(range(0, 6), 1), trips(range(3, 9), 2), trips(range(0, 2), 3)]
    for i, rows in enumerate(landed):
        land(src, f"part-{i}.{fmt}", rows, fmt, mtime_ms=1000 * (i + 1))
    results = _streamer(src, target, fmt, source_limit=1).run(continuous=False)
    assert len(results) == 1 and results[0].rows == 6
    streamer = _streamer(src, target, fmt, source_limit=1)
    assert streamer.sync_once().rows == 6 and streamer.sync_once().rows == 2
    assert streamer.sync_once() is None, "nothing new: nothing written"
    assert _checkpoints(target) == [f"{1000 * (i + 1)}:part-{i}.{fmt}" for i in range(3)]
    assert table_rows(hoodie.read(str(target))) == model(landed)
    assert table_rows(hudi_rs_table(target)) == model(landed)


def test_a_restarted_streamer_resumes_after_the_last_committed_checkpoint(tmp_path):
    src, target = tmp_path / "in", tmp_path / "trips"
    landed = [trips(range(i, i + 4), i + 1) for i in range(5)]
    for i, rows in enumerate(landed[:3]):
        land(src, f"f{i}.json", rows, mtime_ms=1000 + i)
    assert len(_streamer(src, target).run()) == 1
    for i, rows in enumerate(landed[3:], start=3):
        land(src, f"f{i}.json", rows, mtime_ms=1000 + i)
    # a new job (a new process would be the same: nothing is kept outside the table)
    again = _streamer(src, target)
    assert again.committed_checkpoint() == "1002:f2.json"
    result = again.sync_once()
    assert [f.name for f in result.batch.files] == ["f3.json", "f4.json"]
    assert table_rows(hoodie.read(str(target))) == model(landed)
    assert len(HoodieTable.open(str(target)).timeline.completed_writes()) == 2


def test_a_failed_batch_is_not_half_visible_and_is_taken_again(tmp_path, monkeypatch):
    src, target = tmp_path / "in", tmp_path / "trips"
    landed = [trips(range(4), 1), trips(range(2, 6), 2)]
    land(src, "a.json", landed[0], mtime_ms=1000)
    _streamer(src, target).sync_once()
    land(src, "b.json", landed[1], mtime_ms=2000)
    from hoodie.writer import transaction

    def crash(self, *args, **kwargs):
        raise OSError("disk gone")

    with monkeypatch.context() as m:
        m.setattr(transaction.WriteTransaction, "commit", crash)
        with pytest.raises(OSError, match="disk gone"):
            _streamer(src, target).sync_once()
    assert table_rows(hoodie.read(str(target))) == model(landed[:1])
    assert _streamer(src, target).sync_once().batch.checkpoint == "2000:b.json"
    assert table_rows(hoodie.read(str(target))) == model(landed)


def test_the_sql_transformation_runs_on_each_batch(tmp_path):
    src, target = tmp_path / "in", tmp_path / "trips"
    land(src, "a.json", trips(range(6), 1), mtime_ms=1000)
    sql = "SELECT uuid, city, ts, fare * 2 AS fare, upper(city) AS region FROM <SRC> WHERE fare > 2000"
    _streamer(src, target, **{"hoodie.streamer.transformer.sql": sql}).sync_once()
    got = hoodie.read(str(target)).select(["uuid", "fare", "region"]).to_pylist()
    assert sorted(got, key=lambda r: r["uuid"]) == [
        {"uuid": f"k{k}", "fare": 2.0 * (k * 1000 + 1), "region": ["SF", "NYC"][k % 2]} for k in range(2, 6)
    ]


def test_sql_from_a_file_and_bad_sql_are_errors_naming_the_query(tmp_path):
    src, target = tmp_path / "in", tmp_path / "trips"
    land(src, "a.json", trips(range(3), 1), mtime_ms=1000)
    query = tmp_path / "t.sql"
    query.write_text("SELECT * FROM <SRC> WHERE uuid <> 'k1';\n")
    _streamer(src, target, **{"hoodie.streamer.transformer.sql.file": str(query)}).sync_once()
    assert sorted(hoodie.read(str(target)).column("uuid").to_pylist()) == ["k0", "k2"]
    land(src, "b.json", trips(range(3), 2), mtime_ms=2000)
    with pytest.raises(ConfigError, match="transformation .* failed: .*no_such_column"):
        _streamer(src, target, **{"hoodie.streamer.transformer.sql": "SELECT no_such_column FROM <SRC>"}).sync_once()
    with pytest.raises(ConfigError, match="does not name the batch as <SRC>"):
        _streamer(src, target, **{"hoodie.streamer.transformer.sql": "SELECT 1"})
    assert _checkpoints(target) == ["1000:a.json"], "the failed batch wrote nothing"


def test_a_batch_whose_rows_all_go_still_records_its_checkpoint(tmp_path):
    src, target = tmp_path / "in", tmp_path / "trips"
    land(src, "a.json", trips(range(3), 1), mtime_ms=1000)
    land(src, "b.json", trips(range(3), 2), mtime_ms=2000)
    keep_first = {"hoodie.streamer.transformer.sql": "SELECT * FROM <SRC> WHERE ts = 1"}
    _streamer(src, target, source_limit=1, **keep_first).sync_once()
    empty = _streamer(src, target, source_limit=1, **keep_first).sync_once()
    assert empty.rows == 3, "the rows taken from the source, though none was written"
    assert _checkpoints(target) == ["1000:a.json", "2000:b.json"]
    assert _streamer(src, target, **keep_first).sync_once() is None, "b.json is not read again"
    assert sorted(hoodie.read(str(target)).column("ts").to_pylist()) == [1, 1, 1]


def test_checkpoint_flag_starts_elsewhere_once(tmp_path):
    src, target = tmp_path / "in", tmp_path / "trips"
    for i in range(3):
        land(src, f"f{i}.json", trips([i], i + 1), mtime_ms=1000 + i)
    # skip f0: start after it, as Hudi's --checkpoint does
    first = _streamer(src, target, source_limit=1, checkpoint="1000:f0.json").sync_once()
    assert [f.name for f in first.batch.files] == ["f1.json"]
    timeline = HoodieTable.open(str(target)).timeline
    assert timeline.commit_metadata(timeline.completed_writes()[-1]).extra_metadata[CHECKPOINT_RESET_KEY] == "1000:f0.json"
    # the same --checkpoint again resumes from the committed checkpoint, not from it
    second = _streamer(src, target, checkpoint="1000:f0.json").sync_once()
    assert [f.name for f in second.batch.files] == ["f2.json"]
    assert sorted(hoodie.read(str(target)).column("uuid").to_pylist()) == ["k1", "k2"]


def test_continuous_mode_stops_between_batches_when_told(tmp_path):
    src, target = tmp_path / "in", tmp_path / "trips"
    landed = [trips([i], i + 1) for i in range(3)]
    for i, rows in enumerate(landed):
        land(src, f"f{i}.json", rows, mtime_ms=1000 + i)
    stop = threading.Event()
    seen = []

    def on_batch(result):
        seen.append(result)
        if len(seen) == 2:
            stop.set()  # as SIGTERM does: the loop ends before the next batch

    results = _streamer(src, target, source_limit=1).run(continuous=True, stop=stop, on_batch=on_batch)
    assert [r.number for r in results] == [1, 2]
    assert sorted(hoodie.read(str(target)).column("uuid").to_pylist()) == ["k0", "k1"]


def test_merge_on_read_target_with_inline_compaction(tmp_path):
    src, target = tmp_path / "in", tmp_path / "trips"
    landed = [trips(range(4), i + 1) for i in range(4)]
    for i, rows in enumerate(landed):
        land(src, f"f{i}.json", rows, mtime_ms=1000 + i)
    opts = {"hoodie.datasource.write.table.type": "MERGE_ON_READ", "hoodie.compact.inline": "true", "hoodie.compact.inline.max.delta.commits": "2"}
    streamer = _streamer(src, target, source_limit=1, **opts)
    while streamer.sync_once() is not None:
        pass
    timeline = HoodieTable.open(str(target)).timeline
    assert timeline.completed(["commit"]), "a compaction ran inline"
    # the compaction's commit carries no checkpoint: the one before it is found
    assert _checkpoints(target)[-1] is None and streamer.committed_checkpoint() == "1003:f3.json"
    assert table_rows(hoodie.read(str(target))) == model(landed) == table_rows(hudi_rs_table(target))


def test_incremental_source_chains_a_derived_table(tmp_path):
    up, down = tmp_path / "up", tmp_path / "down"
    upstream = [trips(range(i, i + 3), i + 1) for i in range(4)]
    for rows in upstream[:2]:
        hoodie.write(pa.Table.from_pylist(rows), str(up), STREAM_OPTIONS)
    opts = {**STREAM_OPTIONS, "hoodie.table.name": "down", "hoodie.streamer.source.hoodieincr.path": str(up),
            "hoodie.streamer.source.hoodieincr.num_instants": "1"}
    settings = StreamerSettings(str(down), "org.apache.hudi.utilities.sources.HoodieIncrSource", opts)
    assert len(Streamer(settings, ArrowEngine()).run()) == 1
    for rows in upstream[2:]:
        hoodie.write(pa.Table.from_pylist(rows), str(up), STREAM_OPTIONS)
    streamer = Streamer(settings, ArrowEngine())
    while streamer.sync_once() is not None:
        pass
    up_commits = [i.timestamp for i in HoodieTable.open(str(up)).timeline.completed_writes()]
    assert _checkpoints(down) == up_commits
    assert table_rows(hoodie.read(str(down))) == model(upstream) == table_rows(hoodie.read(str(up)))


def test_unknown_source_and_missing_root_are_errors(tmp_path):
    with pytest.raises(ConfigError, match="unknown streamer source 'kafka'"):
        StreamerSettings(str(tmp_path / "t"), "kafka")
    with pytest.raises(ConfigError, match="missing required option hoodie.streamer.source.dfs.root"):
        Streamer(StreamerSettings(str(tmp_path / "t"), "json", STREAM_OPTIONS), ArrowEngine())


def test_empty_files_record_their_checkpoint_once_the_table_exists(tmp_path):
    src, target = tmp_path / "in", tmp_path / "trips"
    land(src, "a.json", trips(range(3), 1), mtime_ms=1000)
    (src / "b.json").write_bytes(b"")
    os.utime(src / "b.json", ns=(2_000_000_000, 2_000_000_000))
    _streamer(src, target, source_limit=1).sync_once()
    empty = _streamer(src, target, source_limit=1).sync_once()
    assert empty.rows == 0 and _checkpoints(target) == ["1000:a.json", "2000:b.json"]
    assert _streamer(src, target).sync_once() is None
    assert len(hoodie.read(str(target))) == 3


def test_empty_files_before_the_table_exists_commit_nothing_and_are_taken_with_the_next_batch(tmp_path):
    src, target = tmp_path / "in", tmp_path / "trips"
    (src).mkdir()
    (src / "a.json").write_bytes(b"")
    os.utime(src / "a.json", ns=(1_000_000_000, 1_000_000_000))
    assert _streamer(src, target).sync_once() is None
    assert not HoodieTable.exists(str(target))
    land(src, "b.json", trips(range(2), 1), mtime_ms=2000)
    result = _streamer(src, target).sync_once()
    assert [f.name for f in result.batch.files] == ["a.json", "b.json"] and result.rows == 2


def test_a_table_without_a_streamer_checkpoint_needs_one_given(tmp_path):
    src, target = tmp_path / "in", tmp_path / "trips"
    hoodie.write(pa.Table.from_pylist(trips(range(3), 1)), str(target), STREAM_OPTIONS)
    land(src, "a.json", trips(range(2, 5), 2), mtime_ms=1000)
    with pytest.raises(TimelineError, match="no streamer checkpoint .* start with --checkpoint"):
        _streamer(src, target).sync_once()
    assert _streamer(src, target, checkpoint="0").sync_once().rows == 3
    assert table_rows(hoodie.read(str(target))) == model([trips(range(3), 1), trips(range(2, 5), 2)])


class _RecordingStop(threading.Event):
    """A stop event that records how long the loop waits, and stops it after two waits."""

    def __init__(self):
        super().__init__()
        self.waits = []

    def wait(self, timeout=None):
        self.waits.append(timeout)
        if len(self.waits) == 2:
            self.set()
        return self.is_set()


def test_continuous_mode_waits_the_min_sync_interval_from_each_batch_start(tmp_path):
    src, target = tmp_path / "in", tmp_path / "trips"
    land(src, "a.json", trips(range(2), 1), mtime_ms=1000)
    stop = _RecordingStop()
    results = _streamer(src, target).run(continuous=True, min_sync_interval_seconds=1000, stop=stop)
    assert len(results) == 1  # the second sync found nothing new
    # each wait is the interval less what the sync took (far less than 100 s here)
    assert all(900 < w <= 1000 for w in stop.waits) and len(stop.waits) == 2


def test_rows_are_the_rows_taken_from_the_source(tmp_path):
    # one meaning on both engines (tests/spark/test_streamer_spark.py): not what the transformation left
    src, target = tmp_path / "in", tmp_path / "trips"
    land(src, "a.json", [*trips(range(4), 1), *trips(range(2), 2)], mtime_ms=1000)  # keys 0 and 1 twice
    result = _streamer(src, target, **{"hoodie.streamer.transformer.sql": "SELECT * FROM <SRC> WHERE uuid <> 'k3'"}).sync_once()
    assert result.rows == 6
    assert hoodie.read(str(target)).num_rows == 3
