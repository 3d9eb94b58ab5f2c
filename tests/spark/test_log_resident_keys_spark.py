"""A key living only in a log of its file group (deleted and written again while a
compaction of its slice was pending, so the compacted base file lacks it) is found by
the bloom index on Spark as in process: written and deleted through
``df.write.format("hoodie")``, it stays one row, equal to the model, through hoodie,
Spark and hudi-rs."""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pyarrow as pa
from log_resident import INDEXES, Sequence, deleted_then_rewritten_during_compaction


class SparkSequence(Sequence):
    def __init__(self, path: str, options: Mapping[str, str], spark: Any, helpers: Any) -> None:
        super().__init__(path, options)
        self.spark, self.helpers = spark, helpers

    def write(self, batch: pa.Table, options: Mapping[str, Any]) -> None:
        self.helpers.to_df(self.spark, batch).write.format("hoodie").options(**options).mode("append").save(self.path)


def test_bloom_index_on_spark_finds_a_key_living_only_in_a_log(spark, helpers, tmp_path) -> None:
    seq = SparkSequence(str(tmp_path / "trips"), INDEXES["bloom"], spark, helpers)
    deleted_then_rewritten_during_compaction(seq)
    seq.upsert([("k1", "sf", 4, 11.0), ("k3", "nyc", 4, 31.0), ("k5", "sf", 4, 5.0)])
    seq.check("the upsert after the compaction")
    seq.delete(["k3"])
    seq.check("the delete of a key living only in a log")
    seq.check_finally()
    read = spark.read.format("hoodie").load(seq.path).select("uuid", "city", "ts", "fare").collect()
    assert sorted(tuple(r) for r in read) == sorted(seq.model.values())
