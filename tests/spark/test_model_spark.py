"""The model-based test through Spark: random batches written with
``df.write.format("hoodie")`` and read back with ``spark.read.format("hoodie")`` (snapshot
and incremental) match the plain Python model after every commit, for both index types."""
from __future__ import annotations

import random
from pathlib import Path

import pyarrow as pa
import pytest
from modeling import model_options, run_write_steps

from hoodie.table.table import HoodieTable


@pytest.mark.slow
@pytest.mark.parametrize("index_type", ["BLOOM", "SIMPLE"])
def test_random_spark_writes_match_model(spark, tmp_path: Path, index_type: str) -> None:
    rng = random.Random(7 + len(index_type))
    path = str(tmp_path / "model")

    def write(batch: pa.Table, opts: dict[str, str]) -> str:
        spark.createDataFrame(batch.to_pandas()).write.format("hoodie").options(**opts).mode("append").save(path)
        return HoodieTable.open(path).timeline.completed_writes()[-1].timestamp

    def incremental(begin: str, end: str) -> pa.Table:
        return (
            spark.read.format("hoodie")
            .option("hoodie.datasource.query.type", "incremental")
            .option("hoodie.datasource.read.begin.instanttime", begin)
            .option("hoodie.datasource.read.end.instanttime", end)
            .load(path)
            .toArrow()
        )

    run_write_steps(rng, 6, model_options(index_type), write, lambda: spark.read.format("hoodie").load(path).toArrow(), incremental)
