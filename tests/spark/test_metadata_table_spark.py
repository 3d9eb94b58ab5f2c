"""Spark writes keep the metadata table as in-process writes do: with
``hoodie.metadata.enable=true`` the driver builds it before the first commit and every
commit (the inline compaction and clean too, on merge-on-read) updates it first; its
reader lists exactly the committed files."""
from __future__ import annotations

import pyarrow as pa
import pytest
from mdt_checks import check_files

import hoodie
from hoodie.metadata_table import MetadataTableReader
from hoodie.table.table import HoodieTable
from hoodie.timeline.instant import Action


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_spark_writes_keep_the_metadata_table(spark, tmp_path, helpers, table_type: str) -> None:
    path = str(tmp_path / "t")
    opts = helpers.base_options(**{
        "hoodie.metadata.enable": "true", "hoodie.datasource.write.table.type": table_type,
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
        assert check_files(MetadataTableReader(table), table) == ["la", "sf"]
        mdt = HoodieTable.open(f"{path}/.hoodie/metadata")
        deltas = {i.timestamp for i in mdt.timeline.completed([Action.DELTA_COMMIT])}
        assert {i.timestamp for i in table.timeline.completed()} <= deltas
    assert sorted(hoodie.read(path).column("uuid").to_pylist()) == [f"k{i}" for i in range(1, 10)]
