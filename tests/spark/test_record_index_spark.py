"""RECORD_INDEX through Spark (issue 29): random upserts and deletes, some naming another
partition than their key is in, written with ``df.write.format("hoodie")`` match the
global model after every commit; the tagging tasks look their keys up in the record
index themselves (the driver never does)."""
from __future__ import annotations

import random
from pathlib import Path

import pytest
from global_modeling import GlobalModel, global_batch, global_options, snapshot_rows, to_arrow
from mdt_checks import check_record_index

import hoodie
from hoodie.metadata_table import MetadataTableReader
from hoodie.metadata_table.index_lookup import RecordIndexLocator
from hoodie.table.table import HoodieTable


@pytest.mark.slow
@pytest.mark.parametrize(("table_type", "update_partition_path"), [("COPY_ON_WRITE", False), ("MERGE_ON_READ", True)])
def test_spark_writes_with_the_record_index_match_the_model(
    spark, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, table_type: str, update_partition_path: bool
) -> None:
    def driver_lookup(self: RecordIndexLocator, keys: object, workers: int = 1) -> object:
        raise AssertionError("the driver looked keys up in the record index")

    # executors are other processes: only a lookup on the driver would meet this
    monkeypatch.setattr(RecordIndexLocator, "locate", driver_lookup)
    rng = random.Random(5 + update_partition_path)
    path = str(tmp_path / "t")
    opts = {**global_options(table_type, update_partition_path), "hoodie.upsert.shuffle.parallelism": "3", "hoodie.delete.shuffle.parallelism": "3"}
    model, next_id = GlobalModel(update_partition_path), [0]
    for step in range(5):
        op, rows = global_batch(rng, model, next_id)
        model.apply(op, rows)
        df = spark.createDataFrame(to_arrow(rows).to_pandas())
        df.write.format("hoodie").options(**opts).option("hoodie.datasource.write.operation", op).mode("append").save(path)
        stored = {"hoodie.datasource.read.extract.partition.values.from.path": "false"}
        snap = spark.read.format("hoodie").options(**stored).load(path).toArrow()
        # the partition column as written, also where a record kept its old partition
        assert snapshot_rows(snap) == model.rows, f"step {step} ({op})"
        assert snap.num_rows == len(model.rows), f"a key twice after step {step}"
        assert snapshot_rows(hoodie.read(path)) == model.rows
    monkeypatch.undo()
    check_record_index(MetadataTableReader(HoodieTable.open(path)), path)


def test_a_spark_read_by_key_scans_only_the_file_groups_the_index_names(spark, tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    opts = {**global_options("COPY_ON_WRITE", False), "hoodie.copyonwrite.insert.auto.split": "false", "hoodie.copyonwrite.insert.split.size": "10"}
    rows = [{"uuid": f"k{i:03d}", "city": ("sf", "la")[i % 2], "ts": 1, "fare": float(i)} for i in range(80)]
    hoodie.write(to_arrow(rows), path, opts)
    where = {k: loc.file_id for k, loc in MetadataTableReader(HoodieTable.open(path)).record_locations(["k003", "k040"]).items()}
    df = spark.read.format("hoodie").load(path)
    assert len(df.inputFiles()) == 8
    by_key = df.where(df.uuid.isin("k003", "k040", "nope"))
    assert sorted(r.uuid for r in by_key.collect()) == ["k003", "k040"]
    assert {f.rsplit("/", 1)[-1][:38] for f in by_key.inputFiles()} == set(where.values())
    # an older instant's keys may have been elsewhere: time travel reads every slice
    as_of = HoodieTable.open(path).timeline.completed_writes()[-1].timestamp
    old = spark.read.format("hoodie").option("as.of.instant", as_of).load(path)
    assert len(old.where(old.uuid == "k003").inputFiles()) == 8
