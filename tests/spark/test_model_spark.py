"""The model-based test through Spark: random batches written with
``df.write.format("hoodie")`` and read back with ``spark.read.format("hoodie")`` (snapshot
and incremental) match the plain Python model after every commit, for both index types."""
from __future__ import annotations

import random
from pathlib import Path

import pytest
from modeling import Model, model_options, random_batch, table_rows, to_arrow

from hoodie.table.table import HoodieTable


@pytest.mark.slow
@pytest.mark.parametrize("index_type", ["BLOOM", "SIMPLE"])
def test_random_spark_writes_match_model(spark, tmp_path: Path, index_type: str) -> None:
    rng = random.Random(7 + len(index_type))
    path = str(tmp_path / "model")
    opts = model_options(index_type)
    model = Model()
    next_id = [0]
    previous: str | None = None
    for step in range(6):
        op, rows = random_batch(rng, model, next_id)
        if op == "delete":
            model.delete(rows)
            changed: set[tuple[str, str]] = set()
        else:
            changed = model.upsert(rows)
        df = spark.createDataFrame(to_arrow(rows).to_pandas())
        df.write.format("hoodie").options(**opts).option("hoodie.datasource.write.operation", op).mode("append").save(path)
        instant = HoodieTable.open(path).timeline.completed_writes()[-1].timestamp
        snap = spark.read.format("hoodie").load(path).toArrow()
        assert table_rows(snap) == model.rows, f"snapshot differs from the model after step {step} ({op})"
        assert snap.num_rows == len(model.rows)
        if previous is not None:
            incr = (
                spark.read.format("hoodie")
                .option("hoodie.datasource.query.type", "incremental")
                .option("hoodie.datasource.read.begin.instanttime", previous)
                .option("hoodie.datasource.read.end.instanttime", instant)
                .load(path)
                .toArrow()
            )
            assert set(table_rows(incr)) == changed, f"incremental pull of step {step} ({op})"
        previous = instant
