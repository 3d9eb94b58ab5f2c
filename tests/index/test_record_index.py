"""RECORD_INDEX (issue 29): "A record-level index (hoodie.index.type=RECORD_INDEX) maps
keys to file groups for upserts, deletes and point lookups by key."

Upserts and deletes find each key wherever it is, as Apache Hudi's global record index
(``hoodie.record.index.update.partition.path`` both ways), on both table types, against a
model; tagging opens no data file; a write without a complete record index is refused
unless it builds one; reads by key read only the file groups the index names.
"""
from __future__ import annotations

import random
from pathlib import Path

import pyarrow as pa
import pytest
from global_modeling import GlobalModel, global_batch, global_options, snapshot_rows, to_arrow
from mdt_checks import check_record_index
from opened_files import OpenedFiles

import hoodie
from hoodie.errors import ConfigError, MetadataOutOfSyncError
from hoodie.metadata_table import MetadataTableReader
from hoodie.query import snapshot
from hoodie.table.file_group import FileSlice
from hoodie.table.table import HoodieTable


@pytest.mark.parametrize("update_partition_path", [False, True])
@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_upserts_and_deletes_find_keys_in_any_partition(tmp_path: Path, table_type: str, update_partition_path: bool) -> None:
    rng = random.Random(29 + update_partition_path)
    path = str(tmp_path / "t")
    opts = global_options(table_type, update_partition_path)
    model, next_id = GlobalModel(update_partition_path), [0]
    for step in range(9):
        op, rows = global_batch(rng, model, next_id)
        model.apply(op, rows)
        hoodie.write(to_arrow(rows), path, {**opts, "hoodie.datasource.write.operation": op})
        snap = hoodie.read(path)
        assert snapshot_rows(snap) == model.rows, f"step {step} ({op})"
        assert snap.num_rows == len(model.rows), f"a key twice after step {step}"
        check_record_index(MetadataTableReader(HoodieTable.open(path)), path)


OPTS = {**global_options("COPY_ON_WRITE", False), "hoodie.compact.inline": "false"}


def _rows(path: str) -> list[tuple[str, str, str, int]]:
    t = hoodie.read(path).sort_by("uuid")
    return list(zip(*(t.column(c).to_pylist() for c in ("_hoodie_partition_path", "uuid", "city", "ts"))))


def test_the_issue_upserts_deletes_and_lookups_by_key(tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    hoodie.write(pa.table({"uuid": ["a", "b", "c"], "city": ["sf", "nyc", "sf"], "ts": [1, 1, 1]}), path, OPTS)
    # an upsert naming another city updates the key where it is (Hudi's default)
    hoodie.write(pa.table({"uuid": ["a", "d"], "city": ["nyc", "la"], "ts": [2, 2]}), path, OPTS)
    assert _rows(path) == [("sf", "a", "nyc", 2), ("nyc", "b", "nyc", 1), ("sf", "c", "sf", 1), ("la", "d", "la", 2)]
    # with hoodie.record.index.update.partition.path it moves (a stale record does not)
    moving = {**OPTS, "hoodie.record.index.update.partition.path": "true"}
    hoodie.write(pa.table({"uuid": ["b", "c"], "city": ["sf", "la"], "ts": [3, 0]}), path, moving)
    assert _rows(path) == [("sf", "a", "nyc", 2), ("sf", "b", "sf", 3), ("sf", "c", "sf", 1), ("la", "d", "la", 2)]
    # a delete finds the key whatever city it names
    hoodie.write(pa.table({"uuid": ["a"], "city": ["chennai"], "ts": [0]}), path, {**OPTS, "hoodie.datasource.write.operation": "delete"})
    assert [r[1] for r in _rows(path)] == ["b", "c", "d"]
    located = check_record_index(MetadataTableReader(HoodieTable.open(path)), path, gone=["a"])
    assert located["b"].partition == "sf"
    # a point lookup reads the one file group the index names
    assert hoodie.read(path, filters=[("uuid", "=", "d")]).column("uuid").to_pylist() == ["d"]


def _spy_reads(monkeypatch: pytest.MonkeyPatch) -> list[FileSlice]:
    read: list[FileSlice] = []
    original = snapshot.read_file_slices

    def spy(table: HoodieTable, slices: list[FileSlice], *args: object, **kwargs: object) -> pa.Table:
        read.extend(slices)
        return original(table, slices, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(snapshot, "read_file_slices", spy)
    return read


def test_reads_by_key_read_only_the_file_groups_the_index_names(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = str(tmp_path / "t")
    keys = [f"k{i:03d}" for i in range(120)]
    small_groups = {**OPTS, "hoodie.copyonwrite.insert.auto.split": "false", "hoodie.copyonwrite.insert.split.size": "10"}
    hoodie.write(pa.table({"uuid": keys, "city": [f"c{i % 4}" for i in range(120)], "ts": [1] * 120}), path, small_groups)
    table = HoodieTable.open(path)
    groups = {s.file_id for s in table.view().latest_slices_all()}
    assert len(groups) > 4
    where = {k: loc.file_id for k, loc in MetadataTableReader(table).record_locations(keys).items()}
    read = _spy_reads(monkeypatch)
    cases = [
        ([("uuid", "=", "k007")], {"k007"}),
        ([("uuid", "in", ["k001", "k100", "nope"])], {"k001", "k100"}),
        ([[("uuid", "=", "k005")], [("uuid", "=", "k050")]], {"k005", "k050"}),
        ([("uuid", "=", "k005"), ("ts", ">", 5)], set()),  # the statistics-free part keeps nothing out
        ([("uuid", "=", "absent")], set()),
    ]
    for filters, expected in cases:
        read.clear()
        got = hoodie.read(path, filters=filters)
        assert set(got.column("uuid").to_pylist()) == expected
        named = {where[k] for conj in (filters if isinstance(filters[0], list) else [filters]) for c, op, v in conj
                 if c == "uuid" for k in (v if isinstance(v, list) else [v]) if k in where}
        assert {s.file_id for s in read} == named
    # any other filter, a time travel, or the index off for reads: every slice is read
    for options, filters in (({}, [("ts", "=", 1)]), ({"hoodie.enable.data.skipping": "false"}, [("uuid", "=", "k007")])):
        read.clear()
        hoodie.read(path, options, filters=filters)
        assert {s.file_id for s in read} == groups


@pytest.mark.parametrize("index_type", ["BLOOM", "RECORD_INDEX"])
def test_tagging_with_the_record_index_opens_no_data_file(tmp_path: Path, index_type: str) -> None:
    """A merge-on-read upsert of existing keys: the bloom index reads each candidate base
    file's footer; the record index reads the metadata table only."""
    path = str(tmp_path / "t")
    opts = {**global_options("MERGE_ON_READ", False), "hoodie.index.type": index_type}
    n = 200
    hoodie.write(pa.table({"uuid": [f"k{i}" for i in range(n)], "city": [f"c{i % 4}" for i in range(n)], "ts": [1] * n}), path, opts)
    storage = OpenedFiles()
    updates = list(range(0, n, 7))
    hoodie.write(pa.table({"uuid": [f"k{i}" for i in updates], "city": [f"c{i % 4}" for i in updates], "ts": [2] * len(updates)}), path, opts, storage=storage)
    parquet = [p for p in storage.opened if p.endswith(".parquet")]
    if index_type == "BLOOM":
        assert storage.counters["footer"] == 4 and len(parquet) == 4
    else:
        assert storage.counters["footer"] == 0 and parquet == []
    assert hoodie.read(path).num_rows == n


def test_a_write_without_a_complete_record_index_is_refused(tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    plain = {k: v for k, v in OPTS.items() if k not in ("hoodie.index.type", "hoodie.metadata.record.index.enable")}
    hoodie.write(pa.table({"uuid": ["a", "b"], "city": ["sf", "la"], "ts": [1, 1]}), path, plain)
    before = sorted(p.name for p in (tmp_path / "t" / ".hoodie").iterdir())
    batch = pa.table({"uuid": ["a"], "city": ["la"], "ts": [2]})
    with pytest.raises(ConfigError, match="hoodie.metadata.record.index.enable=true"):
        hoodie.write(batch, path, {**plain, "hoodie.index.type": "RECORD_INDEX"})
    # metadata off would delete the index it needs: refused before anything changes
    no_mdt = {**OPTS, "hoodie.metadata.enable": "false"}
    with pytest.raises(ConfigError, match="hoodie.metadata.enable=true"):
        hoodie.write(batch, path, no_mdt)
    assert sorted(p.name for p in (tmp_path / "t" / ".hoodie").iterdir()) == before
    assert "record_index" not in HoodieTable.open(path).config.metadata_partitions
    # hoodie.metadata.record.index.enable=true builds it first, then the write uses it
    hoodie.write(batch, path, OPTS)
    assert _rows(path) == [("sf", "a", "la", 2), ("la", "b", "la", 1)]


def test_a_record_index_naming_a_file_group_the_table_lacks_is_an_error(tmp_path: Path) -> None:
    """The record index out of step with the data (here: a file group removed behind the
    metadata table's back) is an error naming it, never an update lost."""
    path = str(tmp_path / "t")
    hoodie.write(pa.table({"uuid": ["a", "b"], "city": ["sf", "la"], "ts": [1, 1]}), path, OPTS)
    table = HoodieTable.open(path)
    real = MetadataTableReader(table).record_locations(["a"])["a"]
    from hoodie.metadata_table.index_lookup import RecordIndexLocator

    original = RecordIndexLocator.locate
    def stale(self: RecordIndexLocator, keys: pa.Array, workers: int = 1) -> tuple[pa.Array, pa.Array]:
        named = [k == "a" for k in keys.to_pylist()]
        return pa.array(["sf" if n else None for n in named], pa.string()), pa.array(["no-such-group-0" if n else None for n in named], pa.string())

    RecordIndexLocator.locate = stale  # type: ignore[method-assign]
    try:
        with pytest.raises(MetadataOutOfSyncError, match="no-such-group-0"):
            hoodie.write(pa.table({"uuid": ["a"], "city": ["sf"], "ts": [2]}), path, OPTS)
    finally:
        RecordIndexLocator.locate = original  # type: ignore[method-assign]
    assert real.partition == "sf"
    assert _rows(path) == [("sf", "a", "sf", 1), ("la", "b", "la", 1)]
