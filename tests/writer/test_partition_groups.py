"""Writes spanning many partitions go through partition groups (each task dedupes, tags,
plans and writes whole partitions) and make the same table as the whole-batch pipeline:
the same rows and the same inserts and deletes in every commit, for
copy-on-write and merge-on-read, through upserts with in-batch duplicates and stale
updates, deletes of present and missing keys, and inserts dropping duplicates. A write
failing in a group task is rolled back.

Which small file takes a partition's inserts may differ between two tables written
alike: the candidates' sizes differ by a few bytes (file names and sequence numbers
carry task numbers), so files and records rewritten are not compared, nor updates (a
merge-on-read write counts the stale updates it logs, but not those a merge into a small
file drops)."""
from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest

import hoodie
from hoodie.engine.local import LocalEngine
from hoodie.errors import HoodieError
from hoodie.services.for_writers import WRITER_SERVICES
from hoodie.table.table import HoodieTable
from hoodie.writer import client as client_module
from hoodie.writer.client import WriteClient
from hoodie.writer.partition_groups import partition_groups

CITIES = [f"c{i:02d}" for i in range(12)]
OPTS = {
    "hoodie.table.name": "groups",
    "hoodie.datasource.write.recordkey.field": "uuid",
    "hoodie.datasource.write.partitionpath.field": "city",
    "hoodie.datasource.write.precombine.field": "ts",
    # several file groups per partition, then small-file packing
    "hoodie.copyonwrite.insert.auto.split": "false",
    "hoodie.copyonwrite.insert.split.size": "4",
}
VOLATILE = ("_hoodie_commit_time", "_hoodie_commit_seqno", "_hoodie_file_name")


def _batch(records: list[tuple[str, str, int, float]]) -> pa.Table:
    uuid, city, ts, fare = zip(*records)
    return pa.table({"uuid": list(uuid), "city": list(city), "ts": pa.array(ts, pa.int64()), "fare": list(fare)})


def _steps() -> list[tuple[str, dict[str, str], pa.Table]]:
    first = [(f"k{i:03d}", CITIES[i % 12], 1, float(i)) for i in range(96)]
    upsert = (
        [(f"k{i:03d}", CITIES[i % 12], 2, 100.0 + i) for i in range(0, 96, 3)]  # updates everywhere
        + [(f"k{i:03d}", CITIES[i % 12], 0, -1.0) for i in range(1, 96, 7)]  # stale: the stored record wins
        + [(f"n{i:03d}", CITIES[i % 12], 1, 200.0 + i) for i in range(30)]  # inserts
        + [("k005", "c05", 5, 1.0), ("k005", "c05", 5, 2.0), ("n000", "c00", 9, 3.0)]  # duplicates in the batch
    )
    delete = [(f"k{i:03d}", CITIES[i % 12], 9, 0.0) for i in range(2, 96, 5)] + [("missing", "c03", 9, 0.0)]
    drop_dups = [(f"k{i:03d}", CITIES[i % 12], 7, 0.0) for i in range(0, 24)] + [(f"d{i:03d}", CITIES[i % 12], 1, 1.0) for i in range(24)]
    return [
        ("bulk_insert", {}, _batch(first)),
        ("upsert", {}, _batch(upsert)),
        ("delete", {}, _batch(delete)),
        ("insert", {"hoodie.datasource.write.insert.drop.duplicates": "true"}, _batch(drop_dups)),
        ("upsert", {}, _batch(upsert[::2])),
    ]


def _rows(t: pa.Table) -> list[tuple]:
    keep = [c for c in t.column_names if c not in VOLATILE]
    return sorted(tuple(r.values()) for r in t.select(keep).to_pylist())


def _commit_counts(path: str) -> list[tuple[str, dict[str, int]]]:
    table = HoodieTable.open(path)
    counted = ("inserts", "deletes")
    return [(i.action, {k: v for k, v in table.commit_metadata(i).totals().items() if k in counted}) for i in table.timeline.completed_writes()]


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_grouped_write_makes_the_table_the_whole_batch_pipeline_makes(tmp_path: Path, table_type: str, hudi_rs_read, monkeypatch: pytest.MonkeyPatch) -> None:
    grouped_tasks: list[int] = []
    real = client_module.write_partition_group

    def counting(group, ctx, **kw):  # type: ignore[no-untyped-def]
        grouped_tasks.append(len(group.partitions))
        return real(group, ctx, **kw)

    monkeypatch.setattr(client_module, "write_partition_group", counting)
    whole, grouped = str(tmp_path / "whole"), str(tmp_path / "grouped")
    for step, (operation, extra, batch) in enumerate(_steps()):
        opts = {**OPTS, **extra, "hoodie.datasource.write.table.type": table_type, "hoodie.datasource.write.operation": operation}
        # 12 partitions: fewer than two a worker for 8 workers, enough for 2
        before = len(grouped_tasks)
        WriteClient(whole, opts, services=WRITER_SERVICES, engine=LocalEngine(8)).write(batch)
        assert len(grouped_tasks) == before, "8 workers: the whole-batch pipeline"
        WriteClient(grouped, opts, services=WRITER_SERVICES, engine=LocalEngine(2)).write(batch)
        if operation != "bulk_insert":
            assert sum(grouped_tasks[before:]) == len({r["city"] for r in batch.to_pylist()}), f"step {step}: every partition in one group"
        assert _rows(hoodie.read(grouped)) == _rows(hoodie.read(whole)), f"step {step}: {operation}"
        seqnos = hoodie.read(grouped).column("_hoodie_commit_seqno").to_pylist()
        assert len(set(seqnos)) == len(seqnos), f"step {step}: sequence numbers repeat"
    assert _commit_counts(grouped) == _commit_counts(whole)
    assert _rows(hudi_rs_read(grouped)) == _rows(hoodie.read(whole))


class _SeparateMemoryEngine(LocalEngine):
    """Threads posing as an engine whose tasks run elsewhere: each group is sent its own
    records, not the whole batch."""

    shares_memory = False


def test_groups_sent_their_own_records_write_what_groups_sharing_the_batch_write(tmp_path: Path) -> None:
    shared, sent = str(tmp_path / "shared"), str(tmp_path / "sent")
    for step, (operation, extra, batch) in enumerate(_steps()):
        opts = {**OPTS, **extra, "hoodie.datasource.write.operation": operation}
        WriteClient(shared, opts, services=WRITER_SERVICES, engine=LocalEngine(2)).write(batch)
        WriteClient(sent, opts, services=WRITER_SERVICES, engine=_SeparateMemoryEngine(2)).write(batch)
        assert _rows(hoodie.read(sent)) == _rows(hoodie.read(shared)), f"step {step}: {operation}"
    assert _commit_counts(sent) == _commit_counts(shared)


def test_partitions_are_dealt_by_records() -> None:
    import numpy as np

    sizes = {"a": 50, "b": 10, "c": 30, "d": 25, "e": 5}
    start, rows = 0, {}
    for p, n in sizes.items():
        rows[p] = np.arange(start, start + n)
        start += n
    groups = partition_groups(rows, 2)
    assert sorted(p for g in groups for p in g.partitions) == sorted(sizes)
    loads = sorted(sum(sizes[p] for p in g.partitions) for g in groups)
    assert loads == [60, 60]  # a+b / c+d+e
    for g in groups:
        assert list(g.rows) == sorted(np.concatenate([rows[p] for p in g.partitions]).tolist())  # batch order
    assert len(partition_groups(rows, 8)) == 5  # never more groups than partitions


def test_grouped_write_failing_in_a_task_is_rolled_back(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = str(tmp_path / "t")
    first = _steps()[0][2]
    hoodie.write(first, path, {**OPTS, "hoodie.datasource.write.operation": "bulk_insert"})
    before = _rows(hoodie.read(path))
    from hoodie.writer import partition_groups as groups_module

    real = groups_module.run_bucket_group
    calls = []

    def failing(group, ctx, wctx):  # type: ignore[no-untyped-def]
        calls.append(1)
        if len(calls) == 2:  # the first group's files are written, then a group fails
            raise HoodieError("disk full")
        return real(group, ctx, wctx)

    monkeypatch.setattr(groups_module, "run_bucket_group", failing)
    with pytest.raises(HoodieError, match="disk full"):
        WriteClient(path, {**OPTS, "hoodie.datasource.write.operation": "upsert"}, services=WRITER_SERVICES, engine=LocalEngine(1)).write(_steps()[1][2])
    table = HoodieTable.open(path)
    assert [i.state for i in table.timeline.instants if i.action == "commit"] == ["COMPLETED"]
    assert _rows(hoodie.read(path)) == before
    monkeypatch.undo()
    hoodie.write(_steps()[1][2], path, {**OPTS, "hoodie.datasource.write.operation": "upsert"})  # the next write succeeds
    assert len(_rows(hoodie.read(path))) == 96 + 30
