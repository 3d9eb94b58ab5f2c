"""Merge-on-read slices built block by block: the merge rules on real files.

Each scenario puts one file group on disk (base file, log files, delta commits) with the
cases of one rule, and states the records a snapshot must return. Then every scenario
is read through hudi-rs too: snapshot, time travel as of and between every commit, and
incremental pulls, which must all agree with hoodie.
"""
from __future__ import annotations

import itertools
from collections.abc import Callable

import pyarrow as pa
import pytest

from hoodie.errors import FormatError
from hoodie.formats.conform import conform
from hoodie.formats.log import OrderingType, encode_block
from hoodie.formats.meta_columns import stored_layout
from hoodie.query import read_incremental, read_snapshot, read_table
from hoodie.query.reader import output_schema
from hoodie.table.slice_reader.for_compaction import merge_slice_for_compaction
from hoodie.table.slice_reader.instants import InstantFilter
from hoodie.table.slice_reader.merge import (
    merge_slice,
    read_slice,
)
from hoodie.table.slice_reader.merge_rules import MergeConfig

T = [f"2024010100{i:02d}00000" for i in range(1, 12)]
F = "11111111-0000-0000-0000-000000000000-0"
G = "22222222-0000-0000-0000-000000000000-0"
LONG, INT, STRING = OrderingType.LONG, OrderingType.INT, OrderingType.STRING
OVERWRITE_PAYLOAD = "org.apache.hudi.common.model.OverwriteWithLatestAvroPayload"


def rec(i: int, ts, name: str | None = None, **extra) -> dict:
    return {"id": i, "ts": ts, "name": name or f"n{i}", "part": "p", **extra}


def _base(t, rows, instant=T[0], file_id=F):
    stat = t.base_file(instant, "p", file_id, rows)
    t.deltacommit(instant, [stat])
    return stat.file_name


def _names(table: pa.Table) -> dict[int, str]:
    rows = table.to_pylist()
    assert len({r["id"] for r in rows}) == len(rows), f"a key came back twice: {rows}"
    return {r["id"]: r["name"] for r in rows}


# --- scenarios: (table, expected {id: name} of the latest snapshot) ------------------------------


def event_time(mor_table):
    t = mor_table()
    base = _base(t, [rec(i, 10) for i in range(1, 9)])
    block = t.data_block(T[1], [rec(1, 10, "tie"), rec(2, 9, "lower"), rec(3, 11, "higher"), rec(4, 10, "dup-a"),
                                rec(4, 10, "dup-b"), rec(9, 1, "new9"), rec(10, 1, "new10")], "p", F)
    t.deltacommit(T[1], [t.log("p", F, T[0], 1, [block], base_file=base)])
    deletes = [
        t.delete_block(T[2], [(5,)], "p"),  # Java's default ordering (IntWrapper 0): always deletes
        t.delete_block(T[2], [(6, 0, LONG), (7, 10, LONG), (8, 9, LONG), (9, 1, LONG)], "p"),
        t.delete_block(T[2], [(10, "x", STRING)], "p"),  # another class than the data: the delete wins
        t.delete_block(T[2], [(3, 12, INT), (2, 7, INT)], "p"),
    ]
    t.deltacommit(T[2], [t.log("p", F, T[0], 2, deletes, base_file=base)])
    # after a default-ordering delete, any later data record replaces it, and then meets
    # the base row on ordering again: key 5's lower re-insert brings the base version back
    again = t.data_block(T[3], [rec(5, 1, "re5"), rec(7, 3, "re7"), rec(1, None, "null-ts")], "p", F)
    t.deltacommit(T[3], [t.log("p", F, T[0], 3, [again], base_file=base)])
    return t, {1: "tie", 2: "n2", 4: "dup-b", 5: "n5", 6: "n6", 8: "n8"}


def rollback_and_pending(mor_table):
    t = mor_table()
    base = _base(t, [rec(i, 10) for i in range(1, 6)])
    t.deltacommit(T[1], [t.log("p", F, T[0], 1, [t.data_block(T[1], [rec(1, 20, "parquet")], "p", F, parquet=True)], base_file=base)])
    # a write that never completed: its block is not replayed
    t.deltacommit(T[2], [t.log("p", F, T[0], 2, [t.data_block(T[2], [rec(2, 20, "pending")], "p", F)], base_file=base)], state="inflight")
    t.deltacommit(T[3], [t.log("p", F, T[0], 3, [t.data_block(T[3], [rec(3, 20, "rolled-back")], "p", F)], base_file=base)])
    # a rollback command removes the blocks of its target read before it, whatever its own instant
    t.log("p", F, T[0], 4, [t.command_block(T[6], T[3])], token="1-0-1")
    t.log("p", F, T[0], 5, [t.data_block(T[3], [rec(4, 20, "after-command")], "p", F)])
    t.deltacommit(T[4], [t.log("p", F, T[0], 6, [t.data_block(T[4], [rec(5, 20, "t4")], "p", F)], base_file=base)])
    return t, {1: "parquet", 2: "n2", 3: "n3", 4: "after-command", 5: "t4"}


def corrupt_blocks(mor_table):
    t = mor_table()
    base = _base(t, [rec(i, 10) for i in range(1, 6)])
    torn = encode_block(t.data_block(T[1], [rec(2, 20, "torn")], "p", F))
    # a valid block then half a block (a crash mid-append)
    t.deltacommit(T[1], [t.log("p", F, T[0], 1, [t.data_block(T[1], [rec(1, 20, "before-tear")], "p", F)], tail=torn[: len(torn) // 2], base_file=base)])
    # a block cut short in the middle of a file, followed by a whole one
    cut = encode_block(t.data_block(T[2], [rec(3, 20, "cut")], "p", F))[:-10]
    t.deltacommit(T[2], [t.log("p", F, T[0], 2, [t.data_block(T[2], [rec(4, 20, "whole")], "p", F)], head=cut, base_file=base)])
    return t, {1: "before-tear", 2: "n2", 3: "n3", 4: "whole", 5: "n5"}


def delete_markers(mor_table):
    schema = pa.schema([("id", pa.int32()), ("ts", pa.int64()), ("name", pa.string()), ("part", pa.string()),
                        ("_hoodie_is_deleted", pa.bool_()), ("_hoodie_operation", pa.string()), ("op", pa.string())])
    t = mor_table(schema=schema, props={
        "hoodie.record.merge.property.hoodie.payload.delete.field": "op",
        "hoodie.record.merge.property.hoodie.payload.delete.marker": "DEL",
    })
    base = _base(t, [rec(i, 10) for i in range(1, 9)] + [rec(9, 10, _hoodie_is_deleted=True)])
    rows = [
        rec(1, 5, _hoodie_is_deleted=True),  # a flagged row is a delete with its own ordering: 5 < 10 loses
        rec(2, 10, _hoodie_is_deleted=True),
        rec(3, None, _hoodie_is_deleted=True),  # null ordering is the default: a commit-time delete wins
        rec(4, 20, _hoodie_is_deleted=True), rec(4, 15, "too-low"),  # the later, lower update loses to the delete
        rec(5, 20, _hoodie_operation="D"),
        rec(6, 20, "op-u", _hoodie_operation="U"),
        rec(7, 20, op="DEL"),
        rec(8, 20, "not-marked", op="KEEP"),
        rec(10, 1, _hoodie_is_deleted=True),  # a delete of a key the base never had
    ]
    t.deltacommit(T[1], [t.log("p", F, T[0], 1, [t.data_block(T[1], rows, "p", F)], base_file=base)])
    # base rows are never deletes themselves (9 stays)
    return t, {1: "n1", 6: "op-u", 8: "not-marked", 9: "n9"}


def commit_time_ordering(mor_table):
    t = mor_table(props={"hoodie.compaction.payload.class": OVERWRITE_PAYLOAD})
    base = _base(t, [rec(i, 10) for i in range(1, 5)])
    block = t.data_block(T[1], [rec(1, 1, "lower-wins"), rec(2, 99, "a"), rec(2, 1, "latest")], "p", F)
    deletes = t.delete_block(T[1], [(3, 1, LONG)], "p")
    t.deltacommit(T[1], [t.log("p", F, T[0], 1, [block, deletes], base_file=base)])
    return t, {1: "lower-wins", 2: "latest", 4: "n4"}


def schemas_and_groups(mor_table):
    """A log written with a wider schema (id int64, a new column) is cast to the read
    schema; a file group of log files only; the same key twice in one base file."""
    narrow = pa.schema([("id", pa.int32()), ("ts", pa.int64()), ("name", pa.string()), ("part", pa.string())])
    wide = pa.schema([("id", pa.int64()), ("ts", pa.int64()), ("name", pa.string()), ("part", pa.string()), ("extra", pa.float64())])
    t = mor_table(schema=narrow)
    base = _base(t, [rec(1, 10, "first"), rec(2, 10), rec(1, 12, "second"), rec(3, 10)])
    block = t.data_block(T[1], [rec(1, 11, "wide", extra=1.5), rec(9, 1, "wide-new", extra=2.5)], "p", F, schema=wide)
    stat = t.log("p", F, T[0], 1, [block, t.delete_block(T[1], [(3,)], "p")], base_file=base)
    t.commit(T[1], [stat], action="deltacommit", schema=wide)
    t.commit(T[2], [t.log("p", G, T[2], 1, [t.data_block(T[2], [rec(20, 1, "log-only")], "p", G, schema=wide)])],
             action="deltacommit", schema=wide)
    # only the first base row of a key meets the log version; the duplicate stays as written
    return t, {1: ["wide", "second"], 2: "n2", 9: "wide-new", 20: "log-only"}


def incremental_ranges(mor_table):
    t = mor_table()
    base = _base(t, [rec(i, 10) for i in range(1, 5)])
    t.deltacommit(T[1], [t.log("p", F, T[0], 1, [t.data_block(T[1], [rec(1, 20, "up1")], "p", F)], base_file=base)])
    t.deltacommit(T[2], [t.log("p", F, T[0], 2, [t.data_block(T[2], [rec(2, 5, "low2"), rec(3, 30, "up3")], "p", F)], base_file=base)])
    t.deltacommit(T[3], [t.log("p", F, T[0], 3, [t.delete_block(T[3], [(3,)], "p")], base_file=base)])
    return t, {1: "up1", 2: "n2", 4: "n4"}


def without_meta_fields(mor_table):
    """``hoodie.populate.meta.fields=false``: records merge on the record key field."""
    t = mor_table(populate_meta_fields=False)
    base = _base(t, [rec(i, 10) for i in range(1, 4)])
    block = t.data_block(T[1], [rec(1, 20, "up"), rec(2, 5, "low"), rec(4, 1, "new")], "p", F)
    t.deltacommit(T[1], [t.log("p", F, T[0], 1, [block, t.delete_block(T[1], [(3,)], "p")], base_file=base)])
    return t, {1: "up", 2: "n2", 4: "new"}


SCENARIOS: dict[str, Callable] = {
    f.__name__: f
    for f in (event_time, rollback_and_pending, corrupt_blocks, delete_markers, commit_time_ordering, schemas_and_groups,
              incremental_ranges, without_meta_fields)
}


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_snapshot_is_what_the_rules_say(mor_table, scenario) -> None:
    t, expected = SCENARIOS[scenario](mor_table)
    got = read_snapshot(t.open())
    names: dict[int, object] = {}
    for r in got.to_pylist():
        names[r["id"]] = [names[r["id"]], r["name"]] if r["id"] in names else r["name"]
    if isinstance(names.get(1), list):
        names[1] = sorted(names[1], reverse=True)
    assert names == expected


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_same_as_hudi_rs(mor_table, scenario, hudi_rs, same_as_hudi_rs) -> None:
    t, _ = SCENARIOS[scenario](mor_table)
    table = t.open()
    rs = hudi_rs(t.path)
    empty = rs.schema(meta_fields=table.config.populate_meta_fields)
    commits = [i.timestamp for i in table.timeline.completed_writes()]
    assert commits == rs.commit_timestamps()
    same_as_hudi_rs(read_snapshot(table), rs.snapshot(), empty, f"{scenario} snapshot")
    for instant in commits + [str(int(c) + 1) for c in commits]:
        # hoodie reads time travel with the schema of the as-of instant (as Spark does),
        # hudi-rs with the latest one; the rows must agree all the same
        mine = conform(read_table(t.path, {"as.of.instant": instant}), empty)
        same_as_hudi_rs(mine, rs.snapshot(instant), empty, f"{scenario} as of {instant}")
    points = ["0", *commits]
    for begin, end in itertools.pairwise(points):
        same_as_hudi_rs(read_incremental(table, begin, end), rs.incremental(begin, end), empty, f"{scenario} ({begin}, {end}]")
    for begin in points[:-1]:
        same_as_hudi_rs(read_incremental(table, begin), rs.incremental(begin), empty, f"{scenario} ({begin}, latest]")


def test_time_travel_replays_only_blocks_up_to_the_instant(mor_table) -> None:
    t, _ = rollback_and_pending(mor_table)
    table = t.open()
    assert _names(read_snapshot(table, T[0])) == {i: f"n{i}" for i in range(1, 6)}
    assert _names(read_snapshot(table, T[1]))[1] == "parquet"
    # T[2] never completed; T[3]'s first block is rolled back by a command written at T[6] > T[3]
    assert _names(read_snapshot(table, T[3])) == {1: "parquet", 2: "n2", 3: "n3", 4: "after-command", 5: "n5"}


def test_completing_a_pending_write_makes_its_block_count(mor_table) -> None:
    t, _ = rollback_and_pending(mor_table)
    assert _names(read_snapshot(t.open()))[2] == "n2"
    t._write(f"{T[2]}.deltacommit", t.metadata([]))  # the write completes after all
    assert _names(read_snapshot(t.open()))[2] == "pending"


def test_incremental_merges_only_the_range(mor_table) -> None:
    """hudi-rs's incremental merge: a base file not newer than ``begin`` is not read, so
    the range's log records merge among themselves; a delete in the range removes the
    key's in-range versions."""
    t, _ = incremental_ranges(mor_table)
    table = t.open()
    # (T1, T2]: key 2's update (ts 5) loses to the base row in a snapshot, not here
    assert _names(read_incremental(table, T[1], T[2])) == {2: "low2", 3: "up3"}
    assert _names(read_incremental(table, T[0], T[3])) == {1: "up1", 2: "low2"}
    # from the beginning the base file is merged in, and the base version of 2 wins
    assert _names(read_incremental(table, "0", T[3])) == {1: "up1", 2: "n2", 4: "n4"}


def test_read_slice_counts_and_projection(mor_table) -> None:
    t, _ = event_time(mor_table)
    table = t.open()
    [s] = t.slices()
    schema = output_schema(table)
    merged = merge_slice(table.storage, s, schema, MergeConfig.for_table(table.config), InstantFilter.of_timeline(table.timeline))
    assert merged.stats.log_records == 7 + 1 + 4 + 1 + 2 + 3
    assert merged.stats.scan.replayed_blocks == 6 and merged.stats.scan.log_files == 3
    assert (merged.stats.updated, merged.stats.deleted, merged.stats.inserted) == (2, 2, 0)
    assert merged.records.num_rows == 6
    only = read_slice(table.storage, s, schema, MergeConfig.for_table(table.config), {T[0], T[1]}, columns=["name", "id"])
    assert only.column_names == ["name", "id"]
    assert _names(only.select(["id", "name"])) == {1: "tie", 2: "n2", 3: "higher", 4: "dup-b", 5: "n5", 6: "n6", 7: "n7", 8: "n8", 9: "new9", 10: "new10"}


def test_a_block_without_instant_time_is_refused(mor_table) -> None:
    t = mor_table()
    base = _base(t, [rec(1, 10)])
    block = t.data_block(T[1], [rec(1, 20)], "p", F)
    block.header.pop(0)  # INSTANT_TIME
    t.deltacommit(T[1], [t.log("p", F, T[0], 1, [block], base_file=base)])
    with pytest.raises(FormatError, match="INSTANT_TIME"):
        read_snapshot(t.open())


def test_merge_for_compaction_keeps_meta_columns_as_stored(mor_table) -> None:
    from types import SimpleNamespace

    t = mor_table()
    base = _base(t, [rec(i, 10) for i in range(1, 5)])
    t.deltacommit(T[1], [t.log("p", F, T[0], 1, [t.data_block(T[1], [rec(1, 20, "up"), rec(9, 1, "new")], "p", F),
                                                  t.delete_block(T[1], [(2,)], "p")], base_file=base)])
    t.deltacommit(T[2], [t.log("p", F, T[0], 2, [t.data_block(T[2], [rec(3, 20, "pending")], "p", F)], base_file=base)], state="inflight")
    [s] = t.slices()
    op = SimpleNamespace(partition_path="p", file_id=F, base_instant=T[0], base_file=s.base_file.file_name,
                         log_files=tuple(lf.file_name for lf in s.log_files))
    table = t.open()
    merged = merge_slice_for_compaction(table.storage, t.path, op, table.data_schema(), "ts", T[3])
    records, counters = merged.records, merged.stats.counters()
    assert records.schema == stored_layout(table.data_schema())
    assert all(records.schema.field(m).nullable for m in records.schema.names[:5])
    got = {r["id"]: (r["_hoodie_commit_time"], r["_hoodie_commit_seqno"], r["_hoodie_file_name"], r["name"]) for r in records.to_pylist()}
    assert got == {
        1: (T[1], f"{T[1]}_0_0", F, "up"),  # the log version, with the log's meta values
        3: (T[0], f"{T[0]}_0_2", s.base_file.file_name, "n3"),  # the pending write does not count
        4: (T[0], f"{T[0]}_0_3", s.base_file.file_name, "n4"),
        9: (T[1], f"{T[1]}_0_1", F, "new"),
    }
    assert merged.base_footer is None  # this hand-made base file has no Hudi footer (see test_compaction)
    assert {k: counters[k] for k in ("updated", "deleted", "inserted", "log_records", "log_files", "log_blocks")} == {
        "updated": 1, "deleted": 1, "inserted": 1, "log_records": 3, "log_files": 2, "log_blocks": 3,
    }


def test_bytes_before_the_first_block_are_skipped(mor_table, hudi_rs) -> None:
    """Leading bytes that are not a block are a corrupt block to hoodie (the blocks after
    them count); hudi-rs 0.5.0 refuses the whole read ("Invalid magic")."""
    t = mor_table()
    base = _base(t, [rec(1, 10), rec(2, 10)])
    t.deltacommit(T[1], [t.log("p", F, T[0], 1, [t.data_block(T[1], [rec(1, 20, "after-garbage")], "p", F)], head=b"garbage!", base_file=base)])
    assert _names(read_snapshot(t.open())) == {1: "after-garbage", 2: "n2"}
    with pytest.raises(Exception, match="Invalid magic"):
        hudi_rs(t.path).snapshot()
