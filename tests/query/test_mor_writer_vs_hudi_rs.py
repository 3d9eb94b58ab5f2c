"""Merge-on-read tables written by hoodie's own writer read the same through hoodie and
hudi-rs: updates above, at and below the stored ordering value, deletes, rows flagged
``_hoodie_is_deleted``, several log versions per slice, a failed delta commit (pending,
then rolled back with a command block), compaction, and random mixes of all of these.

Two differences are deliberate (docs/apache-hudi.md), hoodie reading as Apache Hudi
does: a pending compaction (see the last tests), whose meanwhile written logs hoodie reads
as part of the slice the compaction reads, while hudi-rs 0.5.0 leaves them out until the
compaction completes; and an incremental pull whose range holds a base file written in
the range (a compaction) and a stale update: hoodie merges only the base rows committed
in the range and pulls the stale update, hudi-rs merges the whole base file, whose older
version wins, and does not (:func:`as_hudi_rs_pulls` derives hudi-rs's answer).
"""
from __future__ import annotations

import itertools
import os
import random
from pathlib import Path

import pyarrow as pa
import pytest

import hoodie
from hoodie.formats.log import CommandBlock, read_log_file
from hoodie.layout import InstantTime, parse_base_file_name
from hoodie.query import read_incremental, read_snapshot, read_table
from hoodie.services.compaction import (
    CompactionSettings,
    pending_compactions,
    run_compaction,
    schedule_compaction,
)
from hoodie.services.rollback import rollback_failed_writes
from hoodie.storage.factory import storage_for
from hoodie.table.table import HoodieTable

SCHEMA = pa.schema([("id", pa.int32()), ("ts", pa.int64()), ("name", pa.string()), ("part", pa.string()), ("_hoodie_is_deleted", pa.bool_())])


def _options(name: str, operation: str = "upsert") -> dict[str, str]:
    return {
        "hoodie.table.name": name,
        "hoodie.datasource.write.recordkey.field": "id",
        "hoodie.datasource.write.partitionpath.field": "part",
        "hoodie.datasource.write.precombine.field": "ts",
        "hoodie.datasource.write.table.type": "MERGE_ON_READ",
        "hoodie.datasource.write.operation": operation,
        # the data files against hudi-rs; the services run through the library on tables opened plainly
        "hoodie.metadata.enable": "false",
    }


def _row(i: int, ts: int, name: str, deleted: bool = False) -> dict:
    return {"id": i, "ts": ts, "name": name, "part": "ab"[i % 2], "_hoodie_is_deleted": deleted}


def _write(path: str, rows: list[dict], operation: str = "upsert") -> str:
    return hoodie.write(pa.Table.from_pylist(rows, schema=SCHEMA), path, _options(Path(path).name, operation))


def _fail_last_write(path: str, instant: str) -> None:
    """Leave ``instant`` as a crashed writer does: data files written, never completed."""
    os.remove(os.path.join(path, ".hoodie", f"{instant}.deltacommit"))


def _names(table: pa.Table) -> dict[int, str]:
    return {r["id"]: r["name"] for r in table.to_pylist()}


def as_hudi_rs_pulls(path: str, pulled: pa.Table, begin: str, end: str | None) -> pa.Table:
    """hoodie's pull over ``(begin, end]`` as hudi-rs 0.5.0 returns it: hudi-rs merges a
    base file written in the range whole and then keeps rows by commit time, so a key
    whose version in that base file was committed at or before ``begin`` and wins the
    merge (it is the key's version in the snapshot as of ``end``) is not pulled, while
    hoodie (as Apache Hudi) merges only the base rows committed in the range and pulls
    the key's version of the range."""
    as_of = read_table(path, {"as.of.instant": end} if end is not None else None)
    dropped = set()
    for r in as_of.select(["_hoodie_record_key", "_hoodie_commit_time", "_hoodie_file_name"]).to_pylist():
        base = parse_base_file_name(r["_hoodie_file_name"])
        older = InstantTime(r["_hoodie_commit_time"]) <= InstantTime(begin)
        if older and base is not None and InstantTime(base.instant) > InstantTime(begin):
            dropped.add(r["_hoodie_record_key"])
    keep = pa.array([k not in dropped for k in pulled.column("_hoodie_record_key").to_pylist()], pa.bool_())
    return pulled.filter(keep)


def _same_everywhere(path: str, hudi_rs, same_as_hudi_rs, what: str) -> None:
    """Snapshot, time travel at and between every commit, consecutive and open-ended
    incremental pulls: hoodie equals hudi-rs (the pulls as :func:`as_hudi_rs_pulls` says)."""
    table = HoodieTable.open(path)
    rs = hudi_rs(path)
    empty = rs.schema()
    commits = [i.timestamp for i in table.timeline.completed_writes()]
    assert commits == rs.commit_timestamps(), what
    same_as_hudi_rs(read_snapshot(table), rs.snapshot(), empty, f"{what}: snapshot")
    for instant in commits + [str(int(c) + 1) for c in commits[:-1]]:
        same_as_hudi_rs(read_table(path, {"as.of.instant": instant}), rs.snapshot(instant), empty, f"{what}: as of {instant}")
    points = ["0", *commits]
    for begin, end in itertools.pairwise(points):
        pulled = as_hudi_rs_pulls(path, read_incremental(table, begin, end), begin, end)
        same_as_hudi_rs(pulled, rs.incremental(begin, end), empty, f"{what}: ({begin}, {end}]")
    for begin in points[:-1]:
        pulled = as_hudi_rs_pulls(path, read_incremental(table, begin), begin, None)
        same_as_hudi_rs(pulled, rs.incremental(begin), empty, f"{what}: ({begin}, latest]")


def test_updates_deletes_and_a_rolled_back_delta_commit(tmp_path, hudi_rs, same_as_hudi_rs) -> None:
    path = str(tmp_path / "scripted")
    _write(path, [_row(i, 10, f"v0-{i}") for i in range(1, 11)])
    _write(path, [_row(1, 5, "lower"), _row(2, 10, "equal"), _row(3, 20, "higher")])
    _write(path, [_row(4, 0, "x")], operation="delete")  # Java's default ordering: always deletes
    _write(path, [_row(5, 5, "x", True), _row(6, 10, "x", True), _row(7, 20, "x", True), _row(8, 0, "x", True)])
    _write(path, [_row(2, 11, "equal-then-up"), _row(3, 15, "below-higher")])
    expected = {1: "v0-1", 2: "equal-then-up", 3: "higher", 5: "v0-5", 8: "v0-8", 9: "v0-9", 10: "v0-10"}
    assert _names(read_table(path)) == expected
    _same_everywhere(path, hudi_rs, same_as_hudi_rs, "committed")

    failed = _write(path, [_row(1, 99, "failed"), _row(9, 99, "failed")])
    _fail_last_write(path, failed)
    assert _names(read_table(path)) == expected  # the pending write's blocks are not replayed
    _same_everywhere(path, hudi_rs, same_as_hudi_rs, "pending write")

    [result] = rollback_failed_writes(HoodieTable.open(path))
    assert result is not None
    storage = storage_for(path)
    commands = [
        b for root, _, files in os.walk(path) if ".hoodie" not in root
        for f in files if ".log." in f for b in read_log_file(storage, os.path.join(root, f)) if isinstance(b, CommandBlock)
    ]
    assert [c.target_instant for c in commands] and {c.target_instant for c in commands} == {failed}
    assert _names(read_table(path)) == expected
    _same_everywhere(path, hudi_rs, same_as_hudi_rs, "rolled back")

    _write(path, [_row(9, 30, "after-rollback")])
    assert _names(read_table(path))[9] == "after-rollback"
    _same_everywhere(path, hudi_rs, same_as_hudi_rs, "after rollback")


def _random_table(path: str, seed: int, operations: int = 8) -> list[str]:
    rnd = random.Random(seed)
    keys = list(range(1, 13))

    def rows(ks: list[int], deleted: float = 0.0) -> list[dict]:
        return [_row(k, rnd.choice([0, 5, 10, 10, 20, 30]), f"s{seed}-{rnd.randint(0, 999)}", rnd.random() < deleted) for k in ks]

    _write(path, rows(keys[:8]))
    done = []
    for _ in range(operations):
        op = rnd.choice(["upsert", "upsert", "delete", "flagged", "insert", "compact", "fail"])
        sample = rnd.sample(keys, rnd.randint(1, 4))
        if op in ("upsert", "insert"):
            _write(path, rows(sample))
        elif op == "flagged":
            _write(path, rows(sample, deleted=0.7))
        elif op == "delete":
            _write(path, rows(sample), operation="delete")
        elif op == "fail":  # rolled back by the next write, or left pending at the end
            _fail_last_write(path, _write(path, rows(sample)))
        else:
            table = HoodieTable.open(path)
            instant, _ = schedule_compaction(table, CompactionSettings(), require_threshold=False)
            if instant is None:
                op = "compact (nothing to do)"
            else:
                run_compaction(table.reload(), instant)
        done.append(op)
    return done


@pytest.mark.parametrize("seed", [11, 23, 41, 53])
def test_random_writes(tmp_path, seed, hudi_rs, same_as_hudi_rs) -> None:
    path = str(tmp_path / f"random{seed}")
    operations = _random_table(path, seed)
    _same_everywhere(path, hudi_rs, same_as_hudi_rs, f"seed {seed}: {operations}")


def test_compaction_keeps_the_merged_records(tmp_path, hudi_rs, same_as_hudi_rs) -> None:
    path = str(tmp_path / "compacted")
    _write(path, [_row(i, 10, f"v0-{i}") for i in range(1, 7)])
    _write(path, [_row(1, 20, "up"), _row(2, 5, "low"), _row(3, 20, "x", True)])
    _write(path, [_row(4, 0, "x")], operation="delete")
    before = read_snapshot(HoodieTable.open(path))
    table = HoodieTable.open(path)
    instant, _ = schedule_compaction(table, CompactionSettings(), require_threshold=False)
    metadata = run_compaction(table.reload(), instant)
    [stat] = [s for s in metadata.write_stats() if s.partitionPath == "b"]  # ids 1 and 3 live in "b"
    assert (stat.numUpdateWrites, stat.numDeletes, stat.totalLogRecords) == (1, 1, 2)
    after = HoodieTable.open(path)
    assert not any(s.log_files for s in after.view().latest_slices_all())
    compacted = read_snapshot(after)
    # the compacted base keeps each winner's commit time and seqno; only the file name changes
    strip = [c for c in before.column_names if c != "_hoodie_file_name"]
    assert sorted(compacted.select(strip).to_pylist(), key=repr) == sorted(before.select(strip).to_pylist(), key=repr)
    _same_everywhere(path, hudi_rs, same_as_hudi_rs, "after compaction")


def test_logs_written_during_a_pending_compaction_are_read(tmp_path, hudi_rs, same_as_hudi_rs) -> None:
    """While a compaction at T is pending, writers name their logs after T; readers merge
    them into the slice the compaction reads (Java's merged file slices). hudi-rs 0.5.0
    drops them until the compaction completes; after that both agree again."""
    path = str(tmp_path / "pending_compaction")
    _write(path, [_row(i, 10, f"v0-{i}") for i in range(1, 5)])
    _write(path, [_row(1, 20, "before-schedule")])
    table = HoodieTable.open(path)
    instant, _ = schedule_compaction(table, CompactionSettings(), require_threshold=False)
    assert instant is not None
    _write(path, [_row(1, 30, "during-compaction"), _row(3, 30, "during-compaction")])
    _write(path, [_row(3, 40, "second-during")])

    table = HoodieTable.open(path)
    [sliced] = [s for s in table.view().latest_slices_all() if s.partition_path == "b"]
    assert sliced.base_instant < instant
    assert [lf.name.instant for lf in sliced.log_files].count(instant) == 2
    mine = _names(read_snapshot(table))
    assert mine == {1: "during-compaction", 2: "v0-2", 3: "second-during", 4: "v0-4"}
    theirs = _names(pa.Table.from_batches(hudi_rs(path)._table().read()))
    assert theirs == {1: "before-schedule", 2: "v0-2", 3: "v0-3", 4: "v0-4"}  # hudi-rs: logs named T not read yet

    assert [i.timestamp for i, _ in pending_compactions(table)] == [instant]
    run_compaction(table, instant)
    assert _names(read_table(path)) == mine
    _same_everywhere(path, hudi_rs, same_as_hudi_rs, "compaction completed")


def test_many_slices_with_logs_are_merged_in_groups_and_read_the_same(tmp_path, hudi_rs, same_as_hudi_rs) -> None:
    """Twenty file groups with logs (updates, a second log version, flagged deletes and a
    delete block) on one worker: merged four to a task, their Avro blocks decoded
    together; the rows are those of one task per slice, and of hudi-rs."""
    from hoodie.engine import LocalEngine
    from hoodie.query import slices as slice_tasks

    path = str(tmp_path / "groups")

    def rows(ids: range | list[int], ts: int, name: str, deleted: bool = False) -> list[dict]:
        return [{"id": i, "ts": ts, "name": f"{name}{i}", "part": f"p{i % 20:02d}", "_hoodie_is_deleted": deleted} for i in ids]

    _write(path, rows(range(200), 1, "a"))
    _write(path, rows([i for i in range(200) if i % 3 == 0], 2, "b"))
    _write(path, rows([i for i in range(200) if i % 5 == 0], 3, "c"))
    _write(path, rows([i for i in range(200) if i % 7 == 0], 4, "x", deleted=True))
    _write(path, rows([i for i in range(200) if i % 11 == 0], 0, "x"), operation="delete")
    table = HoodieTable.open(path)
    assert sum(1 for s in table.view().latest_slices_all() if s.log_files) == 20

    tasks: list[object] = []

    class Recording(LocalEngine):
        def map(self, fn, items, description=""):
            tasks.extend(items)
            return super().map(fn, items, description)

    grouped = read_snapshot(table, engine=Recording(1))
    groups = [t for t in tasks if isinstance(t, slice_tasks.MergeGroup)]
    assert [len(g.tasks) for g in groups] == [4] * 5
    one_per_slice = read_snapshot(table, engine=LocalEngine(8))  # 20 slices on 8 workers: no groups
    assert grouped.sort_by("id").equals(one_per_slice.sort_by("id"))
    expected = {i: ("c" if i % 5 == 0 else "b" if i % 3 == 0 else "a") + str(i) for i in range(200) if i % 7 and i % 11}
    assert _names(grouped) == expected
    same_as_hudi_rs(grouped, hudi_rs(path).snapshot(), hudi_rs(path).schema(), "grouped merges")


def test_a_stale_update_after_a_compaction_in_the_pull(tmp_path, hudi_rs, same_as_hudi_rs) -> None:
    """The one incremental difference: the range holds a compaction and an update whose
    ordering value is smaller than the compacted version, which was committed before the
    range. hoodie pulls the update as written (as Apache Hudi does); hudi-rs merges it
    with the compacted base file, where the older version wins, and pulls nothing."""
    path = str(tmp_path / "stale_after_compaction")
    _write(path, [_row(1, 10, "stored"), _row(3, 10, "other")])  # both in partition "b"
    updated = _write(path, [_row(3, 20, "updated")])
    table = HoodieTable.open(path)
    instant, _ = schedule_compaction(table, CompactionSettings(), require_threshold=False)
    run_compaction(table.reload(), instant)
    stale = _write(path, [_row(1, 5, "stale")])
    assert _names(read_table(path)) == {1: "stored", 3: "updated"}
    pulled = read_incremental(HoodieTable.open(path), updated)
    assert [(r["id"], r["name"], r["_hoodie_commit_time"]) for r in pulled.to_pylist()] == [(1, "stale", stale)]
    theirs = hudi_rs(path).incremental(updated)
    assert theirs is not None and theirs.num_rows == 0  # hudi-rs: an empty batch
    same_as_hudi_rs(as_hudi_rs_pulls(path, pulled, updated, None), theirs, None, "pull after the compaction")
    _same_everywhere(path, hudi_rs, same_as_hudi_rs, "stale update after a compaction")
