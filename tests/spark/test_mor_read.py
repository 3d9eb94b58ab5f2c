"""Merge-on-read tables through Spark: slices with log files are merged on executors and
equal the in-process reader for snapshot, read-optimized, time travel and incremental."""
from __future__ import annotations

from pathlib import Path

import pyarrow as pa
from table_options import MOR_TRIPS

import hoodie
from hoodie.table.table import HoodieTable

OPTS = MOR_TRIPS


def rows(t: pa.Table) -> list[tuple]:
    return sorted((r["_hoodie_commit_time"], r["uuid"], r["city"], r["ts"], r["fare"]) for r in t.to_pylist())


def test_mor_reads_through_spark_equal_in_process(spark, tmp_path: Path) -> None:
    path = str(tmp_path / "mor")
    hoodie.write(pa.table({"uuid": [f"u{i}" for i in range(6)], "city": ["sf", "nyc", "la"] * 2, "ts": [1] * 6, "fare": [1.0] * 6}), path, OPTS)
    df = spark.createDataFrame(pa.table({"uuid": ["u0", "u1", "n1"], "city": ["sf", "nyc", "la"], "ts": [5, 0, 1], "fare": [50.0, 10.0, 7.0]}).to_pandas())
    df.write.format("hoodie").options(**OPTS).mode("append").save(path)
    hoodie.write(pa.table({"uuid": ["u3"], "city": ["sf"], "ts": [1]}), path, {**OPTS, "hoodie.datasource.write.operation": "delete"})
    instants = [i.timestamp for i in HoodieTable.open(path).timeline.completed_writes()]
    assert any(s.log_files for s in HoodieTable.open(path).view().latest_slices_all())
    cases = [
        {},
        {"hoodie.datasource.query.type": "read_optimized"},
        {"as.of.instant": instants[1]},
        {"hoodie.datasource.query.type": "incremental", "hoodie.datasource.read.begin.instanttime": instants[0]},
        {
            "hoodie.datasource.query.type": "incremental",
            "hoodie.datasource.read.begin.instanttime": instants[0],
            "hoodie.datasource.read.end.instanttime": instants[1],
        },
    ]
    for options in cases:
        ours = hoodie.read(path, options or None)
        theirs = spark.read.format("hoodie").options(**options).load(path).toArrow()
        assert rows(theirs) == rows(ours), options
    snapshot = rows(hoodie.read(path))
    assert sorted(r[1:] for r in snapshot if r[1] in ("u0", "u1")) == [("u0", "sf", 5, 50.0), ("u1", "nyc", 1, 1.0)]
    assert "u3" not in {r[1] for r in snapshot}


def test_many_slices_with_logs_merge_in_groups_on_executors(spark, tmp_path: Path) -> None:
    """Forty file groups with logs: each of the four Spark tasks merges its ten slices
    two at a time (hoodie.query.slices.group_merges), decoding their logs together; the
    rows equal the in-process read's."""
    path = str(tmp_path / "many")
    cities = [f"c{i:02d}" for i in range(40)]
    base = pa.table({"uuid": [f"u{i}" for i in range(400)], "city": [cities[i % 40] for i in range(400)], "ts": [1] * 400, "fare": [1.0] * 400})
    hoodie.write(base, path, OPTS)
    every_third = range(0, 400, 3)  # a key in every city
    updates = pa.table({"uuid": [f"u{i}" for i in every_third], "city": [cities[i % 40] for i in every_third], "ts": [2] * 134, "fare": [2.0] * 134})
    hoodie.write(updates, path, OPTS)
    with_logs = [s for s in HoodieTable.open(path).view().latest_slices_all() if s.log_files]
    assert len(with_logs) == 40
    ours = hoodie.read(path)
    theirs = spark.read.format("hoodie").load(path).toArrow()
    assert rows(theirs) == rows(ours)
    assert [r[3] for r in rows(ours)].count(2) == 134


def test_incremental_pull_over_a_compaction_merges_the_range_only(spark, tmp_path: Path) -> None:
    """A stale update after a compaction in the range is pulled as written through Spark
    as in process (the merge on executors keeps only the range's base rows, as Apache
    Hudi does); the compacted version, committed before the range, is not."""
    path = str(tmp_path / "compacted")
    opts = {**OPTS, "hoodie.compact.inline": "true", "hoodie.compact.inline.max.delta.commits": "2"}

    def write(uuids: list[str], ts: int) -> str:
        return hoodie.write(pa.table({"uuid": uuids, "city": ["sf"] * len(uuids), "ts": [ts] * len(uuids), "fare": [float(ts)] * len(uuids)}), path, opts)

    first = write(["u0", "u1"], 5)
    second = write(["u1"], 6)  # then the inline compaction
    assert any(i.action == "commit" for i in HoodieTable.open(path).timeline.completed_writes())
    stale = write(["u0"], 1)
    for begin, expected in [(second, [(stale, "u0", "sf", 1, 1.0)]), (first, [(second, "u1", "sf", 6, 6.0), (stale, "u0", "sf", 1, 1.0)])]:
        options = {"hoodie.datasource.query.type": "incremental", "hoodie.datasource.read.begin.instanttime": begin}
        ours = rows(hoodie.read(path, options))
        assert ours == sorted(expected)
        assert rows(spark.read.format("hoodie").options(**options).load(path).toArrow()) == ours
