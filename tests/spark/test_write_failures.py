"""Failures during a Spark write leave the table at its last commit.

* a bad record (null key) fails a task before anything is written: the error comes back
  as hoodie's ``RecordError``, the instant is rolled back, the next write succeeds;
* a write handle failing for one bucket while another bucket's file is written: the
  write is rolled back (the other file deleted), the table reads as before, the next
  write succeeds;
* every handle run twice before the commit (duplicate task attempts, with their own
  write tokens): only the accepted attempt's files remain after the commit;
* a partition-aligned write (each task plans and writes its own partitions) failing
  after writing one partition: rolled back from its markers and inflight partitions.
"""
from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest

import hoodie
from hoodie.errors import RecordError
from hoodie.layout import parse_base_file_name
from hoodie.services.for_writers import WRITER_SERVICES
from hoodie.spark.write import DataFrameRecordFlow, write_dataframe
from hoodie.storage.factory import storage_for
from hoodie.table.table import HoodieTable
from hoodie.timeline import avro_metadata as avro
from hoodie.writer import steps
from hoodie.writer.pipeline import planner_for, workload_stats, write_context
from hoodie.writer.transaction import WriteTransaction


def _batch(keys: list[str], cities: list[str], ts: int, uuid_nulls: bool = False) -> pa.Table:
    return pa.table({
        "uuid": pa.array([None if uuid_nulls and i == 1 else k for i, k in enumerate(keys)], pa.string()),
        "city": pa.array(cities, pa.string()),
        "ts": pa.array([ts] * len(keys), pa.int64()),
        "fare": pa.array([float(i) for i in range(len(keys))], pa.float64()),
    })


def _files_of(path: str, instant: str) -> set[str]:
    out = set()
    for f in Path(path).rglob("*.parquet"):
        name = parse_base_file_name(f.name)
        if name is not None and name.instant == instant:
            out.add(str(f.relative_to(path)))
    return out


def _seed(spark, helpers, path: str) -> pa.Table:
    first = _batch([f"k{i}" for i in range(6)], ["sf", "la"] * 3, 1)
    write_dataframe(helpers.to_df(spark, first), path, helpers.base_options())
    return hoodie.read(path)


def _assert_clean(path: str, before: pa.Table, helpers) -> None:
    table = HoodieTable.open(path)
    assert table.timeline.pending(("commit", "replacecommit", "deltacommit")) == []
    assert helpers.rows(hoodie.read(path)) == helpers.rows(before)
    assert not (Path(path) / ".hoodie" / ".temp").exists() or not any((Path(path) / ".hoodie" / ".temp").iterdir())


def test_bad_record_fails_the_task_and_rolls_back(spark, tmp_path, helpers) -> None:
    path = str(tmp_path / "t")
    before = _seed(spark, helpers, path)
    bad = _batch(["a", "b", "c"], ["sf", "la", "sf"], 2, uuid_nulls=True)
    with pytest.raises(RecordError, match="uuid"):
        write_dataframe(helpers.to_df(spark, bad), path, helpers.base_options())
    _assert_clean(path, before, helpers)
    good = _batch(["a", "b", "c"], ["sf", "la", "sf"], 2)
    write_dataframe(helpers.to_df(spark, good), path, helpers.base_options())
    assert hoodie.read(path).num_rows == before.num_rows + 3


def _fails_on_garbled_sf_then_recovers(spark, helpers, path: str, batch, opts: dict, added: int) -> None:
    """Write ``batch`` while the sf base file is garbled: the write fails naming that file
    after the la partition's file was written; the rollback removes the la file, the
    timeline and files are as before, and the same write succeeds once sf is restored."""
    before = _seed(spark, helpers, path)
    commits = [i.timestamp for i in HoodieTable.open(path).timeline.completed_writes()]
    sf_file = next(Path(path, "sf").glob("*.parquet"))
    good_bytes = sf_file.read_bytes()
    sf_file.write_bytes(b"not a parquet file" + bytes(len(good_bytes)))
    with pytest.raises(Exception) as failure:
        write_dataframe(helpers.to_df(spark, batch), path, opts)
    assert sf_file.name in str(failure.value)
    sf_file.write_bytes(good_bytes)
    table = HoodieTable.open(path)
    rolled_back = [i for i in table.timeline.instants if i.action == "rollback"]
    assert len(rolled_back) == 1 and rolled_back[0].is_completed
    # The la file had been written before sf failed; the rollback removed it.
    done = avro.decode(table.timeline.read_content(rolled_back[0]), "rollback")
    assert any(Path(f).parent.name == "la" for f in done["partitionMetadata"]["la"]["successDeleteFiles"])
    assert [i.timestamp for i in table.timeline.completed_writes()] == commits
    # Only the files of the first commit are left.
    assert {p.name for p in helpers.data_files(path)} == set(before.column("_hoodie_file_name").to_pylist())
    _assert_clean(path, before, helpers)
    write_dataframe(helpers.to_df(spark, batch), path, opts)
    assert hoodie.read(path).num_rows == before.num_rows + added


def test_handle_failure_for_one_bucket_rolls_back(spark, tmp_path, helpers) -> None:
    """Inserts go to each partition's small file (a merge; insert does not read footers to
    tag): the sf handle fails reading its garbled base file while the la handle writes."""
    inserts = _batch(["x1", "x2", "x3", "x4"], ["sf", "la", "sf", "la"], 2)
    opts = helpers.base_options(**{"hoodie.datasource.write.operation": "insert"})
    _fails_on_garbled_sf_then_recovers(spark, helpers, str(tmp_path / "t"), inserts, opts, added=4)


def test_duplicate_task_attempts_leave_only_accepted_files(spark, tmp_path, helpers) -> None:
    path = str(tmp_path / "t")
    _seed(spark, helpers, path)
    upsert = _batch(["k0", "k1", "n1", "n2"], ["sf", "la", "sf", "la"], 5)
    job = DataFrameRecordFlow.prepare(helpers.to_df(spark, upsert), path, helpers.base_options(), None, storage_for(path))
    txn = WriteTransaction.begin(job.table, job.settings.operation, WRITER_SERVICES)
    latest = {p: job.table.view().latest_slices(p) for p in job.partitions()}
    tagged = job.tag({p: steps.file_refs(s) for p, s in latest.items()})
    plan = planner_for(job.prepared).plan(job.profiles(tagged), latest)
    bucketed = job.assign(tagged, plan)
    txn.mark_inflight(workload_stats(plan, job.bucket_counts(bucketed)))
    wctx = write_context(job.prepared, txn.instant_time, job.data_schema)
    accepted = job.write_assigned(bucketed, plan, wctx)
    duplicate = job.write_assigned(bucketed, plan, wctx)  # another stage: new tokens
    accepted_paths = {s.path for s in accepted}
    assert accepted_paths.isdisjoint({s.path for s in duplicate})
    assert _files_of(path, txn.instant_time) == accepted_paths | {s.path for s in duplicate}
    txn.commit(accepted, job.data_schema)
    job.release()
    assert _files_of(path, txn.instant_time) == accepted_paths
    snapshot = hoodie.read(path)
    assert snapshot.num_rows == 8
    assert set(snapshot.column("_hoodie_file_name").to_pylist()) == {p.rsplit("/", 1)[-1] for p in accepted_paths}
    assert helpers.rows(helpers.hudi_rs_snapshot(path)) == helpers.rows(snapshot)


@pytest.mark.parametrize("markers", ["DIRECT", "TIMELINE_SERVER_BASED"])
def test_partition_aligned_write_failing_midway_rolls_back(spark, tmp_path, helpers, markers: str) -> None:
    """One task plans and writes whole partitions (one shuffle task, three partitions, in
    the order la, nyc, sf): the la file is written when tagging sf fails on a garbled base
    file (with timeline-server markers nyc is planned and its marker made, but its file not
    written yet: a partition is planned before the files of the one before it). The
    inflight instant names every partition and the la file has its marker; the rollback
    removes it and the next write succeeds."""
    upsert = _batch(["k0", "k1", "x1", "x2", "y1"], ["sf", "la", "sf", "la", "nyc"], 2)
    opts = helpers.base_options(**{"hoodie.upsert.shuffle.parallelism": "1", "hoodie.write.markers.type": markers})
    _fails_on_garbled_sf_then_recovers(spark, helpers, str(tmp_path / "t"), upsert, opts, added=3)

