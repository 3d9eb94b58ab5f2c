"""Reader and ``read_table`` unit tests: schemas, options, engines, refusals."""
from __future__ import annotations

import pickle
from collections.abc import Callable, Sequence

import pyarrow as pa
import pytest

from hoodie.engine import LocalEngine, TaskContext
from hoodie.errors import ConfigError, SchemaError, UnsupportedTableError
from hoodie.formats.avro_schema import (
    arrow_to_avro_schema,
    avro_schema_json,
)
from hoodie.formats.meta_columns import META_COLUMNS
from hoodie.query import read_optimized, read_snapshot, read_table
from hoodie.table.properties_file import store_table_config
from hoodie.table.table import HoodieTable

T1, T2, T3 = "20240101000001000", "20240101000002000", "20240101000003000"
F1, F2 = "11111111-0000-0000-0000-000000000000-0", "22222222-0000-0000-0000-000000000000-0"


def _simple(synthetic, **kwargs):
    t = synthetic(**kwargs)
    a = t.base_file(T1, "p1", F1, [{"id": 1, "name": "a", "part": "p1"}])
    t.commit(T1, [a])
    return t


def test_output_schema_is_meta_columns_then_table_schema(synthetic) -> None:
    data = read_snapshot(_simple(synthetic).open())
    assert data.schema.names == [*META_COLUMNS, "id", "name", "part"]
    assert all(not data.schema.field(m).nullable for m in META_COLUMNS)  # as hudi-rs declares them
    assert data.schema.field("id").type == pa.int32() and data.schema.field("id").nullable


def test_columns_added_later_read_as_nulls_and_types_widen(synthetic) -> None:
    t = synthetic()
    old = t.base_file(T1, "p1", F1, [{"id": 1, "name": "a", "part": "p1"}])
    t.commit(T1, [old])
    wider = pa.schema([("id", pa.int64()), ("name", pa.string()), ("part", pa.string()), ("extra", pa.float64())])
    new = t.base_file(T2, "p2", F2, [{"id": 2, "name": "b", "part": "p2", "extra": 2.5}], schema=wider)
    t.commit(T2, [new], schema=wider)
    data = read_snapshot(t.open())
    assert data.schema.field("id").type == pa.int64()
    assert sorted(zip(data.column("id").to_pylist(), data.column("extra").to_pylist())) == [(1, None), (2, 2.5)]
    # time travel reads with the schema of its instant
    assert read_snapshot(t.open(), T1).schema.names == [*META_COLUMNS, "id", "name", "part"]


def test_second_precision_time_travel_sees_the_schema_of_that_second(synthetic) -> None:
    """``yyyyMMddHHmmss`` covers its whole second (Java pads it with 999) for the files
    and for the schema alike."""
    t = synthetic()
    old = t.base_file(T1, "p1", F1, [{"id": 1, "name": "a", "part": "p1"}])
    t.commit(T1, [old])
    wider = pa.schema([("id", pa.int32()), ("name", pa.string()), ("part", pa.string()), ("extra", pa.float64())])
    new = t.base_file(T2, "p2", F2, [{"id": 2, "name": "b", "part": "p2", "extra": 2.5}], schema=wider)
    t.commit(T2, [new], schema=wider)
    data = read_table(t.path, {"as.of.instant": T2[:14]})
    assert data.num_rows == 2 and "extra" in data.schema.names


def test_projection_and_unknown_columns(synthetic) -> None:
    table = _simple(synthetic).open()
    assert read_snapshot(table, columns=["name", "id"]).to_pylist() == [{"name": "a", "id": 1}]
    with pytest.raises(SchemaError, match="'nope'"):
        read_snapshot(table, columns=["id", "nope"])


def test_table_without_meta_fields(synthetic) -> None:
    data = read_snapshot(_simple(synthetic, populate_meta_fields=False).open())
    assert data.schema.names == ["id", "name", "part"]
    assert data.to_pylist() == [{"id": 1, "name": "a", "part": "p1"}]


def test_empty_tables(synthetic, tmp_path) -> None:
    t = synthetic()
    assert read_snapshot(t.open()).equals(pa.table({}))  # no commit, no create schema
    props = dict(t.open().config.props)
    props["hoodie.table.name"] = "with_schema"
    props["hoodie.table.create.schema"] = avro_schema_json(arrow_to_avro_schema(t.schema, "with_schema"))
    table = HoodieTable.create(str(tmp_path / "with_schema"), props)
    empty = read_snapshot(table)
    assert empty.num_rows == 0 and empty.schema.names == [*META_COLUMNS, "id", "name", "part"]


def test_merge_on_read_with_a_custom_merger_is_refused_but_read_optimized_works(mor_table) -> None:
    """A payload class hoodie cannot reproduce (as hudi-rs) refuses slices with logs only."""
    t = mor_table(props={"hoodie.compaction.payload.class": "com.example.MyPayload"})
    t1, t2 = T1, T2
    a = t.base_file(t1, "p1", F1, [{"id": 1, "ts": 1, "name": "a", "part": "p1"}])
    t.deltacommit(t1, [a])
    assert read_snapshot(t.open()).column("name").to_pylist() == ["a"]  # no logs: nothing to merge
    t.deltacommit(t2, [t.log("p1", F1, t1, 1, [t.data_block(t2, [{"id": 1, "ts": 2, "name": "b", "part": "p1"}], "p1", F1)])])
    with pytest.raises(UnsupportedTableError, match="com.example.MyPayload"):
        read_snapshot(t.open())
    assert read_optimized(t.open()).column("name").to_pylist() == ["a"]
    assert read_table(t.path, {"hoodie.datasource.query.type": "read_optimized"}).column("name").to_pylist() == ["a"]


def test_merge_on_read_snapshot_merges_logs_and_read_optimized_does_not(mor_table) -> None:
    t = mor_table()
    t1, t2 = T1, T2
    a = t.base_file(t1, "p1", F1, [{"id": 1, "ts": 1, "name": "a", "part": "p1"}])
    t.deltacommit(t1, [a])
    t.deltacommit(t2, [t.log("p1", F1, t1, 1, [t.data_block(t2, [{"id": 1, "ts": 2, "name": "b", "part": "p1"}], "p1", F1)])])
    assert read_snapshot(t.open()).column("name").to_pylist() == ["b"]
    assert read_snapshot(t.open(), columns=["name"]).column_names == ["name"]
    assert read_optimized(t.open()).column("name").to_pylist() == ["a"]


class RecordingEngine:
    """An engine that proves tasks are picklable (as Spark needs) and counts them."""

    name = "recording"
    shares_memory = False
    parallelism = 2

    def __init__(self) -> None:
        self.tasks: list[object] = []

    def map(self, fn: Callable, items: Sequence, description: str = "") -> list:
        self.tasks.extend(items)
        fn, items = pickle.loads(pickle.dumps((fn, list(items))))
        return [fn(item, TaskContext(i, 1, i)) for i, item in enumerate(items)]


def test_reads_go_through_the_engine(synthetic) -> None:
    t = _simple(synthetic)
    b = t.base_file(T2, "p2", F2, [{"id": 2, "name": "b", "part": "p2"}])
    t.commit(T2, [b])
    engine = RecordingEngine()
    via_engine = read_snapshot(t.open(), engine=engine)
    assert len(engine.tasks) == 2
    assert via_engine.equals(read_snapshot(t.open(), engine=LocalEngine(max_workers=4)))


def test_arrow_threads_only_when_files_are_fewer_than_workers(synthetic) -> None:
    """One file on two workers decodes its columns on Arrow's threads; as many files as
    workers keep one thread each (Arrow's would oversubscribe the cores)."""
    t = _simple(synthetic)
    engine = RecordingEngine()
    one = read_snapshot(t.open(), engine=engine)
    assert [task.use_threads for task in engine.tasks] == [True]
    t.commit(T2, [t.base_file(T2, "p2", F2, [{"id": 2, "name": "b", "part": "p2"}])])
    engine = RecordingEngine()
    two = read_snapshot(t.open(), engine=engine)
    assert [task.use_threads for task in engine.tasks] == [False, False]
    assert one.num_rows == 1 and two.num_rows == 2


def test_merge_on_read_slices_are_one_picklable_task_each(mor_table) -> None:
    t = mor_table()
    t1, t2 = T1, T2
    a = t.base_file(t1, "p1", F1, [{"id": 1, "ts": 1, "name": "a", "part": "p1"}])
    b = t.base_file(t1, "p2", F2, [{"id": 2, "ts": 1, "name": "b", "part": "p2"}])
    t.deltacommit(t1, [a, b])
    t.deltacommit(t2, [t.log("p1", F1, t1, 1, [t.data_block(t2, [{"id": 1, "ts": 2, "name": "a2", "part": "p1"}], "p1", F1)])])
    engine = RecordingEngine()
    data = read_snapshot(t.open(), engine=engine)
    assert sorted(type(task).__name__ for task in engine.tasks) == ["BaseFileTask", "MergeSliceTask"]
    assert sorted(data.column("name").to_pylist()) == ["a2", "b"]


# --- read_table options -------------------------------------------------------------------------


def _two(synthetic):
    t = _simple(synthetic)
    b = t.base_file(T2, "p2", F2, [{"id": 2, "name": "b", "part": "p2"}])
    t.commit(T2, [b])
    return t


def test_read_table_time_travel_accepts_instants_and_iso_timestamps(synthetic) -> None:
    t = _two(synthetic)
    for value in (T1, "2024-01-01 00:00:01.000", "2024-01-01 00:00:01.500", "2024-01-01T00:00:01.999"):
        assert read_table(t.path, {"as.of.instant": value}).column("id").to_pylist() == [1], value
    assert read_table(t.path, {"hoodie.datasource.read.as.of.instant": "2024-01-01 00:00:02"}).num_rows == 2
    assert read_table(t.path, {"as.of.instant": "2023-12-31"}).num_rows == 0
    assert read_snapshot(t.open(), as_of="2024-01-01 00:00:01").column("id").to_pylist() == [1]


def test_read_table_incremental(synthetic) -> None:
    t = _two(synthetic)
    opts = {"hoodie.datasource.query.type": "incremental", "hoodie.datasource.read.begin.instanttime": T1}
    assert read_table(t.path, opts).column("id").to_pylist() == [2]
    opts["hoodie.datasource.read.begin.instanttime"] = "000"
    opts["hoodie.datasource.read.end.instanttime"] = T1
    assert read_table(t.path, opts).column("id").to_pylist() == [1]


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"hoodie.datasource.query.type": "incremental"}, "hoodie.datasource.read.begin.instanttime"),
        ({"as.of.instant": "yesterday"}, "as.of.instant"),
        ({"hoodie.datasource.read.begin.instanttime": T1}, "hoodie.datasource.query.type=incremental"),
        ({"hoodie.datasource.query.type": "streaming"}, "hoodie.datasource.query.type"),
        (
            {"hoodie.datasource.query.type": "incremental", "hoodie.datasource.read.begin.instanttime": T1, "as.of.instant": T2},
            "as.of.instant",
        ),
    ],
)
def test_read_table_option_errors_name_the_option(synthetic, options, message) -> None:
    t = _two(synthetic)
    with pytest.raises(ConfigError, match=message.replace(".", r"\.")):
        read_table(t.path, options)


def test_read_table_refuses_unsupported_versions(synthetic) -> None:
    t = _simple(synthetic)
    table = t.open()
    store_table_config(table.config.with_updates({"hoodie.table.version": "5"}), table.storage, table.meta_path)
    with pytest.raises(UnsupportedTableError, match="version 5"):
        read_table(t.path)
