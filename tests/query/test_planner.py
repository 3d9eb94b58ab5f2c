"""Planner unit tests on small hand-built tables: which slices a query reads."""
from __future__ import annotations

import pytest

from hoodie.errors import InstantNotFoundError
from hoodie.query import (
    plan_incremental,
    plan_snapshot,
    read_incremental,
    read_snapshot,
)
from hoodie.query.planner import COMPLETION_TIME, INSTANT_TIME

T1, T2, T3, T4, T5 = (f"2024010100000{i}000" for i in range(1, 6))
F1, F2, F3 = "11111111-0000-0000-0000-000000000000-0", "22222222-0000-0000-0000-000000000000-0", "33333333-0000-0000-0000-000000000000-0"


def _files(slices) -> list[tuple[str, str, str]]:
    return [(s.partition_path, s.file_id, s.base_instant) for s in slices]


def _ids(table) -> list[int]:
    return sorted(table.column("id").to_pylist())


def _two_commits(synthetic):
    """T1 inserts 1, 2 in p1 (F1) and 3 in p2 (F2); T2 updates 2 in F1 (COW rewrite)."""
    t = synthetic()
    a = t.base_file(T1, "p1", F1, [{"id": 1, "name": "a", "part": "p1"}, {"id": 2, "name": "b", "part": "p1"}])
    b = t.base_file(T1, "p2", F2, [{"id": 3, "name": "c", "part": "p2"}])
    t.commit(T1, [a, b])
    c = t.base_file(T2, "p1", F1, [{"id": 1, "name": "a", "part": "p1"}, {"id": 2, "name": "B", "part": "p1"}], commit_times={1: T1})
    t.commit(T2, [c])
    return t


def test_latest_slice_per_file_group(synthetic) -> None:
    t = _two_commits(synthetic)
    assert _files(plan_snapshot(t.open())) == [("p1", F1, T2), ("p2", F2, T1)]
    data = read_snapshot(t.open())
    assert sorted(zip(data.column("id").to_pylist(), data.column("name").to_pylist())) == [(1, "a"), (2, "B"), (3, "c")]


def test_time_travel_to_a_commit_between_commits_and_before_the_first(synthetic) -> None:
    t = _two_commits(synthetic)
    table = t.open()
    assert _files(plan_snapshot(table, T1)) == [("p1", F1, T1), ("p2", F2, T1)]
    between = str(int(T1) + 500)
    assert _files(plan_snapshot(table, between)) == _files(plan_snapshot(table, T1))
    assert read_snapshot(table, between).equals(read_snapshot(table, T1))
    assert plan_snapshot(table, "20231231000000000") == []
    before = read_snapshot(table, "20231231000000000")
    assert before.num_rows == 0 and before.schema == read_snapshot(table).schema


def test_partition_filter_prunes_partitions(synthetic) -> None:
    t = _two_commits(synthetic)
    assert _files(plan_snapshot(t.open(), partition_filter=lambda p: p == "p2")) == [("p2", F2, T1)]
    assert _ids(read_snapshot(t.open(), partition_filter=lambda p: p != "p2")) == [1, 2]


@pytest.mark.parametrize("state", ["requested", "inflight"])
def test_files_of_a_pending_instant_are_invisible(synthetic, state: str) -> None:
    t = _two_commits(synthetic)
    pending = t.base_file(T3, "p2", F2, [{"id": 3, "name": "pending", "part": "p2"}])
    new_group = t.base_file(T3, "p3", F3, [{"id": 9, "name": "pending", "part": "p3"}])
    t.commit(T3, [pending, new_group], state=state)
    assert _files(plan_snapshot(t.open())) == [("p1", F1, T2), ("p2", F2, T1)]
    assert "pending" not in read_snapshot(t.open()).column("name").to_pylist()


def test_files_of_a_failed_write_between_commits_are_invisible(synthetic) -> None:
    """A write that died (left inflight, or rolled back: no instant at all) between two
    commits must not show, although a later commit completed."""
    t = _two_commits(synthetic)
    t.base_file(T3, "p2", F2, [{"id": 3, "name": "failed", "part": "p2"}])  # no instant left at all
    inflight = t.base_file(T4, "p3", F3, [{"id": 9, "name": "failed", "part": "p3"}])
    t.commit(T4, [inflight], state="inflight")
    done = t.base_file(T5, "p1", F1, [{"id": 1, "name": "a", "part": "p1"}], commit_times={1: T1})
    t.commit(T5, [done])
    assert _files(plan_snapshot(t.open())) == [("p1", F1, T5), ("p2", F2, T1)]


def test_files_older_than_the_active_timeline_count_as_archived_commits(synthetic) -> None:
    t = _two_commits(synthetic)
    t.base_file("20230101000000000", "p3", F3, [{"id": 7, "name": "old", "part": "p3"}])
    assert ("p3", F3, "20230101000000000") in _files(plan_snapshot(t.open()))
    assert ("p3", F3, "20230101000000000") not in _files(plan_snapshot(t.open(), "20221231000000000"))


def test_replacecommit_hides_replaced_file_groups(synthetic) -> None:
    t = _two_commits(synthetic)
    new = t.base_file(T3, "p1", F3, [{"id": 10, "name": "x", "part": "p1"}])
    t.commit(T3, [new], action="replacecommit", replaced={"p1": [F1]})
    assert _files(plan_snapshot(t.open())) == [("p1", F3, T3), ("p2", F2, T1)]
    assert _ids(read_snapshot(t.open())) == [3, 10]
    # before the replace, the old group is alive
    assert _files(plan_snapshot(t.open(), T2)) == [("p1", F1, T2), ("p2", F2, T1)]


def test_pending_replacecommit_hides_nothing(synthetic) -> None:
    t = _two_commits(synthetic)
    new = t.base_file(T3, "p1", F3, [{"id": 10, "name": "x", "part": "p1"}])
    t.commit(T3, [new], action="replacecommit", state="inflight", replaced={"p1": [F1]})
    assert _files(plan_snapshot(t.open())) == [("p1", F1, T2), ("p2", F2, T1)]


# --- incremental --------------------------------------------------------------------------------


def test_incremental_plan_reads_groups_touched_in_range(synthetic) -> None:
    t = _two_commits(synthetic)
    plan = plan_incremental(t.open(), T1, T2)
    assert plan.time_basis == INSTANT_TIME
    assert [i.timestamp for i in plan.instants] == [T2]
    assert _files(plan.slices) == [("p1", F1, T2)]
    assert plan.keeps_commit_time(T2) and not plan.keeps_commit_time(T1)
    rows = read_incremental(t.open(), T1, T2)
    assert rows.column("id").to_pylist() == [2]  # id 1 was copied over unchanged: not pulled


def test_incremental_keeps_the_latest_version_within_the_range(synthetic) -> None:
    t = _two_commits(synthetic)
    d = t.base_file(T3, "p1", F1, [{"id": 1, "name": "a", "part": "p1"}, {"id": 2, "name": "BB", "part": "p1"}], commit_times={1: T1})
    t.commit(T3, [d])
    pulled = read_incremental(t.open(), "0")
    assert sorted(zip(pulled.column("id").to_pylist(), pulled.column("name").to_pylist())) == [(1, "a"), (2, "BB"), (3, "c")]
    # the slice is read as of `end`: the T2 version of F1, not the later T3 one
    mid = read_incremental(t.open(), T1, T2)
    assert mid.column("name").to_pylist() == ["B"]
    assert mid.column("_hoodie_file_name").to_pylist()[0].endswith(f"_{T2}.parquet")


def test_incremental_empty_range_and_default_end(synthetic) -> None:
    t = _two_commits(synthetic)
    table = t.open()
    assert plan_incremental(table, T2).is_empty
    empty = read_incremental(table, T2)
    assert empty.num_rows == 0 and empty.schema == read_snapshot(table).schema
    assert plan_incremental(table, T1).end == T2


def test_incremental_skips_replaced_groups_and_reads_the_replacement(synthetic) -> None:
    t = _two_commits(synthetic)
    new = t.base_file(T3, "p1", F3, [{"id": 10, "name": "x", "part": "p1"}])
    t.commit(T3, [new], action="replacecommit", replaced={"p1": [F1]})
    assert _files(plan_incremental(t.open(), "0").slices) == [("p1", F3, T3), ("p2", F2, T1)]
    assert _ids(read_incremental(t.open(), T1)) == [10]


def test_incremental_from_before_an_archived_timeline_is_refused(synthetic) -> None:
    t = _two_commits(synthetic)
    assert _ids(read_incremental(t.open(), "0")) == [1, 2, 3]  # nothing archived: "from the start"
    t.archive_something()
    with pytest.raises(InstantNotFoundError, match=r"20230101000000000.*archived"):
        plan_incremental(t.open(), "20230101000000000")
    assert [i.timestamp for i in plan_incremental(t.open(), T1).instants] == [T2]


def test_incremental_on_layout_2_uses_completion_times(synthetic) -> None:
    """A (requested T1) completes at T4 after B (requested T2) completed at T3.

    A pull over (T3, T5] holds A alone: its rows carry commit time T1, older than the
    range's start, and must still be pulled. The range (T2, T3] holds only B, and reads
    the file groups as they stood when B completed (A's files not yet there)."""
    t = synthetic(layout=2)
    a = t.base_file(T1, "p1", F1, [{"id": 1, "name": "a", "part": "p1"}])
    b = t.base_file(T2, "p2", F2, [{"id": 2, "name": "b", "part": "p2"}])
    t.commit(T1, [a], completed_at=T4)
    t.commit(T2, [b], completed_at=T3)
    table = t.open()
    late = plan_incremental(table, T3, T5)
    assert late.time_basis == COMPLETION_TIME
    assert [i.timestamp for i in late.instants] == [T1]
    assert _ids(read_incremental(table, T3, T5)) == [1]
    early = plan_incremental(table, T2, T3)
    assert [i.timestamp for i in early.instants] == [T2]
    assert _files(early.slices) == [("p2", F2, T2)]
    assert _ids(read_incremental(table, T2, T3)) == [2]
    assert _ids(read_incremental(table, "0")) == [1, 2]
    # time travel compares requested times, as hudi-rs does
    assert _ids(read_snapshot(table, T1)) == [1]


def test_incremental_on_layout_2_reads_slices_completed_by_end(synthetic) -> None:
    t = synthetic(layout=2)
    a = t.base_file(T1, "p1", F1, [{"id": 1, "name": "a", "part": "p1"}])
    t.commit(T1, [a], completed_at=T2)
    b = t.base_file(T3, "p1", F1, [{"id": 1, "name": "A", "part": "p1"}])
    t.commit(T3, [b], completed_at=T5)
    plan = plan_incremental(t.open(), "0", T4)
    assert _files(plan.slices) == [("p1", F1, T1)]
    assert read_incremental(t.open(), "0", T4).column("name").to_pylist() == ["a"]
    assert read_incremental(t.open(), T4).column("name").to_pylist() == ["A"]


def test_incremental_without_meta_fields_returns_whole_touched_groups(synthetic) -> None:
    t = synthetic(populate_meta_fields=False)
    a = t.base_file(T1, "p1", F1, [{"id": 1, "name": "a", "part": "p1"}])
    t.commit(T1, [a])
    b = t.base_file(T2, "p1", F1, [{"id": 1, "name": "a", "part": "p1"}, {"id": 2, "name": "b", "part": "p1"}])
    t.commit(T2, [b])
    plan = plan_incremental(t.open(), T1)
    assert not plan.filter_rows
    pulled = read_incremental(t.open(), T1)
    assert pulled.schema.names == ["id", "name", "part"]
    assert _ids(pulled) == [1, 2]


def test_logs_named_after_a_pending_compaction_join_the_slice_it_reads(mor_table) -> None:
    """While a compaction at T is requested, writers name new logs after T; until T's base
    file is committed those logs extend the previous slice (Java's merged file slice)."""
    t = mor_table()
    a = t.base_file(T1, "p1", F1, [{"id": 1, "ts": 1, "name": "a", "part": "p1"}])
    t.deltacommit(T1, [a])
    t.deltacommit(T2, [t.log("p1", F1, T1, 1, [t.data_block(T2, [{"id": 1, "ts": 2, "name": "b", "part": "p1"}], "p1", F1)])])
    t._write(f"{T3}.compaction.requested")
    t.deltacommit(T4, [t.log("p1", F1, T3, 1, [t.data_block(T4, [{"id": 1, "ts": 3, "name": "c", "part": "p1"}], "p1", F1)])])
    [s] = plan_snapshot(t.open())
    assert s.base_instant == T1 and [lf.name.instant for lf in s.log_files] == [T1, T3]
    assert read_snapshot(t.open()).column("name").to_pylist() == ["c"]
    assert read_snapshot(t.open(), T2).column("name").to_pylist() == ["b"]
    # the compaction completes: its base file opens slice T3, which the logs named T3 now join
    done = t.base_file(T3, "p1", F1, [{"id": 1, "ts": 2, "name": "b", "part": "p1"}], commit_times={1: T2})
    t.commit(T3, [done])
    [s] = plan_snapshot(t.open())
    assert s.base_instant == T3 and [lf.name.instant for lf in s.log_files] == [T3]
    assert read_snapshot(t.open()).column("name").to_pylist() == ["c"]
