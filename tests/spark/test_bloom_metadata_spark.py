"""The bloom index reading its filters from the metadata table through Spark
(``hoodie.bloom.index.use.metadata=true``): each tagging task asks the metadata table once
for the files of every partition its records are in; upserts end as with the footers'
filters (every existing key updated in place, none inserted twice)."""
from __future__ import annotations

import random
from pathlib import Path

import pyarrow as pa
import pytest
from table_options import BLOOM_IN_METADATA

import hoodie

OPTS = {**BLOOM_IN_METADATA, "hoodie.upsert.shuffle.parallelism": "2"}


@pytest.mark.slow
def test_spark_upserts_with_filters_from_the_metadata_table_end_as_with_footers(spark, tmp_path: Path) -> None:
    results = []
    for use in ("true", "false"):
        rng = random.Random(11)
        path = str(tmp_path / use)
        keys: list[str] = []
        for batch in range(3):
            new = [f"{rng.randrange(10**6):06d}-{batch}" for _ in range(80)]
            rows = new + rng.sample(keys, min(len(keys), 40))
            keys += new
            data = pa.table({"uuid": rows, "city": [("sf", "la", "nyc")[int(k[:6]) % 3] for k in rows], "ts": [batch] * len(rows)})
            df = spark.createDataFrame(data.to_pandas())
            df.write.format("hoodie").options(**OPTS).option("hoodie.bloom.index.use.metadata", use).mode("append").save(path)
        table = hoodie.read(path).select(["uuid", "city", "ts"]).sort_by("uuid")
        assert table.num_rows == len(set(keys))
        results.append(table)
    assert results[0].equals(results[1])
