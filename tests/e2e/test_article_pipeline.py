"""The 2017 article's incremental pipeline, end to end (issue 30).

Files land in bursts, each as JSON lines and as CSV, in two folders. ``hoodie streamer``
(its own process, continuous) upserts the JSON files into a merge-on-read table,
compacting inline, and is killed with SIGKILL at random (seeded) points and started
again, several times, while more files land. Meanwhile a Structured Streaming query
(``spark.readStream.format("hoodie")``) pulls that table incrementally into a derived
copy-on-write table, the latest trip of each city, and separately another one
(``writeStream.format("hoodie")``, the sink) upserts the CSV files into a second
merge-on-read table, compacting asynchronously; both queries are stopped when the
streamer is killed and restarted from their checkpoint locations.

At the end the three tables equal a model computed from the landed files; the checkpoints
in the commits (the streamer's positions, the sink's batch ids) show that every file was
taken by exactly one committed batch and that each batch wrote the keys of its files
(none applied twice, none lost); hudi-rs and Apache Hudi (the oracle harness) read the
tables the same.
"""
from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from hudi_oracle import HUDI_0_15, HUDI_1, HudiOracle
from landing import STREAM_OPTIONS, land, model, table_rows
from readers import hudi_rs_table

import hoodie
from hoodie.table.table import HoodieTable
from hoodie.timeline.checkpoints import SINK_CHECKPOINT_KEY, STREAMER_CHECKPOINT_KEY, sink_batch_of
from hoodie.timeline.instant import Action

pytestmark = [pytest.mark.slow, pytest.mark.spark]

SEED = 30
KILLS = 4  # SIGKILLs of the streamer, each at a random point after it committed a batch
FILES_PER_BURST = 3
ROWS_PER_FILE = 12
KEYS = 40  # few keys: most rows of a burst update trips landed before
CITIES = ("sf", "nyc", "la")

#: archival keeps every commit of the run active, so that all the checkpoints can be read back;
#: the cleaner keeps every slice, as a pipeline keeps what its slowest consumer has yet to
#: pull: the derived query may be stopped during its first micro-batch, whose range Spark
#: fixed then (up to the first commit) and replays on restart, many commits later
KEEP_ALL = {"hoodie.keep.min.commits": "80", "hoodie.keep.max.commits": "90", "hoodie.cleaner.commits.retained": "70"}
#: the streamer's merge-on-read table: compaction inline every third delta commit
MOR_OPTIONS = {
    **STREAM_OPTIONS,
    **KEEP_ALL,
    "hoodie.datasource.write.table.type": "MERGE_ON_READ",
    "hoodie.compact.inline": "true",
    "hoodie.compact.inline.max.delta.commits": "3",
}
#: the derived copy-on-write table: one row a city, its latest trip (largest ts wins)
DERIVED_OPTIONS = {
    "hoodie.table.name": "city_latest",
    "hoodie.datasource.write.recordkey.field": "city",
    "hoodie.datasource.write.partitionpath.field": "city",
    "hoodie.datasource.write.precombine.field": "last_ts",
    "hoodie.datasource.write.operation": "upsert",
    "hoodie.index.bloom.num_entries": "1000",
}
DERIVED_COLUMNS = ("city", "last_ts", "last_uuid", "last_fare")
#: the sink's merge-on-read table: async compaction (the sink's default) every third batch
SINK_OPTIONS = {**STREAM_OPTIONS, **KEEP_ALL, "hoodie.datasource.write.table.type": "MERGE_ON_READ", "hoodie.compact.inline.max.delta.commits": "3"}
SINK_IDENTIFIER = "default_single_writer"  # hoodie.datasource.write.streaming.checkpoint.identifier


@dataclass
class Landing:
    """The landing folder and every burst's files landed in it: (position, rows), where the
    position is the streamer's checkpoint of the JSON file, ``<modification time in
    ms>:<name>``; the same rows land as CSV beside, with the same modification time."""

    folder: Path
    rng: random.Random
    files: list[tuple[str, list[dict[str, Any]]]] = field(default_factory=list)
    ts: int = 0
    mtime_ms: int = field(default_factory=lambda: int(time.time() * 1000))

    def burst(self) -> None:
        """A few files at once; every row's ts is larger than any landed before it."""
        for _ in range(FILES_PER_BURST):
            rows = []
            for k in sorted(self.rng.sample(range(KEYS), ROWS_PER_FILE)):
                self.ts += 1
                rows.append({"uuid": f"k{k:03}", "city": CITIES[k % len(CITIES)], "ts": self.ts, "fare": round(self.rng.uniform(5, 80), 2)})
            name = f"trips-{len(self.files):03}.json"
            self.mtime_ms += 1
            land(self.folder / "json", name, rows, mtime_ms=self.mtime_ms)
            land(self.folder / "csv", name.replace(".json", ".csv"), rows, "csv", mtime_ms=self.mtime_ms)
            self.files.append((f"{self.mtime_ms}:{name}", rows))

    @property
    def last_position(self) -> str:
        return self.files[-1][0]

    def rows(self) -> list[list[dict[str, Any]]]:
        return [rows for _, rows in self.files]


def _order(position: str) -> tuple[int, str]:
    mtime, _, name = position.partition(":")
    return int(mtime), name


def derived_model(landed: list[list[dict[str, Any]]]) -> list[tuple[Any, ...]]:
    """Each city's trip with the largest ts among every landed row (it is the latest
    version of its key, so every incremental pull that reaches its commit carries it)."""
    latest: dict[str, dict[str, Any]] = {}
    for r in (r for rows in landed for r in rows):
        if r["city"] not in latest or r["ts"] > latest[r["city"]]["ts"]:
            latest[r["city"]] = r
    return sorted((c, r["ts"], r["uuid"], r["fare"]) for c, r in latest.items())


def derived_rows(table: Any) -> list[tuple[Any, ...]]:
    return sorted(tuple(r[c] for c in DERIVED_COLUMNS) for r in table.select(list(DERIVED_COLUMNS)).to_pylist())


def streamer_batches(path: Path) -> list[tuple[str, str, Any]]:
    """(instant, checkpoint, commit metadata) of each completed commit holding the
    streamer's checkpoint, oldest first."""
    timeline = HoodieTable.open(str(path)).timeline
    found = []
    for instant, metadata in timeline.commit_metadata_of(timeline.completed(Action.WRITE_ACTIONS)):
        checkpoint = metadata.extra_metadata.get(STREAMER_CHECKPOINT_KEY)
        if checkpoint:
            found.append((instant.timestamp, checkpoint, metadata))
    return found


def _batch_in_flight(path: Path) -> bool:
    return bool(HoodieTable.open(str(path)).timeline.pending([Action.DELTA_COMMIT]))


def _committed_position(path: Path) -> str | None:
    try:
        batches = streamer_batches(path)
    except hoodie.HoodieError:  # no table yet
        return None
    return batches[-1][1] if batches else None


def start_streamer(landing: Landing, target: Path) -> subprocess.Popen[str]:
    """``hoodie streamer`` continuously, one file a batch (a source limit of one byte), in
    a process group of its own (the kill reaches whatever it started)."""
    options = [f"-o{k}={v}" for k, v in {**MOR_OPTIONS, "hoodie.streamer.source.dfs.root": str(landing.folder / "json")}.items()]
    args = ["streamer", str(target), "--source-class", "json", *options, "--source-limit", "1", "--continuous"]
    return subprocess.Popen(
        [sys.executable, "-m", "hoodie.cli", *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"}, start_new_session=True,
    )


def wait_for(done: Callable[[], bool], proc: subprocess.Popen[str], what: str, seconds: float = 300) -> None:
    deadline = time.monotonic() + seconds
    while not done():
        if proc.poll() is not None:
            raise AssertionError(f"the streamer exited with {proc.returncode} waiting for {what}: {proc.stderr.read() if proc.stderr else ''}")
        if time.monotonic() > deadline:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
            raise AssertionError(f"the streamer made no progress: {what}")
        time.sleep(0.05)


def start_derived(spark: Any, upstream: Path, derived: Path, checkpoint: Path, available_now: bool = False) -> Any:
    """The derived table's query: each micro-batch (the upstream commits' changes) folded
    into each city's latest trip and upserted into the copy-on-write table."""
    from pyspark.sql import functions as F

    from hoodie.spark import write_dataframe

    def fold(df: Any, batch_id: int) -> None:
        latest = df.groupBy("city").agg(
            F.max("ts").alias("last_ts"), F.max_by("uuid", "ts").alias("last_uuid"), F.max_by("fare", "ts").alias("last_fare")
        )
        write_dataframe(latest, str(derived), DERIVED_OPTIONS)

    writer = spark.readStream.format("hoodie").load(str(upstream)).writeStream.foreachBatch(fold).option("checkpointLocation", str(checkpoint))
    return writer.trigger(availableNow=True).start() if available_now else writer.trigger(processingTime="1 second").start()


def start_sink(spark: Any, landing: Landing, target: Path, checkpoint: Path, available_now: bool = False) -> Any:
    """The Structured Streaming ingest: the CSV files, one a micro-batch, upserted into
    ``target`` by ``writeStream.format("hoodie")``."""
    source = spark.readStream.schema("uuid STRING, city STRING, ts BIGINT, fare DOUBLE").option("header", "true")
    stream = source.option("maxFilesPerTrigger", 1).csv(str(landing.folder / "csv"))
    writer = stream.writeStream.format("hoodie").options(**SINK_OPTIONS).option("checkpointLocation", str(checkpoint)).outputMode("append")
    writer = writer.trigger(availableNow=True) if available_now else writer.trigger(processingTime="0 seconds")
    return writer.start(str(target))


def sink_batches(path: Path) -> list[tuple[int, Any]]:
    """(batch id, commit metadata) of each completed commit of the sink, oldest first."""
    timeline = HoodieTable.open(str(path)).timeline
    found = []
    for _, metadata in timeline.commit_metadata_of(timeline.completed(Action.WRITE_ACTIONS)):
        raw = metadata.extra_metadata.get(SINK_CHECKPOINT_KEY)
        if raw:
            found.append((int(sink_batch_of(SINK_IDENTIFIER)(raw) or -1), metadata))
    return found


def written_records(metadata: Any) -> int:
    """The records a commit inserted or updated."""
    return sum(s.numInserts + s.numUpdateWrites for s in metadata.write_stats())


@dataclass(frozen=True)
class Pipeline:
    landing: Landing
    upstream: Path
    derived: Path
    sunk: Path
    left_pending: int


@pytest.fixture(scope="module")
def pipeline(spark: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Pipeline]:
    from hoodie.spark.stream_sink import wait_for_compaction  # (PySpark: once the spark fixture found it)

    root = tmp_path_factory.mktemp("article")
    rng = random.Random(SEED)
    landing = Landing(root / "landing", rng)
    upstream, derived, derived_checkpoint = root / "trips", root / "city_latest", root / "checkpoints" / "city_latest"
    sunk, sink_checkpoint = root / "trips_sunk", root / "checkpoints" / "trips_sunk"
    left_pending = 0  # kills that left a batch half written
    for kill in range(KILLS):
        landing.burst()
        before = _committed_position(upstream)
        streamer = start_streamer(landing, upstream)
        query = start_derived(spark, upstream, derived, derived_checkpoint)
        sink = start_sink(spark, landing, sunk, sink_checkpoint)
        wait_for(lambda before=before: _committed_position(upstream) != before, streamer, "a first batch")
        landing.burst()  # while the job runs
        # the kill: at a random point of a batch in flight (the first kill as soon as one
        # is seen), or wherever the job is after a random time
        if kill == 0 or rng.random() < 0.7:
            # (or the job took every landed file already)
            wait_for(lambda: _batch_in_flight(upstream) or _committed_position(upstream) == landing.last_position, streamer, "a batch in flight")
        time.sleep(0 if kill == 0 else rng.uniform(0, 0.5))
        os.killpg(streamer.pid, signal.SIGKILL)
        streamer.communicate()
        left_pending += _batch_in_flight(upstream)
        query.stop()
        sink.stop()  # wherever its batch is
    # the last run takes the rest, and stops cleanly on SIGTERM once it caught up
    landing.burst()
    streamer = start_streamer(landing, upstream)
    wait_for(lambda: _committed_position(upstream) == landing.last_position, streamer, "the last landed file")
    streamer.send_signal(signal.SIGTERM)
    _, err = streamer.communicate(timeout=300)
    assert streamer.returncode == 0 and "stopped after" in err, err
    start_derived(spark, upstream, derived, derived_checkpoint, available_now=True).awaitTermination()
    start_sink(spark, landing, sunk, sink_checkpoint, available_now=True).awaitTermination()
    wait_for_compaction(str(sunk))
    yield Pipeline(landing, upstream, derived, sunk, left_pending)


def test_the_streamer_table_equals_the_model_of_the_landed_files(pipeline: Pipeline) -> None:
    assert pipeline.left_pending >= 1, "a kill left a batch half written (the next run rolled it back)"
    table = HoodieTable.open(str(pipeline.upstream))
    assert not table.timeline.pending(), "a batch was left half done at the end"
    assert table.timeline.completed([Action.ROLLBACK]), "the half-written batches were rolled back"
    assert table_rows(hoodie.read(str(pipeline.upstream))) == model(pipeline.landing.rows())
    compactions = [i for i in table.timeline.completed_writes() if i.action == Action.COMMIT]
    assert compactions, "the merge-on-read table was compacted along the way"


def test_every_landed_file_was_taken_by_exactly_one_committed_batch(pipeline: Pipeline) -> None:
    """The checkpoints in the commits' extra metadata: each batch's position is after the
    previous one's (no file taken twice), the last is the last file (none lost), and each
    commit wrote exactly the keys of the files between its checkpoint and the previous."""
    batches = streamer_batches(pipeline.upstream)
    positions = [_order(checkpoint) for _, checkpoint, _ in batches]
    assert positions == sorted(set(positions)), "a checkpoint repeats or goes back: a batch applied twice"
    assert batches[-1][1] == pipeline.landing.last_position
    previous = (0, "")
    for instant, checkpoint, metadata in batches:
        taken = [rows for position, rows in pipeline.landing.files if previous < _order(position) <= _order(checkpoint)]
        keys = {r["uuid"] for rows in taken for r in rows}
        written = written_records(metadata)
        assert taken and written == len(keys), f"batch {instant} (checkpoint {checkpoint}) wrote {written} records for {len(keys)} keys"
        previous = _order(checkpoint)


def test_the_derived_table_holds_each_citys_latest_trip(pipeline: Pipeline) -> None:
    assert derived_rows(hoodie.read(str(pipeline.derived))) == derived_model(pipeline.landing.rows())
    assert HoodieTable.open(str(pipeline.derived)).config.table_type == "COPY_ON_WRITE"


def test_the_sink_table_equals_the_model_and_each_batch_was_written_once(pipeline: Pipeline) -> None:
    """Batch n of the query is the n-th CSV file (one file a micro-batch, in modification
    time order): the commits hold batch ids 0 to the last, each once, and each wrote the
    keys of its file; async compaction ran along the way."""
    table = HoodieTable.open(str(pipeline.sunk))
    assert not table.timeline.pending([Action.DELTA_COMMIT, Action.COMPACTION]), "nothing was left half done"
    assert table_rows(hoodie.read(str(pipeline.sunk))) == model(pipeline.landing.rows())
    batches = sink_batches(pipeline.sunk)
    assert [batch_id for batch_id, _ in batches] == list(range(len(pipeline.landing.files)))
    for (batch_id, metadata), (_, rows) in zip(batches, pipeline.landing.files):
        assert written_records(metadata) == len({r["uuid"] for r in rows}), f"batch {batch_id}"
    assert [i for i in table.timeline.completed_writes() if i.action == Action.COMMIT], "compacted asynchronously"


def test_hudi_rs_reads_the_tables_the_same(pipeline: Pipeline) -> None:
    assert table_rows(hudi_rs_table(pipeline.upstream)) == model(pipeline.landing.rows())
    assert table_rows(hudi_rs_table(pipeline.sunk)) == model(pipeline.landing.rows())
    assert derived_rows(hudi_rs_table(pipeline.derived)) == derived_model(pipeline.landing.rows())


@pytest.mark.oracle
@pytest.mark.parametrize("version", [HUDI_0_15, HUDI_1])
def test_apache_hudi_reads_the_tables_the_same(pipeline: Pipeline, version: str, hudi_oracle: Callable[[str], HudiOracle]) -> None:
    oracle = hudi_oracle(version)
    assert table_rows(oracle.read(pipeline.upstream)) == model(pipeline.landing.rows())
    assert table_rows(oracle.read(pipeline.sunk)) == model(pipeline.landing.rows())
    assert derived_rows(oracle.read(pipeline.derived)) == derived_model(pipeline.landing.rows())
    # the read-optimized view: the compacted base files alone, as hoodie reads them
    read_optimized = {"hoodie.datasource.query.type": "read_optimized"}
    assert table_rows(oracle.read(pipeline.upstream, read_optimized)) == table_rows(hoodie.read(str(pipeline.upstream), read_optimized))
