"""Spark writes keep the metadata table as in-process writes do: with
``hoodie.metadata.enable`` unset (true, as in Apache Hudi) the driver builds it before the first commit and every
commit (the inline compaction and clean too, on merge-on-read) updates it first; its
reader lists exactly the committed files; with all four partitions, validation finds no
difference after any write of a short sequence."""
from __future__ import annotations

import pyarrow as pa
import pytest
from mdt_checks import check_files

import hoodie
from hoodie.metadata_table import MetadataTableReader
from hoodie.metadata_table.settings import PARTITION_ORDER
from hoodie.metadata_table.validate import validate_metadata_table
from hoodie.table.table import HoodieTable
from hoodie.timeline.instant import Action


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_spark_writes_keep_the_metadata_table(spark, tmp_path, helpers, table_type: str) -> None:
    path = str(tmp_path / "t")
    opts = helpers.base_options(**{
        "hoodie.datasource.write.table.type": table_type,
        "hoodie.compact.inline": "true", "hoodie.compact.inline.max.delta.commits": "2", "hoodie.cleaner.commits.retained": "1",
    })
    for ts in range(1, 5):
        keys = range(ts, ts + 6)
        data = pa.table({
            "uuid": [f"k{i}" for i in keys], "city": ["sf" if i % 2 else "la" for i in keys],
            "ts": pa.array([ts] * 6, pa.int64()), "fare": [float(ts)] * 6,
        })
        helpers.to_df(spark, data).write.format("hoodie").options(**opts).mode("append").save(path)
        table = HoodieTable.open(path)
        assert table.config.metadata_partitions == ("files",)  # Apache Hudi 0.15's default partitions
        assert check_files(MetadataTableReader(table), table) == ["la", "sf"]
        mdt = HoodieTable.open(f"{path}/.hoodie/metadata")
        deltas = {i.timestamp for i in mdt.timeline.completed([Action.DELTA_COMMIT])}
        assert {i.timestamp for i in table.timeline.completed()} <= deltas
    assert sorted(hoodie.read(path).column("uuid").to_pylist()) == [f"k{i}" for i in range(1, 10)]


def test_spark_sequence_keeps_all_four_partitions_valid(spark, tmp_path, helpers) -> None:
    """A short sequence of Spark writes on a merge-on-read table with all four metadata
    partitions (inserts, upserts, a delete, an insert_overwrite, a bulk_insert; inline
    compaction, clean, and the metadata table's compaction): after each, hoodie's
    validation of the metadata table finds no difference and Spark reads the model."""
    path = str(tmp_path / "t")
    opts = helpers.base_options(**{
        "hoodie.metadata.enable": "true", "hoodie.metadata.index.column.stats.enable": "true",
        "hoodie.metadata.index.bloom.filter.enable": "true", "hoodie.metadata.record.index.enable": "true",
        "hoodie.metadata.compact.max.delta.commits": "2", "hoodie.datasource.write.table.type": "MERGE_ON_READ",
        "hoodie.compact.inline": "true", "hoodie.compact.inline.max.delta.commits": "2", "hoodie.cleaner.commits.retained": "1",
    })
    steps = [
        ("insert", range(0, 12), 1), ("upsert", range(6, 18), 2), ("delete", range(0, 4), 3),
        ("insert_overwrite", range(20, 23), 4), ("upsert", range(8, 30, 2), 5), ("bulk_insert", range(40, 46), 6),
    ]
    model: dict[str, float] = {}
    for op, keys, ts in steps:
        data = pa.table({
            "uuid": [f"k{i:02d}" for i in keys], "city": ["sf" if i % 2 else "la" for i in keys],
            "ts": pa.array([ts] * len(keys), pa.int64()), "fare": [float(i * ts) for i in keys],
        })
        helpers.to_df(spark, data).write.format("hoodie").options(**{**opts, "hoodie.datasource.write.operation": op}).mode("append").save(path)
        if op == "delete":
            for i in keys:
                model.pop(f"k{i:02d}", None)
        else:
            if op == "insert_overwrite":  # the partitions it writes hold only its records
                cities = set(data.column("city").to_pylist())
                model = {k: v for k, v in model.items() if ("sf" if int(k[1:]) % 2 else "la") not in cities}
            model.update({f"k{i:02d}": float(i * ts) for i in keys})
        table = HoodieTable.open(path)
        assert sorted(table.config.metadata_partitions) == sorted(PARTITION_ORDER)
        report = validate_metadata_table(table)
        assert sorted(report.checks) == sorted(PARTITION_ORDER)
        assert report.ok, f"after {op}: " + "\n".join(map(str, report.differences[:20]))
        read = spark.read.format("hoodie").load(path).select("uuid", "fare").collect()
        assert {r["uuid"]: r["fare"] for r in read} == model, op
    mdt = HoodieTable.open(f"{path}/.hoodie/metadata")
    assert mdt.timeline.completed([Action.COMMIT])  # the metadata table compacted itself
