"""The reader's merge of a metadata-table slice, on a metadata table laid out here with
the writer side of the codec (real HFiles and log files on disk, a version-6 timeline):
base file first, then log blocks in order; a later file list adds and removes files,
delete blocks remove keys, a rollback command drops its target's blocks, and blocks of
instants pending in either table are not seen. Record-index keys are found in the file
group their hash names."""
from __future__ import annotations

from pathlib import Path

import pytest
from mdt_layout import INIT, base_hfile, create_tables, delta_commits, files_record, hfile_block

from hoodie.formats.log import write_log_file
from hoodie.formats.log.blocks import CommandBlock, DeleteBlock, DeleteRecord
from hoodie.metadata_table import KeyLocation, MetadataTableReader
from hoodie.metadata_table.keys import file_group_index
from hoodie.metadata_table.records import MetadataRecord, RecordLocation
from hoodie.storage.local import LocalStorage

T1, T2, T3, T4, T5, RB = (f"2025010100000{i}000" for i in range(1, 7))
FILE_ID = "4f8e6c1a-3b2d-4e5f-9a7b-1c2d3e4f5a6b-0"
_files, _block, _base, _instants = files_record, hfile_block, base_hfile, delta_commits


def _location(key: str, partition: str, instant_ms: int = 1735689600000) -> MetadataRecord:
    return MetadataRecord(key, 5, RecordLocation(partition, FILE_ID, instant_ms))


@pytest.fixture
def table(tmp_path: Path) -> Path:
    base = tmp_path / "t"
    mdt = create_tables(base, "files,record_index")
    # T4 failed in the data table after its metadata delta commit; T5 is pending in both
    _instants(base / ".hoodie", [T1, T2, T3], [T4, T5])
    _instants(mdt / ".hoodie", [INIT, T1, T2, T3, T4], [T5])
    (mdt / ".hoodie" / f"{RB}.rollback").write_bytes(b"")  # (its metadata is not read here)
    storage = LocalStorage()
    files = mdt / "files"
    _base(files / f"files-0000-0_0-0-0_{INIT}.hfile",
          _files("__all_partitions__", p1=0, p2=0), _files("p1", a_parquet=100, b_parquet=5), _files("p2", c_parquet=50))
    write_log_file(storage, str(files / f".files-0000-0_{INIT}.log.1_0-0-0"), [
        _block(T1, _files("p1", b_parquet=9, d_parquet=10), _files("__all_partitions__", p3=0), _files("p3", e_parquet=7)),
        _block(T2, _files("p1", a_parquet=-1), _files("p2", c_parquet=-1, f_parquet=3)),
        _block(T3, _files("p3", gone_parquet=1)),
        CommandBlock.rollback(RB, T3),
        _block(T3, _files("p3", kept_parquet=2)),  # written again after the rollback: counts
        _block(T4, _files("p1", failed_parquet=1)),
        _block(T5, _files("p1", pending_parquet=1)),
    ])
    # the record index: two file groups, each key in the one its hash names
    keys = [f"key{i}" for i in range(12)]
    for group in (0, 1):
        mine = [k for k in keys if file_group_index(k, 2) == group]
        folder = mdt / "record_index"
        _base(folder / f"record-index-000{group}-0_0-0-0_{INIT}.hfile", *(_location(k, "p1") for k in mine))
        write_log_file(storage, str(folder / f".record-index-000{group}-0_{INIT}.log.1_0-0-0"), [
            _block(T1, *(_location(k, "p2", 1735689601000) for k in mine[:1])),
            DeleteBlock.create([DeleteRecord(k, None) for k in mine[1:2]], T2),
            _block(T4, *(_location(k, "p3") for k in mine[2:3])),
        ])
    return base


def test_files_merge_in_order(table: Path) -> None:
    reader = MetadataTableReader.open(str(table))
    assert reader.all_partition_paths() == ["p1", "p2", "p3"]
    assert reader.files_in_many(["p1", "p2", "p3", "p4"]) == {
        "p1": {"b.parquet": 9, "d.parquet": 10},  # a deleted; b grew; T4 and T5 unseen
        "p2": {"f.parquet": 3},
        "p3": {"e.parquet": 7, "kept.parquet": 2},  # T3's first block rolled back
        "p4": {},
    }


def test_record_index_merges_per_file_group(table: Path) -> None:
    reader = MetadataTableReader.open(str(table))
    keys = [f"key{i}" for i in range(12)]
    located = reader.record_locations(keys)
    for group in (0, 1):
        mine = [k for k in keys if file_group_index(k, 2) == group]
        assert located[mine[0]] == KeyLocation("p2", FILE_ID, "20250101000001000")  # updated by T1
        assert mine[1] not in located  # deleted by T2
        assert located[mine[2]].partition == "p1"  # T4's move is not seen
        assert all(located[k] == KeyLocation("p1", FILE_ID, "20250101000000000") for k in mine[3:])
    assert {r.key for r in reader.records("record_index")} == set(located)
