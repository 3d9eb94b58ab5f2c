"""hoodie reads every copy-on-write conformance table exactly as hudi-rs does.

For each COW table (v6, v8, v9): the snapshot, time travel as of every completed commit
(and before the first, and between two), and incremental pulls between every pair of
consecutive commits (and from the beginning, and open-ended) must equal hudi-rs's result:
same columns in the same order, same Arrow types and nullability, same rows.

On layout-2 tables (v8+) hudi-rs and Hudi 1.x read incremental bounds as completion
times, so the pulls are checked both at the requested instants and at the completion
times; time travel uses requested instant times on every version.
"""
from __future__ import annotations

import pytest

from hoodie.query import read_incremental, read_snapshot, read_table
from hoodie.table.table import HoodieTable

pytestmark = pytest.mark.conformance(table_type="COPY_ON_WRITE")

BEGINNING = "0"


def _open(conformance_table, conformance_case) -> tuple[str, HoodieTable]:
    path = str(conformance_table(conformance_case))
    return path, HoodieTable.open(path)


def _empty_schema(hudi_rs, path: str, table: HoodieTable):
    return hudi_rs(path).schema(meta_fields=table.config.populate_meta_fields)


def _commits(table: HoodieTable) -> list[str]:
    return [i.timestamp for i in table.timeline.completed_writes()]


def _iso(instant: str) -> str:
    return f"{instant[0:4]}-{instant[4:6]}-{instant[6:8]} {instant[8:10]}:{instant[10:12]}:{instant[12:14]}.{instant[14:17]}"


def test_snapshot(conformance_case, conformance_table, hudi_rs, same_as_hudi_rs) -> None:
    path, table = _open(conformance_table, conformance_case)
    mine = read_table(path)
    same_as_hudi_rs(mine, hudi_rs(path).snapshot(), _empty_schema(hudi_rs, path, table), f"{conformance_case} snapshot")


def test_commits_seen_alike(conformance_case, conformance_table, hudi_rs) -> None:
    path, table = _open(conformance_table, conformance_case)
    assert _commits(table) == hudi_rs(path).commit_timestamps()


def test_time_travel_each_commit(conformance_case, conformance_table, hudi_rs, same_as_hudi_rs) -> None:
    path, table = _open(conformance_table, conformance_case)
    rs = hudi_rs(path)
    empty = _empty_schema(hudi_rs, path, table)
    for instant in _commits(table):
        mine = read_table(path, {"as.of.instant": instant})
        same_as_hudi_rs(mine, rs.snapshot(instant), empty, f"{conformance_case} as of {instant}")
        # the ISO form names the same instant
        iso = read_table(path, {"as.of.instant": _iso(instant)})
        assert iso.equals(mine), f"as of {_iso(instant)} differs from as of {instant}"


def test_time_travel_before_first_and_between_commits(conformance_case, conformance_table, hudi_rs, same_as_hudi_rs) -> None:
    path, table = _open(conformance_table, conformance_case)
    rs = hudi_rs(path)
    empty = _empty_schema(hudi_rs, path, table)
    commits = _commits(table)
    before = "20000101000000000"
    mine = read_table(path, {"as.of.instant": before})
    assert mine.num_rows == 0
    same_as_hudi_rs(mine, rs.snapshot(before), empty, f"{conformance_case} as of {before}")
    for older, newer in zip(commits, commits[1:]):
        between = str(int(older) + 1)
        assert older < between < newer
        mine = read_table(path, {"as.of.instant": between})
        same_as_hudi_rs(mine, rs.snapshot(between), empty, f"{conformance_case} as of {between}")
        assert mine.equals(read_snapshot(table, as_of=older)), f"as of {between} must be the state as of {older}"


def _pull_points(table: HoodieTable) -> list[list[str]]:
    """Instant sequences to pull between: requested times, plus completion times on v8+."""
    writes = table.timeline.completed_writes()
    points = [[BEGINNING, *[i.timestamp for i in writes]]]
    if table.timeline.layout_version >= 2:
        points.append([BEGINNING, *sorted(table.timeline.completion_time(i) for i in writes)])
    return points


def test_incremental_consecutive_commits(conformance_case, conformance_table, hudi_rs, same_as_hudi_rs) -> None:
    path, table = _open(conformance_table, conformance_case)
    rs = hudi_rs(path)
    empty = _empty_schema(hudi_rs, path, table)
    for points in _pull_points(table):
        for begin, end in zip(points, points[1:]):
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
            mine = read_incremental(table, begin)
            same_as_hudi_rs(mine, rs.incremental(begin), empty, f"{conformance_case} incremental ({begin}, latest]")


def test_incremental_from_beginning_is_the_snapshot(conformance_case, conformance_table) -> None:
    """Every live record was committed after "the beginning": a full pull is the snapshot."""
    path, table = _open(conformance_table, conformance_case)
    pulled = read_incremental(table, BEGINNING)
    snapshot = read_snapshot(table)
    assert sorted(pulled.to_pylist(), key=repr) == sorted(snapshot.to_pylist(), key=repr)


def test_projection(conformance_case, conformance_table) -> None:
    path, table = _open(conformance_table, conformance_case)
    full = read_snapshot(table)
    if not full.num_columns:
        pytest.skip("table has no schema")
    wanted = [full.schema.names[-1], full.schema.names[0]]
    projected = read_snapshot(table, columns=wanted)
    assert projected.schema.names == wanted
    assert sorted(projected.to_pylist(), key=repr) == sorted(full.select(wanted).to_pylist(), key=repr)


def test_read_optimized_equals_snapshot_on_cow(conformance_case, conformance_table) -> None:
    path, _ = _open(conformance_table, conformance_case)
    assert read_table(path, {"hoodie.datasource.query.type": "read_optimized"}).equals(read_table(path))


def test_conformance_tables_cover_every_version(conformance_catalog) -> None:
    """The parametrized tests above must not pass by running on nothing."""
    versions = {t.table_version for t in conformance_catalog if t.table_type == "COPY_ON_WRITE"}
    assert versions >= {6, 8, 9}, f"COW conformance tables found for versions {sorted(versions)} only"
