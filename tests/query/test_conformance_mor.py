"""Merge-on-read conformance tables, as far as this reader goes without log merging.

* read_optimized (base files only) equals hudi-rs in read-optimized mode on every MOR table;
* a snapshot or time travel whose slices have log files is refused with
  UnsupportedTableError, and one whose slices are all base files (everything compacted or
  clustered) equals hudi-rs's snapshot.
"""
from __future__ import annotations

import pytest

from hoodie.errors import UnsupportedTableError
from hoodie.query import plan_snapshot, read_optimized, read_snapshot, read_table
from hoodie.table.table import HoodieTable

pytestmark = pytest.mark.conformance(table_type="MERGE_ON_READ")


def _empty_schema(hudi_rs, path: str, table: HoodieTable):
    return hudi_rs(path).schema(meta_fields=table.config.populate_meta_fields)


def test_read_optimized(conformance_case, conformance_table, hudi_rs, same_as_hudi_rs) -> None:
    path = str(conformance_table(conformance_case))
    table = HoodieTable.open(path)
    mine = read_table(path, {"hoodie.datasource.query.type": "read_optimized"})
    same_as_hudi_rs(mine, hudi_rs(path).read_optimized(), _empty_schema(hudi_rs, path, table), f"{conformance_case} read_optimized")
    assert mine.equals(read_optimized(table))


def test_snapshot_and_time_travel_without_logs_or_refused(conformance_case, conformance_table, hudi_rs, same_as_hudi_rs) -> None:
    path = str(conformance_table(conformance_case))
    table = HoodieTable.open(path)
    rs = hudi_rs(path)
    empty = _empty_schema(hudi_rs, path, table)
    for as_of in [None, *(i.timestamp for i in table.timeline.completed_writes())]:
        what = f"{conformance_case} snapshot as of {as_of or 'latest'}"
        if any(s.log_files for s in plan_snapshot(table, as_of)):
            with pytest.raises(UnsupportedTableError, match="log files"):
                read_snapshot(table, as_of)
        else:
            same_as_hudi_rs(read_snapshot(table, as_of), rs.snapshot(as_of), empty, what)
