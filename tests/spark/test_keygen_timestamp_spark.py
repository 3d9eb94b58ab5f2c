"""TimestampBasedKeyGenerator through the Spark DataSource: the same insert, upsert and
delete written with ``df.write.format("hoodie")`` and with ``hoodie.write`` give tables
with the same date partitions and rows; ``spark.read.format("hoodie")`` returns them as
the in-process reader does, the event column keeping its stored values (a formatted date
in the path is not a value of the column, even hive-style)."""
from __future__ import annotations

import pyarrow as pa
import pytest
from timestamp_keygen import BASE, DELETE, INSERT, KEYGEN, SCENARIOS, UPSERT, batch, expected_rows, partitions_on_disk

import hoodie

# the Spark side covers one scenario per table type
TABLE_TYPES = {"date_string": "COPY_ON_WRITE", "epoch_millis_hive_la": "MERGE_ON_READ"}


@pytest.mark.parametrize("scenario", sorted(TABLE_TYPES))
def test_spark_write_and_read_equal_in_process(spark, tmp_path, scenario: str, helpers) -> None:
    h = helpers
    keygen_opts, event_type, event_value, partitions = SCENARIOS[scenario]
    spark_path, local_path = str(tmp_path / "spark"), str(tmp_path / "local")
    opts = {**BASE, **keygen_opts, "hoodie.datasource.write.keygenerator.class": KEYGEN, "hoodie.datasource.write.table.type": TABLE_TYPES[scenario]}
    steps = [("insert", batch(INSERT, event_type, event_value)), ("upsert", batch(UPSERT, event_type, event_value)),
             ("delete", batch(DELETE, event_type, event_value, with_fare=False))]
    for operation, data in steps:
        write_opts = {**opts, "hoodie.datasource.write.operation": operation}
        h.to_df(spark, data).write.format("hoodie").options(**write_opts).mode("append").save(spark_path)
        hoodie.write(data, local_path, write_opts)

    all_dirs = set(partitions.values())
    assert partitions_on_disk(spark_path) == partitions_on_disk(local_path) == all_dirs
    expected = hoodie.read(local_path)
    assert {r["uuid"]: r["_hoodie_partition_path"] for r in expected.to_pylist()} == partitions
    want = expected_rows(event_value)
    assert sorted((r["uuid"], r["event"], r["ts"], r["fare"]) for r in expected.to_pylist()) == want

    # the Spark-written table, read by Spark, equals the in-process one (instants and file
    # names aside), with the same columns and types as the in-process reader
    df = spark.read.format("hoodie").load(spark_path)
    ours = hoodie.read(spark_path)
    assert df.columns == ours.column_names == expected.column_names
    assert h.df_types(df) == h.spark_types(expected.schema)
    assert dict(h.df_types(df))["event"] == ("string" if event_type == pa.string() else "bigint")
    assert h.rows(df) == h.rows(ours)
    assert h.rows(df, drop=h.VOLATILE) == h.rows(expected, drop=h.VOLATILE)
    # and the in-process-written table read through Spark too
    assert h.rows(spark.read.format("hoodie").load(local_path)) == h.rows(expected)
    assert h.rows(h.hudi_rs_snapshot(spark_path), drop=h.VOLATILE) == h.rows(expected, drop=h.VOLATILE)
