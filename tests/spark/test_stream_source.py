"""``spark.readStream.format("hoodie")``: an upstream table's commits drained as
micro-batches, each equal to the incremental pull of its range (the model), resumed from
the checkpoint without duplicates or gaps, on copy-on-write and merge-on-read tables (a
compaction between the batches), and the clear error, or the fallback, when the stream
fell behind the cleaner and archival."""
from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from pyspark.errors import StreamingQueryException
from readers import hudi_rs_table
from table_options import MOR_TRIPS, trip_options

import hoodie
from hoodie.errors import ConfigError
from hoodie.spark.stream_source import StreamSettings
from hoodie.table.table import HoodieTable

COW = trip_options(**{"hoodie.index.bloom.num_entries": "1000"})
ONE_COMMIT = {"hoodie.datasource.read.streaming.max.commits.per.batch": "1"}


def trips(uuids: list[str], ts: int, fare: float = 1.0) -> pa.Table:
    cities = ["sf", "nyc", "la"]
    return pa.table({"uuid": uuids, "city": [cities[int(u[1:]) % 3] for u in uuids], "ts": [ts] * len(uuids), "fare": [fare] * len(uuids)})


def drain(spark: Any, path: str, checkpoint: Path, **options: str) -> list[pa.Table]:
    """Run the stream with Trigger.AvailableNow from ``checkpoint``: each micro-batch's rows."""
    batches: list[tuple[int, pa.Table]] = []
    reader = spark.readStream.format("hoodie").options(**options)
    query = (
        reader.load(path)
        .writeStream.foreachBatch(lambda df, batch_id: batches.append((batch_id, df.toArrow())))
        .option("checkpointLocation", str(checkpoint))
        .trigger(availableNow=True)
        .start()
    )
    query.awaitTermination()
    return [b for _, b in sorted(batches, key=lambda x: x[0])]


def commits(path: str) -> list[str]:
    return [i.timestamp for i in HoodieTable.open(path).timeline.completed_writes()]


def pull(path: str, begin: str, end: str) -> pa.Table:
    return hoodie.read(
        path,
        {"hoodie.datasource.query.type": "incremental", "hoodie.datasource.read.begin.instanttime": begin, "hoodie.datasource.read.end.instanttime": end},
    )


def rows(t: pa.Table) -> list[tuple]:
    return sorted((r["_hoodie_commit_time"], r["_hoodie_record_key"], r["uuid"], r["city"], r["ts"], r["fare"]) for r in t.to_pylist())


def model(path: str, after: str = "0") -> list[list[tuple]]:
    """One incremental pull per commit after ``after``: what one-commit batches hold."""
    times = commits(path)
    begins = [after] + [t for t in times if t > after]
    return [rows(pull(path, b, e)) for b, e in zip(begins, begins[1:])]


def test_cow_commits_stream_as_incremental_pulls_and_resume_after_restart(spark, tmp_path: Path) -> None:
    path = str(tmp_path / "up")
    hoodie.write(trips(["u0", "u1", "u2", "u3"], 1), path, COW)
    hoodie.write(trips(["u1", "u4"], 2, 5.0), path, COW)  # an update and an insert
    hoodie.write(trips(["u2"], 1), path, {**COW, "hoodie.datasource.write.operation": "delete"})  # only a delete
    checkpoint = tmp_path / "ck"
    first = drain(spark, path, checkpoint, **ONE_COMMIT)
    assert [rows(b) for b in first if b.num_rows] == [m for m in model(path) if m]
    assert len(rows(first[0])) == 4 and {r[2] for r in rows(first[1])} == {"u1", "u4"}

    # the stream's schema is the table's, meta columns first, as a batch read returns it
    def types(df: Any) -> list[tuple[str, str]]:
        return [(f.name, f.dataType.simpleString()) for f in df.schema.fields]

    assert types(spark.readStream.format("hoodie").load(path)) == types(spark.read.format("hoodie").load(path))

    # the query restarts from its checkpoint: only the commits after it, each once
    seen = commits(path)[-1]
    hoodie.write(trips(["u0", "u5"], 3, 7.0), path, COW)
    hoodie.write(trips(["u5"], 4, 8.0), path, COW)
    second = drain(spark, path, checkpoint, **ONE_COMMIT)
    assert [rows(b) for b in second] == model(path, seen)
    assert drain(spark, path, checkpoint, **ONE_COMMIT) == []  # nothing new: no batch

    # all batches together: every commit's changes once, none missing
    everything = rows(pa.concat_tables(first + second))
    assert len(everything) == len(set(everything))
    assert everything == sorted(r for m in model(path) for r in m)


def test_without_a_limit_one_batch_reads_every_available_commit(spark, tmp_path: Path) -> None:
    path = str(tmp_path / "up")
    for ts in range(1, 4):
        hoodie.write(trips(["u0", f"u{ts}"], ts, float(ts)), path, COW)
    batches = drain(spark, path, tmp_path / "ck")
    assert len(batches) == 1
    assert rows(batches[0]) == rows(pull(path, "0", commits(path)[-1]))  # u0 once, in its latest state


def test_start_offset_latest_and_an_instant(spark, tmp_path: Path) -> None:
    path = str(tmp_path / "up")
    for ts in range(1, 4):
        hoodie.write(trips([f"u{ts}"], ts), path, COW)
    t1, t2, t3 = commits(path)
    latest = drain(spark, path, tmp_path / "ck1", **{"hoodie.datasource.streaming.startOffset": "latest"})
    assert sum(b.num_rows for b in latest) == 0  # (Spark runs a first, empty batch at the start offset)
    later = drain(spark, path, tmp_path / "ck2", **{"hoodie.datasource.streaming.startOffset": t1})
    assert rows(pa.concat_tables(later)) == rows(pull(path, t1, t3))
    begin = drain(spark, path, tmp_path / "ck3", **{"hoodie.datasource.read.begin.instanttime": t2})
    assert rows(pa.concat_tables(begin)) == rows(pull(path, t2, t3))


def test_mor_batches_equal_the_pulls_across_a_compaction(spark, tmp_path: Path) -> None:
    path = str(tmp_path / "mor")
    opts = {**MOR_TRIPS, "hoodie.compact.inline": "true", "hoodie.compact.inline.max.delta.commits": "3"}
    hoodie.write(trips([f"u{i}" for i in range(6)], 1), path, opts)
    checkpoint = tmp_path / "ck"
    first = drain(spark, path, checkpoint, **ONE_COMMIT)
    hoodie.write(trips(["u0", "u1"], 2, 2.0), path, opts)
    hoodie.write(trips(["u1", "u2", "u6"], 3, 3.0), path, opts)  # the third delta commit: compacted after it
    hoodie.write(trips(["u2", "u3"], 0, 0.5), path, opts)  # a late update (smaller ts) after the compaction
    hoodie.write(trips(["u4"], 1), path, {**opts, "hoodie.datasource.write.operation": "delete"})
    table = HoodieTable.open(path)
    assert table.timeline.completed(["commit"]), "a compaction ran between the batches"
    assert any(s.log_files for s in table.view().latest_slices_all()), "the later slices have logs"
    second = drain(spark, path, checkpoint, **ONE_COMMIT)
    batches = first + second
    expected = model(path)
    # a compaction adds no batch of its own: its rows keep their commit times (pulled before)
    assert [rows(b) for b in batches if b.num_rows] == [m for m in expected if m]
    assert {(r[2], r[4]) for r in rows(batches[-2])} == {("u2", 0), ("u3", 0)}


def test_falling_behind_the_cleaner_and_archival_is_a_clear_error_or_the_fallback(spark, tmp_path: Path) -> None:
    path = str(tmp_path / "up")
    services = {"hoodie.cleaner.commits.retained": "1", "hoodie.keep.min.commits": "2", "hoodie.keep.max.commits": "3"}
    opts = {**COW, **services}
    hoodie.write(trips(["u0", "u1"], 1), path, opts)
    checkpoint = tmp_path / "ck"
    assert len(drain(spark, path, checkpoint)) == 1
    behind = commits(path)[-1]
    for ts in range(2, 8):
        hoodie.write(trips(["u0", f"u{ts}"], ts, float(ts)), path, opts)
    table = HoodieTable.open(path)
    assert table.timeline.completed(["clean"]) and behind not in commits(path), "cleaned and archived past the offset"

    with pytest.raises(StreamingQueryException) as failed:
        drain(spark, path, checkpoint)
    message = str(failed.value)
    assert behind in message and "hoodie.datasource.read.incr.fallback.fulltablescan.enable" in message

    fallback = drain(spark, path, checkpoint, **{"hoodie.datasource.read.incr.fallback.fulltablescan.enable": "true"})
    latest = hoodie.read(path)
    # the latest snapshot's records committed after the offset: u0 in its latest state, u2..u7
    assert rows(pa.concat_tables(fallback)) == rows(latest.filter(pa.compute.greater(latest["_hoodie_commit_time"], behind)))
    assert {r["uuid"] for r in pa.concat_tables(fallback).to_pylist()} == {"u0", *(f"u{ts}" for ts in range(2, 8))}


def test_stream_options_are_checked() -> None:
    with pytest.raises(ConfigError, match="hoodie.datasource.streaming.startOffset"):
        StreamSettings.of({"path": "/t", "hoodie.datasource.streaming.startoffset": "yesterday"})
    with pytest.raises(ConfigError, match="did you mean hoodie.datasource.read.streaming.max.commits.per.batch"):
        StreamSettings.of({"path": "/t", "hoodie.datasource.read.streaming.max.commit.per.batch": "2"})
    with pytest.raises(ConfigError, match="hoodie.datasource.read.end.instanttime"):
        StreamSettings.of({"path": "/t", "hoodie.datasource.read.end.instanttime": "20260101000000000"})
    with pytest.raises(ConfigError, match="needs a table path"):
        StreamSettings.of({})
    settings = StreamSettings.of({"PATH": "/t", "hoodie.datasource.read.streaming.max.commits.per.batch": "3", "ignoreMissingFiles": "true"})
    assert (settings.path, settings.start, settings.max_commits, settings.request.ignore_missing_files) == ("/t", "earliest", 3, True)



@pytest.mark.slow
def test_a_derived_table_updates_from_its_upstream_one(spark, tmp_path: Path) -> None:
    """The article's chain: a stream of the upstream table's changes upserted, batch by
    batch, into a derived table, which ends equal to the upstream snapshot."""
    up, derived = str(tmp_path / "up"), str(tmp_path / "derived")
    derived_options = {**trip_options(**{"hoodie.table.name": "derived"}), "hoodie.datasource.write.operation": "upsert"}

    def upsert(df: Any, batch_id: int) -> None:
        data = df.drop(*[c for c in df.columns if c.startswith("_hoodie_")])
        data.write.format("hoodie").options(**derived_options).mode("append").save(derived)

    def run() -> None:
        query = (
            spark.readStream.format("hoodie").options(**ONE_COMMIT).load(up)
            .writeStream.foreachBatch(upsert).option("checkpointLocation", str(tmp_path / "ck")).trigger(availableNow=True).start()
        )
        query.awaitTermination()

    hoodie.write(trips(["u0", "u1", "u2"], 1), up, COW)
    hoodie.write(trips(["u1", "u3"], 2, 2.0), up, COW)
    run()
    hoodie.write(trips(["u0", "u4"], 3, 3.0), up, COW)
    run()

    def data(t: pa.Table) -> list[tuple]:
        return sorted((r["uuid"], r["city"], r["ts"], r["fare"]) for r in t.to_pylist())

    assert data(hoodie.read(derived)) == data(hoodie.read(up)) == data(hudi_rs_table(derived))
    # one derived commit per upstream commit: each batch applied once
    assert len(commits(derived)) == len(commits(up)) == 3


@pytest.mark.slow
def test_v8_and_v9_tables_stream_by_completion_time(spark, tmp_path: Path, conformance_catalog, conformance_table) -> None:
    """Tables Apache Hudi 1.x wrote: offsets are completion times, each batch the pull of
    its range of completion times."""
    cases = [t for t in conformance_catalog if t.table_version >= 8]
    if not cases:
        pytest.skip("no v8+ conformance tables")
    for case in cases:
        path = str(conformance_table(case))
        timeline = HoodieTable.open(path).timeline
        ends = sorted({timeline.completion_time(i) for i in timeline.completed_writes()})
        batches = drain(spark, path, tmp_path / case.name / "ck", **ONE_COMMIT)
        begins = ["0", *ends]
        expected = [hoodie.read(path, {
            "hoodie.datasource.query.type": "incremental", "hoodie.datasource.read.begin.instanttime": b, "hoodie.datasource.read.end.instanttime": e,
        }) for b, e in zip(begins, ends)]
        assert [sorted(map(str, b.to_pylist())) for b in batches] == [sorted(map(str, e.to_pylist())) for e in expected], case.name


def test_the_readme_streaming_example_runs(spark, tmp_path: Path) -> None:
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    after = readme[readme.index("\n### Streaming reads\n"):]
    code = after[after.index("```python\n") + len("```python\n"):after.index("```", after.index("```python\n") + 3)]
    for name in ("trips", "trips_copy", "checkpoints/trips_copy"):
        code = code.replace(f'"/data/{name}"', repr(str(tmp_path / name)))
    assert "/data/" not in code
    hoodie.write(trips(["u0", "u1"], 1), str(tmp_path / "trips"), COW)
    hoodie.write(trips(["u1"], 2, 2.0), str(tmp_path / "trips"), COW)
    query = eval(compile(code, "README.md", "eval"), {"spark": spark})  # noqa: S307 (the README's own example)
    query.awaitTermination()
    copied = spark.read.parquet(str(tmp_path / "trips_copy")).toArrow()
    assert rows(copied) == rows(pull(str(tmp_path / "trips"), "0", commits(str(tmp_path / "trips"))[-1]))
