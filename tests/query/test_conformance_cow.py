"""Copy-on-write conformance tables: what only they have (the reads every table shares
with hudi-rs are in ``test_conformance_reads.py``): the commits listed alike, projection,
and read-optimized equal to the snapshot.
"""
from __future__ import annotations

import pytest
from conformance_reads import commits, open_case

from hoodie.query import read_snapshot, read_table

pytestmark = pytest.mark.conformance(table_type="COPY_ON_WRITE")


def test_commits_seen_alike(conformance_case, conformance_table, hudi_rs) -> None:
    path, table = open_case(conformance_table, conformance_case)
    assert commits(table) == hudi_rs(path).commit_timestamps()


def test_projection(conformance_case, conformance_table) -> None:
    path, table = open_case(conformance_table, conformance_case)
    full = read_snapshot(table)
    if not full.num_columns:
        pytest.skip("table has no schema")
    wanted = [full.schema.names[-1], full.schema.names[0]]
    projected = read_snapshot(table, columns=wanted)
    assert projected.schema.names == wanted
    assert sorted(projected.to_pylist(), key=repr) == sorted(full.select(wanted).to_pylist(), key=repr)


def test_read_optimized_equals_snapshot_on_cow(conformance_case, conformance_table) -> None:
    path, _ = open_case(conformance_table, conformance_case)
    assert read_table(path, {"hoodie.datasource.query.type": "read_optimized"}).equals(read_table(path))


def test_conformance_tables_cover_every_version(conformance_catalog) -> None:
    """The parametrized tests above must not pass by running on nothing."""
    versions = {t.table_version for t in conformance_catalog if t.table_type == "COPY_ON_WRITE"}
    assert versions >= {6, 8, 9}, f"COW conformance tables found for versions {sorted(versions)} only"
