"""hoodie reads every merge-on-read conformance table exactly as hudi-rs 0.5.0 does.

For each MOR table (v6 with Avro and Parquet log blocks, v6 with a rolled-back delta
commit, v9 with compaction, clustering and a rollback): the snapshot, read-optimized
mode, time travel as of every completed commit and between two, and incremental pulls
between consecutive commits and open-ended ones must equal hudi-rs's result: same
columns, types and nullability, same rows. On layout-2 tables (v9) incremental bounds
are also given as completion times, as hudi-rs and Hudi 1.x read them.

hudi-rs reads every MOR conformance table in every one of these modes, so nothing is
skipped here.
"""
from __future__ import annotations

import itertools

import pytest

from hoodie.query import (
    plan_snapshot,
    read_incremental,
    read_optimized,
    read_snapshot,
    read_table,
)
from hoodie.table.table import HoodieTable

pytestmark = pytest.mark.conformance(table_type="MERGE_ON_READ")

BEGINNING = "0"


def _open(conformance_table, conformance_case) -> tuple[str, HoodieTable]:
    path = str(conformance_table(conformance_case))
    return path, HoodieTable.open(path)


def _empty_schema(hudi_rs, path: str, table: HoodieTable):
    return hudi_rs(path).schema(meta_fields=table.config.populate_meta_fields)


def _commits(table: HoodieTable) -> list[str]:
    return [i.timestamp for i in table.timeline.completed_writes()]


def _pull_points(table: HoodieTable) -> list[list[str]]:
    """Instant sequences to pull between: requested times, plus completion times on v8+."""
    writes = table.timeline.completed_writes()
    points = [[BEGINNING, *[i.timestamp for i in writes]]]
    if table.timeline.layout_version >= 2:
        points.append([BEGINNING, *sorted(table.timeline.completion_time(i) for i in writes)])
    return points


def test_snapshot(conformance_case, conformance_table, hudi_rs, same_as_hudi_rs) -> None:
    path, table = _open(conformance_table, conformance_case)
    same_as_hudi_rs(read_table(path), hudi_rs(path).snapshot(), _empty_schema(hudi_rs, path, table), f"{conformance_case} snapshot")


def test_read_optimized(conformance_case, conformance_table, hudi_rs, same_as_hudi_rs) -> None:
    path, table = _open(conformance_table, conformance_case)
    mine = read_table(path, {"hoodie.datasource.query.type": "read_optimized"})
    same_as_hudi_rs(mine, hudi_rs(path).read_optimized(), _empty_schema(hudi_rs, path, table), f"{conformance_case} read_optimized")
    assert mine.equals(read_optimized(table))


def test_time_travel_each_commit_and_between(conformance_case, conformance_table, hudi_rs, same_as_hudi_rs) -> None:
    path, table = _open(conformance_table, conformance_case)
    rs = hudi_rs(path)
    empty = _empty_schema(hudi_rs, path, table)
    commits = _commits(table)
    for instant in commits:
        same_as_hudi_rs(read_table(path, {"as.of.instant": instant}), rs.snapshot(instant), empty, f"{conformance_case} as of {instant}")
    for older, newer in itertools.pairwise(commits):
        between = str(int(older) + 1)
        assert older < between < newer
        mine = read_table(path, {"as.of.instant": between})
        same_as_hudi_rs(mine, rs.snapshot(between), empty, f"{conformance_case} as of {between}")
        assert mine.equals(read_snapshot(table, as_of=older))


def test_incremental_consecutive_commits(conformance_case, conformance_table, hudi_rs, same_as_hudi_rs) -> None:
    path, table = _open(conformance_table, conformance_case)
    rs = hudi_rs(path)
    empty = _empty_schema(hudi_rs, path, table)
    for points in _pull_points(table):
        for begin, end in itertools.pairwise(points):
            mine = read_table(path, {
                "hoodie.datasource.query.type": "incremental",
                "hoodie.datasource.read.begin.instanttime": begin,
                "hoodie.datasource.read.end.instanttime": end,
            })
            same_as_hudi_rs(mine, rs.incremental(begin, end), empty, f"{conformance_case} incremental ({begin}, {end}]")


def test_incremental_open_ended(conformance_case, conformance_table, hudi_rs, same_as_hudi_rs) -> None:
    path, table = _open(conformance_table, conformance_case)
    rs = hudi_rs(path)
    empty = _empty_schema(hudi_rs, path, table)
    for points in _pull_points(table):
        for begin in points[:-1] or [BEGINNING]:
            same_as_hudi_rs(read_incremental(table, begin), rs.incremental(begin), empty, f"{conformance_case} incremental ({begin}, latest]")


def test_snapshots_merge_log_files(conformance_catalog, conformance_table) -> None:
    """The tests above must not pass by reading base files only: the v6 tables carry log
    files in their latest slices, and merging them changes the result."""
    merged = 0
    for case in (t for t in conformance_catalog if t.table_type == "MERGE_ON_READ"):
        _path, table = _open(conformance_table, case)
        if any(s.log_files for s in plan_snapshot(table)):
            merged += 1
            assert not read_snapshot(table).equals(read_optimized(table)), f"{case}: merging the logs changed nothing"
    assert merged >= 4


def test_rolled_back_delta_commit_is_dropped(conformance_table) -> None:
    """v6_nonpartitioned_rollback: log.1 holds the rolled-back upsert {1, 4} of
    20250126040823628's slice, log.2 the rollback COMMAND block, log.3 a later update of
    Bob. The rolled-back rows must not come back; the later update must."""
    path = str(conformance_table("sample_table/mor/parquet/v6_nonpartitioned_rollback"))
    rows = {r["id"]: r for r in read_table(path).to_pylist()}
    assert sorted(rows) == [1, 2, 3]  # id 4 was only in the rolled-back upsert
    assert {r["_hoodie_commit_time"] for r in rows.values()} <= {"20250126040823628", "20250126060846931"}
    assert rows[2]["_hoodie_commit_time"] == "20250126060846931"  # Bob, updated after the rollback
