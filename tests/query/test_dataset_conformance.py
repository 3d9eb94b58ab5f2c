"""``hoodie.dataset`` reads every conformance table (Apache Hudi's own, copy-on-write and
merge-on-read, versions 6 to 9) as ``hoodie.read`` does: the snapshot, time travel as of
each commit and incremental pulls between consecutive commits (at requested and, on v8+,
completion times), the same schema and the same rows, through Arrow's scan (casts of the
files' physical types to the table's included) and DuckDB's."""
from __future__ import annotations

import duckdb
import pytest
from conformance_reads import BEGINNING, commits, open_case, pull_points

import hoodie

pytestmark = pytest.mark.conformance()


def test_snapshot_and_time_travel(conformance_case, conformance_table) -> None:
    path, table = open_case(conformance_table, conformance_case)
    for options in [None, *({"as.of.instant": i} for i in commits(table))]:
        want = hoodie.read(path, options)
        got = hoodie.dataset(path, options).to_table()
        assert got.schema == want.schema, f"{conformance_case} {options}: schema\n{got.schema}\n!=\n{want.schema}"
        assert sorted(got.to_pylist(), key=repr) == sorted(want.to_pylist(), key=repr), f"{conformance_case} {options}: rows differ"


def test_duckdb_counts_every_table(conformance_case, conformance_table) -> None:
    path, _ = open_case(conformance_table, conformance_case)
    dataset = hoodie.dataset(path)
    if not dataset.schema.names:
        return  # a table that was never written: no columns to scan
    assert duckdb.sql("SELECT count(*) FROM dataset").fetchall() == [(hoodie.read(path).num_rows,)]


def test_incremental_pulls(conformance_case, conformance_table) -> None:
    path, table = open_case(conformance_table, conformance_case)
    for points in pull_points(table):
        for begin, end in zip([BEGINNING, *points], points):
            options = {"hoodie.datasource.query.type": "incremental", "hoodie.datasource.read.begin.instanttime": begin,
                       "hoodie.datasource.read.end.instanttime": end}
            want = hoodie.read(path, options)
            got = hoodie.dataset(path, options).to_table()
            assert got.schema == want.schema, f"{conformance_case} ({begin}, {end}]: schema\n{got.schema}\n!=\n{want.schema}"
            assert sorted(got.to_pylist(), key=repr) == sorted(want.to_pylist(), key=repr), f"{conformance_case} ({begin}, {end}]: rows differ"
