"""``hoodie.dataset``: DuckDB, Polars, pandas and Daft query hoodie tables lazily.

Each engine's query with a filter and a projection returns what ``hoodie.read`` plus the
same filter returns, on a partitioned copy-on-write table (the benchmark table's data,
smaller) and on a merge-on-read table with log files; the files the scan opened (through
the storage's Arrow file system) are only those the filter needs.
"""
from __future__ import annotations

import pickle
import sys
from pathlib import Path

import duckdb
import polars as pl
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as ds
import pytest
from opened_files import ArrowOpenedFiles

import hoodie
from hoodie.errors import ConfigError, UnsupportedTableError
from hoodie.query.dataset import MergedDataset, pieces

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
from datagen import base_table, upsert_batch  # noqa: E402

ROWS, PARTS = 6000, 6
OPTS = {
    "hoodie.table.name": "bench",
    "hoodie.datasource.write.recordkey.field": "key",
    "hoodie.datasource.write.partitionpath.field": "part",
    "hoodie.datasource.write.precombine.field": "ts",
    "hoodie.metadata.index.column.stats.enable": "true",
    # each insert batch makes new file groups, so files differ by commit (and by "ts")
    "hoodie.parquet.small.file.limit": "0",
}
MOR = {**OPTS, "hoodie.datasource.write.table.type": "MERGE_ON_READ"}


def _files(table: pa.Table) -> set[str]:
    return set(table.column("_hoodie_file_name").to_pylist())


def _data_files(storage: ArrowOpenedFiles, base: str) -> set[str]:
    """The table's data files the scan opened (the metadata table's are not data)."""
    return {Path(p).name for p in storage.opened() if p.startswith(base) and "/.hoodie/" not in p}


def _sorted(table: pa.Table, key: str = "key") -> pa.Table:
    return table.sort_by(key)


@pytest.fixture(scope="module")
def cow(tmp_path_factory: pytest.TempPathFactory) -> str:
    path = str(tmp_path_factory.mktemp("cow") / "bench")
    hoodie.write(base_table(ROWS, PARTS), path, {**OPTS, "hoodie.datasource.write.operation": "bulk_insert"})
    hoodie.write(upsert_batch(ROWS, PARTS, 300), path, OPTS)  # ts=2: updates (merged files) and new file groups
    late = base_table(600, PARTS, seed=3, start=2 * ROWS)
    hoodie.write(late.set_column(2, "ts", pa.array([3] * late.num_rows, pa.int64())), path, OPTS)  # ts=3: new file groups only
    return path


@pytest.fixture(scope="module")
def mor(tmp_path_factory: pytest.TempPathFactory) -> str:
    path = str(tmp_path_factory.mktemp("mor") / "bench")
    hoodie.write(base_table(ROWS, PARTS), path, {**MOR, "hoodie.datasource.write.operation": "bulk_insert"})
    # updates of two partitions only: their slices get log files, the others stay base files
    updates = upsert_batch(ROWS, PARTS, 600).filter(pc.is_in(pc.field("part"), pa.array(["part-000", "part-001"])))
    updates = updates.filter(pc.field("key") < f"key-{ROWS:012d}")  # updates, no inserts
    hoodie.write(updates.set_column(3, "c_int", pa.array([-1] * updates.num_rows, pa.int32())), path, MOR)
    deletes = updates.slice(0, 5).select(["key", "part", "ts"])
    hoodie.write(deletes, path, {**MOR, "hoodie.datasource.write.operation": "delete"})
    return path


@pytest.fixture
def storage(tmp_path: Path) -> ArrowOpenedFiles:
    return ArrowOpenedFiles(str(tmp_path / "opened.log"))


def test_cow_is_a_filesystem_dataset_with_typed_partition_expressions(cow: str) -> None:
    dataset = hoodie.dataset(cow)
    assert type(dataset) is ds.FileSystemDataset
    assert dataset.schema == hoodie.read(cow).schema
    latest = _files(hoodie.read(cow))
    assert {Path(f).name for f in dataset.files} == latest  # the latest slices only, not every file on disk
    expressions = {Path(f.path).parent.name: f.partition_expression for f in dataset.get_fragments()}
    assert expressions["part-003"].equals(pc.field("part") == pa.scalar("part-003", pa.string()))


def test_duckdb_cow_partition_and_column_filter(cow: str, storage: ArrowOpenedFiles) -> None:
    dataset = hoodie.dataset(cow, storage=storage)  # noqa: F841 (DuckDB finds it by its name)
    storage.forget()
    got = duckdb.sql("SELECT key, c_int, ts FROM dataset WHERE part = 'part-002' AND ts = 2").arrow()
    want = hoodie.read(cow, filters=[("part", "=", "part-002"), ("ts", "=", 2)]).select(["key", "c_int", "ts"])
    assert _sorted(pa.table(got)).equals(_sorted(want))
    assert want.num_rows > 0
    partition_files = _files(hoodie.read(cow, filters=[("part", "=", "part-002")]))
    assert _data_files(storage, cow) == partition_files  # no other partition's file was opened


def test_polars_scan_pyarrow_dataset(cow: str, storage: ArrowOpenedFiles) -> None:
    dataset = hoodie.dataset(cow, storage=storage)
    storage.forget()
    got = (
        pl.scan_pyarrow_dataset(dataset)
        .filter((pl.col("part") == "part-004") & (pl.col("c_double") < 0.25))
        .select(["key", "c_double", "c_str3"])
        .collect()
    )
    want = hoodie.read(cow, filters=[("part", "=", "part-004"), ("c_double", "<", 0.25)]).select(["key", "c_double", "c_str3"])
    assert _sorted(got.to_arrow()).cast(want.schema).equals(_sorted(want))
    assert _data_files(storage, cow) == _files(hoodie.read(cow, filters=[("part", "=", "part-004")]))


def test_pandas_filters_up_front_skip_files_by_column_stats(cow: str, storage: ArrowOpenedFiles) -> None:
    # ts=3 rows live in the files of the third commit only: the statistics rule the others out
    dataset = hoodie.dataset(cow, storage=storage, filters=[("ts", "=", 3)])
    storage.forget()
    frame = dataset.to_table(columns=["key", "part", "ts"]).to_pandas()
    want = hoodie.read(cow, filters=[("ts", "=", 3)])
    assert sorted(frame["key"]) == sorted(want.column("key").to_pylist())
    assert set(frame["ts"]) == {3}
    everything = _files(hoodie.read(cow))
    assert _data_files(storage, cow) == _files(want) < everything
    # and the same dataset without the filter up front opens every file
    storage.forget()
    hoodie.dataset(cow, storage=storage).to_table(columns=["key"], filter=pc.field("ts") == 3)
    assert _data_files(storage, cow) == everything


def test_mor_snapshot_is_merged_lazily(mor: str, storage: ArrowOpenedFiles) -> None:
    dataset = hoodie.dataset(mor, storage=storage)
    assert isinstance(dataset, MergedDataset)
    snapshot = hoodie.read(mor)
    assert dataset.count_rows() == snapshot.num_rows == ROWS - 5
    assert _sorted(dataset.to_table()).equals(_sorted(snapshot))
    # a filter on a partition without logs opens that partition's base files and no log
    storage.forget()
    got = duckdb.sql("SELECT key, c_int FROM dataset WHERE part = 'part-004' AND c_int > 0").arrow()
    want = hoodie.read(mor, filters=[("part", "=", "part-004"), ("c_int", ">", 0)]).select(["key", "c_int"])
    assert _sorted(pa.table(got)).equals(_sorted(want))
    assert _data_files(storage, mor) == _files(hoodie.read(mor, filters=[("part", "=", "part-004")]))


def test_duckdb_and_polars_read_merged_updates_and_deletes(mor: str, storage: ArrowOpenedFiles) -> None:
    dataset = hoodie.dataset(mor, storage=storage)
    want = hoodie.read(mor, filters=[("part", "=", "part-001"), ("c_int", "=", -1)]).select(["key", "c_int", "ts"])
    assert want.num_rows > 0 and set(want.column("ts").to_pylist()) == {2}
    storage.forget()
    got = duckdb.sql("SELECT key, c_int, ts FROM dataset WHERE part = 'part-001' AND c_int = -1").arrow()
    assert _sorted(pa.table(got)).equals(_sorted(want))
    opened = _data_files(storage, mor)
    assert opened and all("part-001" in p for p in storage.opened() if p.startswith(mor) and "/.hoodie/" not in p)
    assert any(".log." in name for name in opened)  # the slices were merged with their logs
    polars_rows = pl.scan_pyarrow_dataset(dataset).filter((pl.col("part") == "part-001") & (pl.col("c_int") == -1)).select(["key", "c_int", "ts"]).collect()
    assert _sorted(polars_rows.to_arrow()).cast(want.schema).equals(_sorted(want))
    deleted = hoodie.read(mor, {"as.of.instant": hoodie.HoodieTable.open(mor).timeline.completed_writes()[1].timestamp})
    gone = set(deleted.column("key").to_pylist()) - set(hoodie.read(mor).column("key").to_pylist())
    assert len(gone) == 5
    assert not gone & set(duckdb.sql("SELECT key FROM dataset").fetchnumpy()["key"].tolist())


def test_mor_filters_up_front_and_read_optimized(mor: str) -> None:
    filtered = hoodie.dataset(mor, filters=[("c_int", "=", -1)])
    assert _sorted(filtered.to_table()).equals(_sorted(hoodie.read(mor, filters=[("c_int", "=", -1)])))
    assert filtered.filter(pc.field("part") == "part-000").count_rows() == hoodie.read(mor, filters=[("c_int", "=", -1), ("part", "=", "part-000")]).num_rows
    ro = hoodie.dataset(mor, {"hoodie.datasource.query.type": "read_optimized"})
    assert type(ro) is ds.FileSystemDataset
    assert _sorted(ro.to_table()).equals(_sorted(hoodie.read(mor, {"hoodie.datasource.query.type": "read_optimized"})))


def test_time_travel_dataset(mor: str) -> None:
    first = hoodie.HoodieTable.open(mor).timeline.completed_writes()[0].timestamp
    dataset = hoodie.dataset(mor, {"as.of.instant": first})
    assert _sorted(dataset.to_table()).equals(_sorted(hoodie.read(mor, {"as.of.instant": first})))


def test_merged_dataset_pickles_and_refuses_raw_fragments(mor: str) -> None:
    dataset = hoodie.dataset(mor).filter(pc.field("part") == "part-000")
    copy = pickle.loads(pickle.dumps(dataset))
    assert isinstance(copy, MergedDataset)
    assert _sorted(copy.to_table()).equals(_sorted(hoodie.read(mor, filters=[("part", "=", "part-000")])))
    with pytest.raises(UnsupportedTableError, match="not Arrow fragments"):
        list(dataset.get_fragments())
    # Arrow reading the dataset underneath without the merge fails: the stand-ins name no file
    with pytest.raises(FileNotFoundError, match="hoodie-slice"):
        ds.Scanner.from_dataset(dataset).to_table()


def _instants(path: str) -> list[str]:
    return [i.timestamp for i in hoodie.HoodieTable.open(path).timeline.completed_writes()]


@pytest.mark.parametrize("table", ["cow", "mor"])
def test_incremental_pull_between_each_pair_of_commits(table: str, request: pytest.FixtureRequest) -> None:
    path = request.getfixturevalue(table)
    instants = ["0", *_instants(path)]
    for begin, end in zip(instants, instants[1:]):
        options = {"hoodie.datasource.query.type": "incremental", "hoodie.datasource.read.begin.instanttime": begin,
                   "hoodie.datasource.read.end.instanttime": end}
        want = hoodie.read(path, options)
        dataset = hoodie.dataset(path, options)
        assert isinstance(dataset, MergedDataset)
        assert _sorted(dataset.to_table()).equals(_sorted(want)), (begin, end)
        pulled = duckdb.sql("SELECT key, ts FROM dataset WHERE part = 'part-001'").arrow()
        assert _sorted(pa.table(pulled)).equals(_sorted(want.filter(pc.field("part") == "part-001").select(["key", "ts"]))), (begin, end)
    # filters given up front filter the pull too
    options = {"hoodie.datasource.query.type": "incremental", "hoodie.datasource.read.begin.instanttime": instants[1]}
    filtered = hoodie.dataset(path, options, filters=[("part", "in", ["part-000", "part-002"])])
    assert _sorted(filtered.to_table()).equals(_sorted(hoodie.read(path, options, filters=[("part", "in", ["part-000", "part-002"])])))


def test_ignore_corrupt_files_reads_around_a_damaged_base_file(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    path = str(tmp_path / "t")
    hoodie.write(base_table(600, 3), path, {**OPTS, "hoodie.datasource.write.operation": "bulk_insert"})
    damaged = sorted(hoodie.dataset(path).files)[0]
    Path(damaged).write_bytes(b"not parquet")
    with pytest.raises(pa.ArrowInvalid, match=Path(damaged).name):  # Arrow's scan names the file
        hoodie.dataset(path).to_table()
    options = {"ignoreCorruptFiles": "true"}
    dataset = hoodie.dataset(path, options)  # noqa: F841 (DuckDB finds it by its name)
    got = pa.table(duckdb.sql("SELECT key FROM dataset").arrow())
    assert sorted(got.column("key").to_pylist()) == sorted(hoodie.read(path, options).column("key").to_pylist())
    assert 0 < got.num_rows < 600
    assert Path(damaged).name in caplog.text


def test_unknown_options_are_refused(cow: str) -> None:
    with pytest.raises(ConfigError, match="hoodie.datasource.query.typ"):
        hoodie.dataset(cow, {"hoodie.datasource.query.typo": "snapshot"})


def test_daft_reads_lazily_with_pushdowns(cow: str, mor: str, storage: ArrowOpenedFiles) -> None:
    import daft

    frame = hoodie.to_daft(cow, storage=storage)
    assert isinstance(frame, daft.DataFrame)
    storage.forget()  # nothing is read until the query runs
    got = frame.where((daft.col("part") == "part-001") & (daft.col("c_int") > 1 << 29)).select("key", "c_int").to_arrow()
    want = hoodie.read(cow, filters=[("part", "=", "part-001"), ("c_int", ">", 1 << 29)]).select(["key", "c_int"])
    assert _sorted(got).cast(want.schema).equals(_sorted(want))
    assert _data_files(storage, cow) == _files(hoodie.read(cow, filters=[("part", "=", "part-001")]))
    merged = hoodie.to_daft(mor).where(daft.col("c_int") == -1).select("key", "part", "ts").to_arrow()
    assert _sorted(merged).cast(pa.schema([("key", pa.string()), ("part", pa.string()), ("ts", pa.int64())])).equals(
        _sorted(hoodie.read(mor, filters=[("c_int", "=", -1)]).select(["key", "part", "ts"]))
    )
    assert hoodie.to_daft(mor, filters=[("part", "=", "part-000")]).count_rows() == hoodie.read(mor, filters=[("part", "=", "part-000")]).num_rows


def test_pieces_keep_the_datasets_own_filter(cow: str, mor: str) -> None:
    # the pieces an engine scans in parallel (Daft's tasks) return only rows the filters up front keep
    for path in (cow, mor):
        filters = [("c_int", "=", -1)] if path == mor else [("ts", "=", 3)]
        dataset = hoodie.dataset(path, filters=filters)
        got = pa.concat_tables(p.to_table() for p in pieces(dataset))
        assert _sorted(got).equals(_sorted(hoodie.read(path, filters=filters))), path
        narrowed = pa.concat_tables(p.to_table() for p in pieces(dataset, pc.field("part") == "part-001"))
        assert _sorted(narrowed).equals(_sorted(hoodie.read(path, filters=[*filters, ("part", "=", "part-001")]))), path


def test_daft_filters_up_front_on_a_copy_on_write_table(cow: str) -> None:
    import daft

    filters = [("part", "=", "part-000")]
    frame = hoodie.to_daft(cow, filters=filters)
    assert frame.count_rows() == hoodie.read(cow, filters=filters).num_rows
    got = frame.where(daft.col("ts") == 2).select("key", "part").to_arrow()
    want = hoodie.read(cow, filters=[*filters, ("ts", "=", 2)]).select(["key", "part"])
    assert _sorted(got).cast(want.schema).equals(_sorted(want))
