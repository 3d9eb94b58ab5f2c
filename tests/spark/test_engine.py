"""``SparkEngine`` runs the core's engine tasks as Spark tasks: in order, with Spark's
task identities, and the in-process client and reader work unchanged on top of it."""
from __future__ import annotations

import pyarrow as pa

import hoodie
from hoodie.engine.base import TaskContext
from hoodie.layout import parse_base_file_name
from hoodie.spark import SparkEngine
from hoodie.writer.client import WriteClient


def _identity(item: int, ctx: TaskContext) -> tuple[int, int, int, int]:
    return item * 10, ctx.partition_id, ctx.stage_id, ctx.attempt_id


def test_map_runs_one_task_per_item_in_order(spark) -> None:
    engine = SparkEngine(spark)
    out = engine.map(_identity, [3, 1, 2], "identity")
    assert [r[0] for r in out] == [30, 10, 20]
    assert [r[1] for r in out] == [0, 1, 2]  # one Spark partition per item
    assert len({r[2] for r in out}) == 1  # one stage
    assert len({r[3] for r in out}) == 3  # Spark's task attempt ids are unique
    assert engine.map(_identity, []) == []
    assert engine.parallelism >= 1


def test_in_process_client_and_reader_on_spark_engine(spark, tmp_path, helpers) -> None:
    path = str(tmp_path / "t")
    engine = SparkEngine(spark)
    batch = pa.table({"uuid": ["a", "b", "c"], "city": ["sf", "la", "sf"], "ts": [1, 1, 1], "fare": [1.0, 2.0, 3.0]})
    instant = WriteClient(path, helpers.base_options(), engine=engine).write(batch)
    names = [parse_base_file_name(n) for n in hoodie.read(path).column("_hoodie_file_name").to_pylist()]
    assert {n.instant for n in names} == {instant}
    assert helpers.rows(hoodie.read(path, engine=engine)) == helpers.rows(hoodie.read(path))
