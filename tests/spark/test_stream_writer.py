"""``df.writeStream.format("hoodie")`` through the Python data source ``HoodieDataSource``
(a session that found it without ``hoodie.spark.register``): the tasks stage their rows,
the commit writes them as one commit per micro-batch, exactly once."""
from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from stream_landing import TRIPS_OPTIONS, Landing, batch, batch_ids, landing_schema, rows_of, sink_commits

import hoodie
from hoodie.spark.micro_batch import QUERY_ID_KEY
from hoodie.table.table import HoodieTable

OPTIONS = {**TRIPS_OPTIONS, "hoodie.datasource.write.partitionpath.field": "city"}


def run_query(spark, landing: Landing, path: str, checkpoint: Path, options: dict[str, str], mode: str = "append") -> Any:
    stream = spark.readStream.schema(landing_schema(spark)).option("maxFilesPerTrigger", 1).parquet(str(landing.folder))
    query = stream.writeStream.format("hoodie").options(**options).option("checkpointLocation", str(checkpoint)).outputMode(mode).start(path)
    try:
        query.processAllAvailable()
    finally:
        query.stop()
    return query


def staged(path: str) -> list[Path]:
    folder = Path(path) / ".hoodie" / ".temp" / "streaming"
    return sorted(p for p in folder.rglob("*") if p.is_file()) if folder.exists() else []


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_the_data_source_writes_a_commit_a_micro_batch(spark, tmp_path, helpers, source_only, table_type) -> None:
    path, landing = str(tmp_path / "t"), Landing(tmp_path / "landing")
    options = {**OPTIONS, "hoodie.datasource.write.table.type": table_type}
    landing.land(batch([(f"k{i}", "sf" if i % 2 else "la", 1, float(i), False) for i in range(6)]))
    landing.land(batch([]))
    landing.land(batch([("k0", "la", 2, 10.0, False), ("k1", "sf", 2, 0.0, True), ("k6", "sf", 2, 6.0, False)]))
    run_query(spark, landing, path, tmp_path / "ckpt", options)
    assert batch_ids(path) == [0, 2], "one commit per batch with rows, with its batch id"
    assert all(QUERY_ID_KEY not in extra for _, extra in sink_commits(path))
    assert rows_of(hoodie.read(path)) == landing.expected()
    assert rows_of(helpers.hudi_rs_snapshot(path)) == landing.expected()
    assert staged(path) == [], "the staged rows are gone"


def test_a_replayed_batch_is_not_applied_twice_by_the_data_source(spark, tmp_path, source_only) -> None:
    path, landing, checkpoint = str(tmp_path / "t"), Landing(tmp_path / "landing"), tmp_path / "ckpt"
    options = {**OPTIONS, "hoodie.datasource.write.operation": "insert"}
    landing.land(batch([("a", "sf", 1, 1.0, False)]))
    landing.land(batch([("b", "la", 1, 2.0, False)]))
    run_query(spark, landing, path, checkpoint, options)
    for name in ("1", ".1.crc"):
        (checkpoint / "commits" / name).unlink(missing_ok=True)
    # what a task of a killed application left staged is swept by the next commit
    leftover = Path(path) / ".hoodie" / ".temp" / "streaming" / "left" / "x.arrow"
    leftover.parent.mkdir(parents=True)
    leftover.write_bytes(b"")
    landing.land(batch([("c", "la", 1, 3.0, False)]))
    run_query(spark, landing, path, checkpoint, options)
    assert batch_ids(path) == [0, 1, 2]
    assert sorted(hoodie.read(path).column("uuid").to_pylist()) == ["a", "b", "c"]
    assert staged(path) == [leftover], "only another writer's folder stays"


def test_complete_mode_replaces_the_table_each_batch(spark, tmp_path, source_only) -> None:
    path, landing = str(tmp_path / "t"), Landing(tmp_path / "landing")
    landing.land(batch([("a", "sf", 1, 1.0, False), ("b", "sf", 1, 1.0, False)]))
    landing.land(batch([("c", "la", 1, 1.0, False)]))
    source = spark.readStream.schema(landing_schema(spark)).option("maxFilesPerTrigger", 1).parquet(str(landing.folder))
    counts = source.groupBy("uuid").count()  # complete mode needs an aggregation
    options = {**OPTIONS, "hoodie.datasource.write.partitionpath.field": "", "hoodie.datasource.write.precombine.field": "count"}
    writer = counts.writeStream.format("hoodie").options(**options).option("checkpointLocation", str(tmp_path / "ck"))
    query = writer.outputMode("complete").start(path)
    try:
        query.processAllAvailable()
    finally:
        query.stop()
    assert sorted(hoodie.read(path).column("uuid").to_pylist()) == ["a", "b", "c"]
    table = HoodieTable.open(path)
    operations = [table.timeline.commit_metadata(i).operation_type for i in table.timeline.completed_writes()]
    assert operations[-1] == "INSERT_OVERWRITE_TABLE"
