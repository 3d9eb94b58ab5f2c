"""Merge-on-read writes: updates and deletes become log files on the latest slice, inserts
become base files; hudi-rs reads the result; failed delta commits are rolled back with
rollback command blocks."""
from __future__ import annotations

import dataclasses
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from table_options import MOR_TRIPS

import hoodie
from hoodie.formats.log import CommandBlock, read_log_file
from hoodie.layout import parse_log_file_name
from hoodie.services.for_writers import WRITER_SERVICES
from hoodie.storage.local import LocalStorage
from hoodie.table.table import HoodieTable

OPTS = MOR_TRIPS


def rows(t: pa.Table) -> list[tuple]:
    return sorted((r["uuid"], r["city"], r["ts"], r["fare"]) for r in t.select(["uuid", "city", "ts", "fare"]).to_pylist())


def base(n: int = 6) -> pa.Table:
    return pa.table({"uuid": [f"u{i}" for i in range(n)], "city": ["sf", "nyc"] * (n // 2), "ts": [1] * n, "fare": [float(i) for i in range(n)]})


def test_updates_and_deletes_go_to_logs_and_hudi_rs_merges_them(table_path: str, hudi_rs_read) -> None:
    t1 = hoodie.write(base(), table_path, OPTS)
    t2 = hoodie.write(pa.table({"uuid": ["u0", "u1"], "city": ["sf", "nyc"], "ts": [2, 0], "fare": [100.0, 101.0]}), table_path, OPTS)
    t3 = hoodie.write(pa.table({"uuid": ["u2"], "city": ["sf"], "ts": [5]}), table_path, {**OPTS, "hoodie.datasource.write.operation": "delete"})
    table = HoodieTable.open(table_path)
    assert [i.action for i in table.timeline.completed_writes()] == ["deltacommit"] * 3
    stats = table.commit_metadata(table.timeline.get(t2)).write_stats()
    assert all(s.path.rsplit("/", 1)[-1].startswith(".") and s.logVersion == 1 and s.prevCommit == t1 for s in stats)
    assert all(s.baseFile and s.baseFile.endswith(f"_{t1}.parquet") and s.logFiles == [s.path.rsplit("/", 1)[-1]] for s in stats)
    slices = table.view().latest_slices_all()
    assert all(s.base_instant == t1 for s in slices)
    assert sorted(len(s.log_files) for s in slices) == [1, 2]
    expected = [("u0", "sf", 2, 100.0), ("u1", "nyc", 1, 1.0), ("u3", "nyc", 1, 3.0), ("u4", "sf", 1, 4.0), ("u5", "nyc", 1, 5.0)]
    assert rows(hudi_rs_read(table_path)) == expected
    delete_stat = table.commit_metadata(table.timeline.get(t3)).write_stats()[0]
    assert (delete_stat.numDeletes, delete_stat.logVersion) == (1, 2)


def test_inserts_create_base_files_and_fill_only_log_free_small_files(table_path: str) -> None:
    hoodie.write(base(), table_path, OPTS)
    hoodie.write(pa.table({"uuid": ["u0"], "city": ["sf"], "ts": [2], "fare": [1.0]}), table_path, OPTS)  # sf gets a log
    t = hoodie.write(pa.table({"uuid": ["n1", "n2"], "city": ["sf", "nyc"], "ts": [1, 1], "fare": [1.0, 2.0]}), table_path, OPTS)
    table = HoodieTable.open(table_path)
    stats = {s.partitionPath: s for s in table.commit_metadata(table.timeline.get(t)).write_stats()}
    assert stats["sf"].prevCommit == "null" and stats["sf"].path.endswith(".parquet"), "sf's slice has logs: a new file group"
    assert stats["nyc"].prevCommit != "null" and stats["nyc"].path.endswith(f"_{t}.parquet"), "nyc's small file is merged"
    assert len(HoodieTable.open(table_path).view().latest_slices("sf")) == 2


CHILD = textwrap.dedent(
    """
    import os, signal, sys
    import pyarrow as pa
    from hoodie.timeline.active import ActiveTimeline
    from hoodie.writer.client import WriteClient
    from hoodie.engine.local import LocalEngine
    from hoodie.services.for_writers import WRITER_SERVICES
    ActiveTimeline.transition_to_completed = lambda *a, **k: os.kill(os.getpid(), signal.SIGKILL)
    batch = pa.table({"uuid": ["u0", "u1", "zz"], "city": ["sf", "nyc", "sf"], "ts": [9, 9, 9], "fare": [-1.0, -1.0, -1.0]})
    WriteClient(sys.argv[1], eval(sys.argv[2]), services=WRITER_SERVICES, engine=LocalEngine(1)).write(batch)
    """
)


@pytest.mark.slow
def test_failed_delta_commit_is_rolled_back_with_command_blocks(table_path: str, hudi_rs_read) -> None:
    hoodie.write(base(), table_path, OPTS)
    before = rows(hudi_rs_read(table_path))
    proc = subprocess.run([sys.executable, "-c", CHILD, table_path, repr(OPTS)], capture_output=True, text=True, timeout=300)
    assert proc.returncode == -signal.SIGKILL, proc.stderr
    failed = HoodieTable.open(table_path).timeline.pending()[0].timestamp
    assert rows(hudi_rs_read(table_path)) == before
    hoodie.write(pa.table({"uuid": ["u5"], "city": ["nyc"], "ts": [3], "fare": [55.0]}), table_path, OPTS)
    table = HoodieTable.open(table_path)
    (rb,) = table.timeline.completed(["rollback"])
    assert not table.timeline.pending()
    storage = LocalStorage()
    commands = []
    for p in Path(table_path).rglob(".*.log.*"):
        for block in read_log_file(storage, str(p)):
            if isinstance(block, CommandBlock):
                commands.append((parse_log_file_name(p.name).write_token, block.target_instant, block.instant_time))
    # nyc got a log file (update), sf a merged base file (its small file took the insert)
    assert sorted(commands) == [("1-0-1", failed, rb.timestamp)]
    assert not any(Path(table_path).rglob(f"*_{failed}.parquet")), "the base file of the failed insert is deleted"
    after = dict(((u, c), (ts, f)) for u, c, ts, f in before)
    after[("u5", "nyc")] = (3, 55.0)
    assert rows(hudi_rs_read(table_path)) == sorted((u, c, ts, f) for (u, c), (ts, f) in after.items())


MID_LOGS_CHILD = textwrap.dedent(
    """
    import os, signal, sys
    import pyarrow as pa
    from hoodie.engine.local import LocalEngine
    from hoodie.services.for_writers import WRITER_SERVICES
    from hoodie.writer import append_handle
    from hoodie.writer.client import WriteClient

    path, point, opts = sys.argv[1], sys.argv[2], eval(sys.argv[3])
    die = lambda: os.kill(os.getpid(), signal.SIGKILL)
    original, calls = append_handle.write_log_file, {"n": 0}

    def crashing(storage, fpath, blocks):
        calls["n"] += 1
        if point == "before_logs":
            die()  # the marker exists, the log file does not
        size = original(storage, fpath, blocks)
        if point == "torn_log" and calls["n"] == 2:
            with open(fpath, "r+b") as f:  # a second log torn halfway, as a crash mid-write leaves it
                f.truncate(size // 2)
            die()
        return size

    append_handle.write_log_file = crashing
    cities = ["sf", "nyc", "la"]
    batch = pa.table({
        "uuid": [f"u{i:02d}" for i in range(0, 30, 2)] + ["n1"],
        "city": [cities[i % 3] for i in range(0, 30, 2)] + ["sf"],
        "ts": [9] * 16,
        "fare": [-1.0] * 16,
    })
    WriteClient(path, opts, services=WRITER_SERVICES, engine=LocalEngine(1)).write(batch)
    print("NOT KILLED")
    """
)


@pytest.mark.slow
@pytest.mark.parametrize("point", ["before_logs", "torn_log"])
def test_merge_on_read_writer_killed_among_its_log_files(tmp_path: Path, point: str, hudi_rs_read) -> None:
    """A merge-on-read writer killed after its markers, or with one log file written and
    the next torn halfway: the table reads at its last commit (hoodie and hudi-rs), the
    next writer rolls the failed delta commit back and succeeds, nothing committed is lost."""
    path = str(tmp_path / "t")
    cities = ["sf", "nyc", "la"]
    first = pa.table(
        {"uuid": [f"u{i:02d}" for i in range(30)], "city": [cities[i % 3] for i in range(30)], "ts": [1] * 30, "fare": [float(i) for i in range(30)]}
    )
    hoodie.write(first, path, OPTS)
    hoodie.write(pa.table({"uuid": ["u01"], "city": ["nyc"], "ts": [5], "fare": [50.0]}), path, OPTS)  # a committed log
    committed = rows(hoodie.read(path))
    assert rows(hudi_rs_read(path)) == committed
    proc = subprocess.run([sys.executable, "-c", MID_LOGS_CHILD, path, point, repr(OPTS)], capture_output=True, text=True, timeout=300)
    assert proc.returncode == -signal.SIGKILL, proc.stdout + proc.stderr
    (pending,) = HoodieTable.open(path).timeline.pending()
    assert pending.action == "deltacommit"
    logs_of_failed = [
        p
        for p in Path(path).rglob(".*.log.*")
        if any(b.instant_time == pending.timestamp for b in read_log_file(LocalStorage(), str(p)) if hasattr(b, "instant_time"))
    ]
    if point == "torn_log":
        assert logs_of_failed, "the killed write left log files behind"
    assert rows(hoodie.read(path)) == committed, "readers see the last commit only"
    assert rows(hudi_rs_read(path)) == committed, "hudi-rs sees the last commit only"
    hoodie.write(pa.table({"uuid": ["u02"], "city": ["la"], "ts": [7], "fare": [70.0]}), path, OPTS)
    table = HoodieTable.open(path)
    assert not table.timeline.pending() and not table.timeline.contains(pending.timestamp)
    (rb,) = table.timeline.completed(["rollback"])
    expected = {(u, c): (ts, f) for u, c, ts, f in committed}
    expected[("u02", "la")] = (7, 70.0)
    after = sorted((u, c, ts, f) for (u, c), (ts, f) in expected.items())
    assert rows(hoodie.read(path)) == after == rows(hudi_rs_read(path))


def test_parquet_log_blocks_read_back_through_hudi_rs(table_path: str, hudi_rs_read) -> None:
    from hoodie.formats.log import ParquetDataBlock

    opts = {**OPTS, "hoodie.logfile.data.block.format": "parquet"}
    hoodie.write(base(), table_path, opts)
    hoodie.write(pa.table({"uuid": ["u0", "u1"], "city": ["sf", "nyc"], "ts": [2, 0], "fare": [100.0, 101.0]}), table_path, opts)
    data_logs = [p for p in Path(table_path).rglob(".*.log.*") if ".hoodie" not in p.relative_to(table_path).parts]  # (not the metadata table's)
    blocks = [b for p in data_logs for b in read_log_file(LocalStorage(), str(p))]
    assert blocks and all(isinstance(b, ParquetDataBlock) for b in blocks)
    expected = [("u0", "sf", 2, 100.0), ("u1", "nyc", 1, 1.0), ("u2", "sf", 1, 2.0), ("u3", "nyc", 1, 3.0), ("u4", "sf", 1, 4.0), ("u5", "nyc", 1, 5.0)]
    assert rows(hudi_rs_read(table_path)) == expected == rows(hoodie.read(table_path))


def test_log_file_of_a_duplicate_task_attempt_is_removed_at_commit(table_path: str, hudi_rs_read) -> None:
    import dataclasses

    from hoodie.engine.base import TaskContext
    from hoodie.storage.local import LocalStorage as Local
    from hoodie.writer import steps
    from hoodie.writer.handles import BucketTask, run_bucket
    from hoodie.writer.pipeline import planner_for, write_context
    from hoodie.writer.prepare import add_keys
    from hoodie.writer.table_setup import prepare_write
    from hoodie.writer.transaction import WriteTransaction

    hoodie.write(base(), table_path, OPTS)
    batch = pa.table({"uuid": ["u0"], "city": ["sf"], "ts": [7], "fare": [70.0]})
    prepared = prepare_write(table_path, OPTS, None, batch.schema, Local(), WRITER_SERVICES)
    records = add_keys(batch, prepared.keygen, is_delete=False)
    latest = {"sf": prepared.table.view().latest_slices("sf")}
    records = steps.tag_records(records, {"sf": steps.file_refs(latest["sf"])}, prepared.table.storage, prepared.settings.index)
    plan = planner_for(prepared).plan(steps.profile(records), latest)
    (bucket,) = plan.buckets
    assert bucket.handle == "append"
    txn = WriteTransaction.begin(prepared.table, "upsert", WRITER_SERVICES)
    txn.mark_inflight()
    wctx = write_context(prepared, txn.instant_time, prepared.table.data_schema())
    task = BucketTask(bucket, steps.assign_buckets(records, plan))
    loser = run_bucket(task, TaskContext(0, 1, 1), wctx)
    # a second attempt of the same bucket (another token, and the next log version)
    retry = dataclasses.replace(bucket, next_log_version=bucket.next_log_version + 1)
    winner = run_bucket(BucketTask(retry, task.records), TaskContext(0, 1, 2), wctx)
    assert (Path(table_path) / loser.path).exists() and (Path(table_path) / winner.path).exists()
    txn.commit([winner], prepared.table.data_schema())
    assert not (Path(table_path) / loser.path).exists(), "the unaccepted attempt's log file is deleted"
    assert (Path(table_path) / winner.path).exists()
    assert ("u0", "sf", 7, 70.0) in rows(hudi_rs_read(table_path))


@pytest.mark.parametrize("shared_records", [None, 25])
def test_buckets_written_together_are_byte_for_byte_what_each_would_be_alone(
    table_path: str, hudi_rs_read, shared_records: int | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A write across many partitions: each task writes a group of buckets, encoding all
    its log blocks in one pass and hashing all its new files' keys in one pass (in passes
    of at most ``_SHARED_RECORDS`` records). Every log file is exactly the bytes of its
    blocks encoded one by one, every new file's bloom filter is exactly the one built from
    its own keys, and hudi-rs reads the result."""
    from hoodie.writer import handles

    if shared_records is not None:
        monkeypatch.setattr(handles, "_SHARED_RECORDS", shared_records)
    from hoodie.formats.bloom import BLOOM_FILTER_KEY, new_bloom_filter
    from hoodie.formats.bloom_footer import footer_metadata, read_footer_index
    from hoodie.formats.log import encode_log_file

    cities = [f"c{i:02d}" for i in range(12)]
    opts = {**OPTS, "hoodie.parquet.small.file.limit": "0"}  # inserts open new file groups
    first = pa.table(
        {"uuid": [f"u{i:03d}" for i in range(240)], "city": [cities[i % 12] for i in range(240)], "ts": [1] * 240, "fare": [float(i) for i in range(240)]}
    )
    hoodie.write(first, table_path, opts)
    upsert = pa.table({
        "uuid": [f"u{i:03d}" for i in range(0, 240, 5)] + [f"n{i:03d}" for i in range(120)],  # updates in every city
        "city": [cities[i % 12] for i in range(0, 240, 5)] + [cities[i % 12] for i in range(120)],
        "ts": [2] * 48 + [1] * 120,
        "fare": [-1.0] * 48 + [0.5] * 120,
    })
    t2 = hoodie.write(upsert, table_path, opts)
    written = [Path(table_path) / s.path for s in HoodieTable.open(table_path).commit_metadata(HoodieTable.open(table_path).timeline.get(t2)).write_stats()]
    logs = [p for p in written if ".log." in p.name]
    new_files = [p for p in written if p.suffix == ".parquet"]
    assert len(logs) == 12 and len(new_files) == 12
    for p in logs:
        assert encode_log_file(read_log_file(LocalStorage(), str(p))) == p.read_bytes()
    for p in new_files:
        keys = pq.read_table(p, columns=["_hoodie_record_key"]).column(0)
        alone = new_bloom_filter(1000)
        alone.add_many(keys)
        index = read_footer_index(pq.read_metadata(p).metadata)
        assert index is not None and index.bloom is not None
        assert index.bloom.text == footer_metadata(alone, None, None)[BLOOM_FILTER_KEY.encode()]
    expected = {r["uuid"]: r["fare"] for r in first.to_pylist()} | {r["uuid"]: r["fare"] for r in upsert.to_pylist()}
    assert sorted((r["uuid"], r["fare"]) for r in hudi_rs_read(table_path).to_pylist()) == sorted(expected.items())


def test_write_groups_share_appends_and_new_files_evenly() -> None:
    """Buckets alternate between log appends and new files partition by partition; every
    group gets its share of each kind (a new file costs about twice an append), and merges
    come after, one a group."""
    from types import SimpleNamespace

    from hoodie.writer.handles import group_buckets
    from hoodie.writer.planner import APPEND, CREATE, MERGE

    def task(handle: str, is_new: bool, base: str | None) -> SimpleNamespace:
        return SimpleNamespace(bucket=SimpleNamespace(handle=handle, is_new=is_new, base_path=base))

    kinds = []
    for _ in range(10):
        kinds += [task(APPEND, False, "b.parquet"), task(CREATE, True, None)]
    kinds.append(task(MERGE, False, "m.parquet"))
    groups = group_buckets(kinds, workers=2)
    assert len(groups) == 5 and groups[-1].ids == (20,)
    shared = groups[:4]
    assert sorted(i for g in shared for i in g.ids) == list(range(20))
    for g in shared:
        appends = sum(1 for i in g.ids if i % 2 == 0)
        assert 2 <= appends <= 3 and 2 <= len(g.ids) - appends <= 3, g.ids
        assert list(g.ids) == sorted(g.ids)


@pytest.mark.parametrize("block_format", ["avro", "parquet"])
def test_a_bucket_group_writes_exactly_what_its_buckets_write_one_by_one(tmp_path: Path, block_format: str) -> None:
    """``run_bucket_group`` builds the log records and the new files' rows of all its
    buckets in one pass (meta columns, delete split, dictionary choice, key hashing): the
    files are the ones each bucket writes alone, byte for byte for the logs, row for row
    and footer for footer for the base files."""
    import shutil

    from hoodie.engine.base import TaskContext
    from hoodie.writer import steps
    from hoodie.writer.handles import BucketGroup, BucketTask, run_bucket, run_bucket_group
    from hoodie.writer.pipeline import planner_for, write_context
    from hoodie.writer.prepare import add_keys
    from hoodie.writer.table_setup import prepare_write
    from hoodie.writer.transaction import WriteTransaction

    cities = [f"c{i}" for i in range(6)]
    opts = {**OPTS, "hoodie.parquet.small.file.limit": "0", "hoodie.logfile.data.block.format": block_format}
    together, alone = str(tmp_path / "together"), str(tmp_path / "alone")
    hoodie.write(
        pa.table({"uuid": [f"u{i:02d}" for i in range(60)], "city": [cities[i % 6] for i in range(60)], "ts": [1] * 60, "fare": [float(i) for i in range(60)]}),
        together,
        opts,
    )
    # updates in every city, deletes (_hoodie_is_deleted) in some, inserts in every city
    updated = list(range(0, 60, 5)) + list(range(1, 60, 5))
    batch = pa.table({
        "uuid": [f"u{i:02d}" for i in updated] + [f"n{i:02d}" for i in range(30)],
        "city": [cities[i % 6] for i in updated] + [cities[i % 6] for i in range(30)],
        "ts": [2] * 24 + [1] * 30,
        "fare": [-float(i) for i in updated] + [0.5] * 30,
        "_hoodie_is_deleted": [i % 3 == 0 for i in range(24)] + [False] * 30,
    })
    prepared = prepare_write(together, opts, None, batch.schema, LocalStorage(), WRITER_SERVICES)
    records = add_keys(batch, prepared.keygen, is_delete=False)
    latest = {c: prepared.table.view().latest_slices(c) for c in cities}
    records = steps.tag_records(records, {c: steps.file_refs(latest[c]) for c in cities}, prepared.table.storage, prepared.settings.index)
    plan = planner_for(prepared).plan(steps.profile(records), latest)
    tasks = tuple(BucketTask(plan.bucket(b), rows) for b, rows in steps.split_by_bucket(steps.assign_buckets(records, plan)))
    assert sorted(t.bucket.handle for t in tasks) == ["append"] * 6 + ["create"] * 6
    txn = WriteTransaction.begin(prepared.table, "upsert", WRITER_SERVICES)
    txn.mark_inflight()
    shutil.copytree(together, alone)
    wctx = write_context(prepared, txn.instant_time, prepared.table.data_schema())
    ids = tuple(range(3, 3 + len(tasks)))
    grouped = run_bucket_group(BucketGroup(tasks, ids), TaskContext(0, 1, 1), wctx)
    wctx_alone = dataclasses.replace(wctx, base_path=alone)
    single = [run_bucket(t, TaskContext(i, 1, 1), wctx_alone) for t, i in zip(tasks, ids)]
    assert [s.path for s in grouped] == [s.path for s in single]
    for g, s in zip(grouped, single):
        assert (g.numWrites, g.numInserts, g.numUpdateWrites, g.numDeletes) == (s.numWrites, s.numInserts, s.numUpdateWrites, s.numDeletes)
        mine, theirs = Path(together) / g.path, Path(alone) / s.path
        if ".log." in g.path:
            assert mine.read_bytes() == theirs.read_bytes(), g.path
        else:
            assert pq.read_table(mine).equals(pq.read_table(theirs)), g.path
            assert pq.read_metadata(mine).metadata == pq.read_metadata(theirs).metadata, g.path
    deletes = [s for s in grouped if s.numDeletes]
    assert deletes and sum(s.numDeletes for s in deletes) == 8
