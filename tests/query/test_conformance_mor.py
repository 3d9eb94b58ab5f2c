"""Merge-on-read conformance tables: what only they have (the reads every table shares
with hudi-rs, snapshot with log merging included, are in ``test_conformance_reads.py``).

Read-optimized mode must equal hudi-rs's, the snapshot tests must really merge logs, and
a rolled-back delta commit must stay dropped. The tables: v6 with Avro and Parquet log
blocks, v6 with a rolled-back delta commit, v9 with compaction, clustering and a rollback.
"""
from __future__ import annotations

import pytest
from conformance_reads import empty_schema, open_case

from hoodie.query import plan_snapshot, read_optimized, read_snapshot, read_table

pytestmark = pytest.mark.conformance(table_type="MERGE_ON_READ")


def test_read_optimized(conformance_case, conformance_table, hudi_rs, same_as_hudi_rs) -> None:
    path, table = open_case(conformance_table, conformance_case)
    mine = read_table(path, {"hoodie.datasource.query.type": "read_optimized"})
    same_as_hudi_rs(mine, hudi_rs(path).read_optimized(), empty_schema(hudi_rs, path, table), f"{conformance_case} read_optimized")
    assert mine.equals(read_optimized(table))


def test_snapshots_merge_log_files(conformance_catalog, conformance_table) -> None:
    """The snapshot tests must not pass by reading base files only: the v6 tables carry log
    files in their latest slices, and merging them changes the result."""
    merged = 0
    for case in (t for t in conformance_catalog if t.table_type == "MERGE_ON_READ"):
        _path, table = open_case(conformance_table, case)
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
