"""Extra metadata of a Spark write: options under ``hoodie.datasource.write.commitmeta.key.prefix``
through ``format("hoodie")`` and ``extra_metadata`` through ``write_dataframe``; read back
as a checkpoint."""
from __future__ import annotations

import pyarrow as pa

from hoodie.spark import register, write_dataframe
from hoodie.table.table import HoodieTable
from hoodie.timeline.checkpoints import STREAMER_CHECKPOINT_KEY, latest_checkpoint


def _trips(keys: list[str], ts: int) -> pa.Table:
    return pa.table({"uuid": keys, "city": ["sf"] * len(keys), "ts": pa.array([ts] * len(keys), pa.int64()), "fare": [1.0] * len(keys)})


def test_spark_writes_carry_extra_metadata(spark, tmp_path, helpers) -> None:
    register(spark)
    path = str(tmp_path / "t")
    opts = helpers.base_options()
    helpers.to_df(spark, _trips(["a", "b"], 1)).write.format("hoodie").options(**opts).option("_source.offset", "12").mode("append").save(path)
    second = write_dataframe(helpers.to_df(spark, _trips(["b"], 2)), path, opts, "append", extra_metadata={STREAMER_CHECKPOINT_KEY: "f2"})
    timeline = HoodieTable.open(path).timeline
    first, last = timeline.completed_writes()
    assert timeline.commit_metadata(first).extra_metadata["_source.offset"] == "12"
    assert last.timestamp == second
    assert STREAMER_CHECKPOINT_KEY not in timeline.commit_metadata(first).extra_metadata
    found = latest_checkpoint(timeline, STREAMER_CHECKPOINT_KEY)
    assert found is not None and (found.instant.timestamp, found.value) == (second, "f2")
    assert sorted(r["uuid"] for r in helpers.hudi_rs_snapshot(path).to_pylist()) == ["a", "b"]
