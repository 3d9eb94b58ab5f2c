"""hoodie reads every conformance table, copy-on-write and merge-on-read, exactly as
hudi-rs 0.5.0 does: the snapshot, time travel as of every completed commit (by instant
and in ISO form), before the first and between two, and incremental pulls between every
pair of consecutive commits and open-ended ones — same columns in the same order, same
Arrow types and nullability, same rows.

On layout-2 tables (v8+) hudi-rs and Hudi 1.x read incremental bounds as completion
times, so the pulls are checked both at the requested instants and at the completion
times; time travel uses requested instant times on every version. What only one table
type has is in ``test_conformance_cow.py`` and ``test_conformance_mor.py``.
"""
from __future__ import annotations

import itertools

import pytest
from conformance_reads import BEGINNING, commits, empty_schema, iso, open_case, pull_points

from hoodie.query import read_incremental, read_snapshot, read_table

pytestmark = pytest.mark.conformance()


def test_snapshot(conformance_case, conformance_table, hudi_rs, same_as_hudi_rs) -> None:
    path, table = open_case(conformance_table, conformance_case)
    same_as_hudi_rs(read_table(path), hudi_rs(path).snapshot(), empty_schema(hudi_rs, path, table), f"{conformance_case} snapshot")


def test_time_travel_each_commit(conformance_case, conformance_table, hudi_rs, same_as_hudi_rs) -> None:
    path, table = open_case(conformance_table, conformance_case)
    rs = hudi_rs(path)
    empty = empty_schema(hudi_rs, path, table)
    for instant in commits(table):
        mine = read_table(path, {"as.of.instant": instant})
        same_as_hudi_rs(mine, rs.snapshot(instant), empty, f"{conformance_case} as of {instant}")
        # the ISO form names the same instant
        assert read_table(path, {"as.of.instant": iso(instant)}).equals(mine), f"as of {iso(instant)} differs from as of {instant}"


def test_time_travel_before_first_and_between_commits(conformance_case, conformance_table, hudi_rs, same_as_hudi_rs) -> None:
    path, table = open_case(conformance_table, conformance_case)
    rs = hudi_rs(path)
    empty = empty_schema(hudi_rs, path, table)
    before = "20000101000000000"
    mine = read_table(path, {"as.of.instant": before})
    assert mine.num_rows == 0
    same_as_hudi_rs(mine, rs.snapshot(before), empty, f"{conformance_case} as of {before}")
    for older, newer in itertools.pairwise(commits(table)):
        between = str(int(older) + 1)
        assert older < between < newer
        mine = read_table(path, {"as.of.instant": between})
        same_as_hudi_rs(mine, rs.snapshot(between), empty, f"{conformance_case} as of {between}")
        assert mine.equals(read_snapshot(table, as_of=older)), f"as of {between} must be the state as of {older}"


def test_incremental_consecutive_commits(conformance_case, conformance_table, hudi_rs, same_as_hudi_rs) -> None:
    path, table = open_case(conformance_table, conformance_case)
    rs = hudi_rs(path)
    empty = empty_schema(hudi_rs, path, table)
    for points in pull_points(table):
        for begin, end in itertools.pairwise(points):
            mine = read_table(path, {
                "hoodie.datasource.query.type": "incremental",
                "hoodie.datasource.read.begin.instanttime": begin,
                "hoodie.datasource.read.end.instanttime": end,
            })
            same_as_hudi_rs(mine, rs.incremental(begin, end), empty, f"{conformance_case} incremental ({begin}, {end}]")


def test_incremental_open_ended(conformance_case, conformance_table, hudi_rs, same_as_hudi_rs) -> None:
    path, table = open_case(conformance_table, conformance_case)
    rs = hudi_rs(path)
    empty = empty_schema(hudi_rs, path, table)
    for points in pull_points(table):
        for begin in points[:-1] or [BEGINNING]:
            same_as_hudi_rs(read_incremental(table, begin), rs.incremental(begin), empty, f"{conformance_case} incremental ({begin}, latest]")


def test_incremental_from_beginning_is_the_snapshot(conformance_case, conformance_table) -> None:
    """Every live record was committed after "the beginning": a full pull is the snapshot."""
    _, table = open_case(conformance_table, conformance_case)
    pulled = read_incremental(table, BEGINNING)
    assert sorted(pulled.to_pylist(), key=repr) == sorted(read_snapshot(table).to_pylist(), key=repr)
