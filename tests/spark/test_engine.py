"""``SparkEngine`` runs the core's engine tasks as Spark tasks: in order, with Spark's
task identities, and the in-process client and reader work unchanged on top of it."""
from __future__ import annotations

import pyarrow as pa

import hoodie
from hoodie.engine.base import TaskContext
from hoodie.layout import parse_base_file_name
from hoodie.services.for_writers import WRITER_SERVICES
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
    instant = WriteClient(path, helpers.base_options(), services=WRITER_SERVICES, engine=engine).write(batch)
    names = [parse_base_file_name(n) for n in hoodie.read(path).column("_hoodie_file_name").to_pylist()]
    assert {n.instant for n in names} == {instant}
    assert helpers.rows(hoodie.read(path, engine=engine)) == helpers.rows(hoodie.read(path))


def test_partition_grouped_write_on_spark_engine_sends_each_task_its_own_records(spark, tmp_path, helpers, monkeypatch) -> None:
    """Enough partitions for partition groups: on Spark every group travels with its own
    records (never the whole batch), and the table equals the one written in process."""
    from hoodie.engine.local import LocalEngine
    from hoodie.writer import client as client_module

    engine = SparkEngine(spark)
    cities = [f"c{i:02d}" for i in range(2 * engine.parallelism + 2)]
    first = pa.table(
        {"uuid": [f"u{i}" for i in range(60)], "city": [cities[i % len(cities)] for i in range(60)], "ts": [1] * 60, "fare": [float(i) for i in range(60)]}
    )
    upsert = pa.table({"uuid": [f"u{i}" for i in range(0, 60, 3)] + ["new"], "city": [cities[i % len(cities)] for i in range(0, 60, 3)] + ["c00"],
                       "ts": [2] * 21, "fare": [-1.0] * 21})  # updates in every partition, one insert
    sent: list[int] = []
    real = client_module.with_own_records

    def spying(groups, records):  # type: ignore[no-untyped-def]
        out = real(groups, records)
        sent.extend(g.records.num_rows for g in out)
        return out

    monkeypatch.setattr(client_module, "with_own_records", spying)
    on_spark, local = str(tmp_path / "spark"), str(tmp_path / "local")
    for batch in (first, upsert):
        sent.clear()
        WriteClient(on_spark, helpers.base_options(), services=WRITER_SERVICES, engine=engine).write(batch)
        assert len(sent) > 1 and sum(sent) == batch.num_rows and max(sent) < batch.num_rows
        WriteClient(local, helpers.base_options(), services=WRITER_SERVICES, engine=LocalEngine(2)).write(batch)
    assert helpers.rows(hoodie.read(on_spark), drop=helpers.VOLATILE) == helpers.rows(hoodie.read(local), drop=helpers.VOLATILE)
