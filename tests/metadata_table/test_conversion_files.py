"""The ``files`` partition's records of each data action (metadata_table/conversion.py),
folded in order with the metadata payload's merge: equal to the committed files of
tables hoodie writes, through upserts, deletes, compaction, cleaning, insert_overwrite, a
rollback and a restore (test_conversion_hudi015.py compares them with Apache Hudi's)."""
from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from hudi015_samples import sample_records
from mdt_checks import stored_files

import hoodie
from hoodie.errors import FormatError, TableError, UnsafePathError
from hoodie.metadata_table.conversion import MdtRecords, records_for_action, records_for_listing
from hoodie.metadata_table.keys import ALL_PARTITIONS_KEY
from hoodie.metadata_table.records import TYPE_RECORD_INDEX, MetadataRecord, encode_value, merge
from hoodie.metadata_table.settings import FILES, MetadataSettings
from hoodie.services.restore import restore_to
from hoodie.services.rollback import rollback_failed_writes
from hoodie.services.savepoint import create_savepoint
from hoodie.table.table import HoodieTable
from hoodie.timeline import avro_metadata as avro
from hoodie.timeline.instant import Action, Instant, State
from hoodie.timeline.rollback_metadata import RollbackMetadata, RollbackPartitionMetadata
from hoodie.writer.transaction import WriteTransaction

ON = MetadataSettings(enable=True)


def _plain(records: list[MetadataRecord]) -> dict[str, dict[str, list[Any]]]:
    keys = [r.key for r in records]
    assert len(keys) == len(set(keys)), f"one record per key: {keys}"
    return {r.key: {n: [i.size, i.is_deleted] for n, i in r.files.items()} for r in records}


def _empty_table(tmp_path: Path, partitioned: bool = True) -> HoodieTable:
    props = {"hoodie.table.name": "t", "hoodie.table.type": "MERGE_ON_READ", "hoodie.table.version": "6"}
    if partitioned:
        props["hoodie.table.partition.fields"] = "city"
    return HoodieTable.create(str(tmp_path / "t"), props)


def test_only_the_partitions_asked_for(tmp_path: Path) -> None:
    sample = sample_records()["COPY_ON_WRITE"][0]
    instant = Instant(sample["instant"], sample["action"], State.COMPLETED)
    assert records_for_action(_empty_table(tmp_path), instant, base64.b64decode(sample["content"]), [], ON) == {}


def test_a_savepoint_changes_nothing_and_an_unknown_action_is_refused(tmp_path: Path) -> None:
    table = _empty_table(tmp_path)
    assert records_for_action(table, Instant("20250101000000000", Action.SAVEPOINT, State.COMPLETED), b"", [FILES], ON) == {}
    with pytest.raises(TableError, match="'bogus'"):
        records_for_action(table, Instant("20250101000000000", "bogus", State.COMPLETED), b"", [FILES], ON)


def test_a_rollback_naming_a_path_outside_its_partition_is_refused(tmp_path: Path) -> None:
    table = _empty_table(tmp_path)
    bad = RollbackMetadata.of(
        "20250101000000002", Instant("20250101000000001", Action.COMMIT, State.COMPLETED),
        {"p": RollbackPartitionMetadata("p", success_delete_files=(f"{table.base_path}/p/..",))}, 1,
    )
    rollback = Instant("20250101000000002", Action.ROLLBACK, State.COMPLETED)
    with pytest.raises(UnsafePathError, match=r"'\.\.'"):
        records_for_action(table, rollback, bad.encode(), [FILES], ON)


def test_listing_records_name_every_partition_and_file(tmp_path: Path) -> None:
    listing = {"a": {"f1.parquet": 10, ".f1_1.log.1_0-1-0": 5}, "b": {}}
    records = records_for_listing(_empty_table(tmp_path), listing, [FILES], ON, "20250101000000000")
    assert _plain(records[FILES]) == {
        ALL_PARTITIONS_KEY: {"a": [0, False], "b": [0, False]},
        "a": {"f1.parquet": [10, False], ".f1_1.log.1_0-1-0": [5, False]},
        "b": {},
    }
    flat = records_for_listing(_empty_table(tmp_path / "n", partitioned=False), {"": {"f.parquet": 1}}, [FILES], ON, "1")
    assert _plain(flat[FILES]) == {ALL_PARTITIONS_KEY: {".": [0, False]}, ".": {"f.parquet": [1, False]}}


# --- folded over tables hoodie writes -----------------------------------------------------------


class Folded:
    """The files partition of a table, as the records of its completed instants build it."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.seen: set[tuple[str, str]] = set()
        self.state: dict[str, MetadataRecord] = {}

    def catch_up(self) -> None:
        table = HoodieTable.open(self.path)
        for instant in table.timeline.completed():
            if (instant.timestamp, instant.action) in self.seen:
                continue
            self.seen.add((instant.timestamp, instant.action))
            records: MdtRecords = records_for_action(table, instant, table.timeline.read_content(instant), [FILES], ON)
            for record in records.get(FILES, []):
                self.state[record.key] = merge(self.state.get(record.key), record)

    def check(self) -> None:
        """Partitions and files equal the committed files storage holds."""
        self.catch_up()
        table = HoodieTable.open(self.path)
        view = table.local_view()
        partitions = view.all_partition_paths()
        listed = self.state[ALL_PARTITIONS_KEY].live_files() if ALL_PARTITIONS_KEY in self.state else {}
        assert sorted(listed) == sorted(p or "." for p in partitions)
        for p in partitions:
            record = self.state.get(p or ".")
            assert (record.live_files() if record else {}) == stored_files(table, p), p


def _write(path: str, options: dict[str, str], keys: list[int], ts: int, operation: str = "upsert", parts: str | None = None) -> str:
    batch = pa.table({
        "key": [f"k{k:03d}" for k in keys],
        "part": [parts or ("p0", "p1", "p2")[k % 3] for k in keys],
        "ts": [ts] * len(keys),
        "val": [float(ts * 100 + k) for k in keys],
    })
    return hoodie.write(batch, path, {**options, "hoodie.datasource.write.operation": operation})


def _options(table_type: str, partitioned: bool) -> dict[str, str]:
    opts = {
        "hoodie.table.name": "conv",
        "hoodie.datasource.write.recordkey.field": "key",
        "hoodie.datasource.write.precombine.field": "ts",
        "hoodie.datasource.write.table.type": table_type,
        "hoodie.compact.inline": "true",
        "hoodie.compact.inline.max.delta.commits": "2",
        "hoodie.cleaner.commits.retained": "1",
        # the records are folded here, from the completions: no metadata table of the writer's
        "hoodie.metadata.enable": "false",
    }
    if partitioned:
        opts["hoodie.datasource.write.partitionpath.field"] = "part"
    else:
        opts["hoodie.datasource.write.keygenerator.class"] = "org.apache.hudi.keygen.NonpartitionedKeyGenerator"
    return opts


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
@pytest.mark.parametrize("partitioned", [True, False], ids=["partitioned", "flat"])
def test_folded_records_equal_the_committed_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, table_type: str, partitioned: bool
) -> None:
    path = str(tmp_path / "t")
    opts = _options(table_type, partitioned)
    folded = Folded(path)
    _write(path, opts, list(range(12)), 1, "insert")
    folded.check()
    savepoint = _write(path, opts, [0, 3, 6, 12, 13], 2)
    folded.check()
    create_savepoint(HoodieTable.open(path), savepoint)
    _write(path, opts, [1, 4, 7], 3)  # merge-on-read: compacts, then the clean deletes older slices
    folded.check()
    _write(path, opts, [2, 5], 4, "delete")
    folded.check()
    _write(path, opts, [30, 31], 5, "insert_overwrite", parts="p0")  # replaced groups stay listed until cleaned
    folded.check()
    _write(path, opts, [0, 1, 2], 6)
    _write(path, opts, [3, 4, 5], 7)
    folded.check()

    # a write that dies before its commit: the rollback lists its files as deleted
    monkeypatch.setattr(WriteTransaction, "commit", lambda *a, **k: (_ for _ in ()).throw(RuntimeError("died")))
    monkeypatch.setattr(WriteTransaction, "abort", lambda self: None)
    with pytest.raises(RuntimeError, match="died"):
        _write(path, opts, [0, 40], 8)
    monkeypatch.undo()
    (rolled,) = rollback_failed_writes(HoodieTable.open(path))
    assert rolled.deleted_files
    folded.check()
    rollback = HoodieTable.open(path).timeline.completed([Action.ROLLBACK])[-1]
    deleted = {n for r in folded.state.values() for n, i in r.files.items() if i.is_deleted}
    assert {Path(f).name for f in rolled.deleted_files} <= deleted, rollback

    table = HoodieTable.open(path)
    compactions = [i for i in table.timeline.completed([Action.COMMIT]) if table.commit_metadata(i).operation_type == "COMPACT"]
    assert bool(compactions) == (table_type == "MERGE_ON_READ")

    # a restore undoes every write after the savepoint: their files leave the listing
    restore_to(HoodieTable.open(path), savepoint)
    folded.check()
    actions = {action for _, action in folded.seen}
    assert actions >= {Action.COMMIT, Action.REPLACE_COMMIT, Action.CLEAN, Action.ROLLBACK, Action.RESTORE}
    assert (Action.DELTA_COMMIT in actions) == (table_type == "MERGE_ON_READ")


def test_a_clean_that_deletes_a_partition_removes_it_from_the_partition_list(tmp_path: Path) -> None:
    """Apache Hudi's cleaner deletes a partition whose file groups were all replaced
    (``isPartitionDeleted``): the partition leaves ``__all_partitions__``."""
    from hoodie.timeline.action_metadata import CleanMetadata, CleanPartitionMetadata

    clean = CleanMetadata("20250101000000003", "", "20250101000000002", {
        "a": CleanPartitionMetadata("a", "KEEP_LATEST_COMMITS", ("f1.parquet",), ("f1.parquet",), (), True),
        "b": CleanPartitionMetadata("b", "KEEP_LATEST_COMMITS", ("f2.parquet",), ("f2.parquet",)),
    })
    decoded = CleanMetadata.from_avro(avro.decode(clean.encode(), "test"), "test")
    assert decoded.partition_metadata["a"].is_partition_deleted and not decoded.partition_metadata["b"].is_partition_deleted
    instant = Instant("20250101000000003", Action.CLEAN, State.COMPLETED)
    records = records_for_action(_empty_table(tmp_path), instant, clean.encode(), [FILES], ON)
    assert _plain(records[FILES]) == {
        "a": {"f1.parquet": [0, True]},
        "b": {"f2.parquet": [0, True]},
        ALL_PARTITIONS_KEY: {"a": [0, True]},
    }


def test_a_record_index_deletion_is_no_value_to_encode() -> None:
    """A deleted key goes in a delete block: encoding it as a value is refused."""
    with pytest.raises(FormatError, match="'k1'.*delete block"):
        encode_value(MetadataRecord("k1", TYPE_RECORD_INDEX, None))
