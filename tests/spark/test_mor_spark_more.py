"""Merge-on-read through Spark, beyond ``test_mor_read.py``: every merge-on-read table
Apache Hudi wrote (the conformance tables) reads through ``spark.read.format("hoodie")``,
snapshot and read-optimized, as the in-process reader reads it; and a MOR table upserted
and then deleted from through ``df.write.format("hoodie")`` holds what the same writes in
process give, log files included, and reads the same through hudi-rs."""
from __future__ import annotations

from collections import Counter

import pyarrow as pa
import pytest
from table_options import MOR_TRIPS

import hoodie
from hoodie.table.table import HoodieTable

READ_OPTIMIZED = {"hoodie.datasource.query.type": "read_optimized"}


def _same(df, expected: pa.Table, helpers) -> None:
    assert df.columns == expected.column_names
    assert helpers.df_types(df) == helpers.spark_types(expected.schema)
    assert helpers.rows(df) == helpers.rows(expected)


@pytest.mark.conformance(table_type="MERGE_ON_READ")
def test_apache_hudi_mor_tables_snapshot_and_read_optimized(spark, conformance_case, conformance_table, helpers) -> None:
    path = str(conformance_table(conformance_case))
    snapshot = hoodie.read(path)
    assert snapshot.num_rows > 0, "every MOR conformance table holds rows"
    _same(spark.read.format("hoodie").load(path), snapshot, helpers)
    read_optimized = hoodie.read(path, READ_OPTIMIZED)
    _same(spark.read.format("hoodie").options(**READ_OPTIMIZED).load(path), read_optimized, helpers)


def test_mor_conformance_tables_exist_and_some_differ_between_modes(conformance_catalog, conformance_table) -> None:
    """The test above must not pass vacuously: there are MOR tables, and in some of them the
    snapshot (logs merged) differs from the read-optimized view (base files only)."""
    mor = [t for t in conformance_catalog if t.table_type == "MERGE_ON_READ"]
    assert len(mor) >= 5
    differ = [t.name for t in mor if not _equal_rows(hoodie.read(str(conformance_table(t))), hoodie.read(str(conformance_table(t)), READ_OPTIMIZED))]
    assert len(differ) >= 4, differ


def _equal_rows(a: pa.Table, b: pa.Table) -> bool:
    key = lambda r: repr(sorted(r.items()))  # noqa: E731
    return a.column_names == b.column_names and sorted(a.to_pylist(), key=key) == sorted(b.to_pylist(), key=key)


def _trips(records: list[tuple[str, str, int, float]], with_fare: bool = True) -> pa.Table:
    uuid, city, ts, fare = zip(*records)
    data = {"uuid": pa.array(uuid, pa.string()), "city": pa.array(city, pa.string()), "ts": pa.array(ts, pa.int64())}
    if with_fare:
        data["fare"] = pa.array(fare, pa.float64())
    return pa.table(data)


def _slices(path: str) -> Counter:
    """(partition, has a base file, number of log files) of each latest slice."""
    view = HoodieTable.open(path).view()
    return Counter((s.partition_path, s.base_file is not None, len(s.log_files)) for s in view.latest_slices_all())


def test_spark_upsert_then_delete_equals_in_process(spark, tmp_path, helpers) -> None:
    h = helpers
    spark_path, local_path = str(tmp_path / "spark"), str(tmp_path / "local")
    opts = dict(MOR_TRIPS)
    first = [(f"k{i}", ("sf", "la", "nyc")[i % 3], 1, float(i)) for i in range(12)]
    upsert = [("k0", "sf", 5, 100.0), ("k1", "la", 0, -1.0), ("k4", "la", 2, 104.0), ("n1", "nyc", 1, 7.0), ("n2", "sea", 1, 8.0)]
    delete = [("k3", "sf", 9, 0.0), ("k4", "la", 1, 0.0), ("n2", "sea", 9, 0.0), ("missing", "sf", 9, 0.0)]
    steps = [("upsert", _trips(first)), ("upsert", _trips(upsert)), ("delete", _trips(delete, with_fare=False))]
    for operation, data in steps:
        write_opts = {**opts, "hoodie.datasource.write.operation": operation}
        h.to_df(spark, data).write.format("hoodie").options(**write_opts).mode("append").save(spark_path)
        hoodie.write(data, local_path, write_opts)

    table = HoodieTable.open(spark_path)
    assert [i.action for i in table.timeline.completed_writes()] == ["deltacommit"] * 3
    assert [table.commit_metadata(i).operation_type for i in table.timeline.completed_writes()] == ["UPSERT", "UPSERT", "DELETE"]
    assert _slices(spark_path) == _slices(local_path)
    assert any(n for _, _, n in _slices(spark_path)), "the updates and deletes went to log files"

    expected = hoodie.read(local_path)
    got = hoodie.read(spark_path)
    assert h.rows(got, drop=h.VOLATILE) == h.rows(expected, drop=h.VOLATILE)
    data_cols = ["uuid", "city", "ts", "fare"]
    model = {r[0]: r for r in first}
    model["k0"] = upsert[0]
    model["k4"] = upsert[2]  # k1's update is stale; k4's delete carries an older ts but deletes win
    model["n1"] = upsert[3]
    for k in ("k3", "k4"):
        del model[k]
    assert sorted(tuple(r[c] for c in data_cols) for r in got.select(data_cols).to_pylist()) == sorted(model.values())
    # Spark's reader and hudi-rs see the Spark-written table the same way
    assert h.rows(spark.read.format("hoodie").load(spark_path)) == h.rows(got)
    assert h.rows(h.hudi_rs_snapshot(spark_path), drop=h.VOLATILE) == h.rows(expected, drop=h.VOLATILE)
