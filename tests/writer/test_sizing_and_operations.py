"""File sizing (small-file packing, new groups sized from the average record size) and the
semantics of each write operation."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

import hoodie
from hoodie.table.table import HoodieTable

OPTS = {
    "hoodie.table.name": "t",
    "hoodie.datasource.write.recordkey.field": "uuid",
    "hoodie.datasource.write.partitionpath.field": "city",
    "hoodie.datasource.write.precombine.field": "ts",
    "hoodie.index.bloom.num_entries": "200",
    "hoodie.parquet.compression.codec": "snappy",
}


def batch(start: int, n: int, city: str = "sf", ts: int = 1) -> pa.Table:
    return pa.table({
        "uuid": [f"k{i:06d}" for i in range(start, start + n)],
        "city": [city] * n,
        "ts": [ts] * n,
        "payload": ["x" * 50] * n,
    })


def latest_groups(path: str, partition: str = "sf") -> dict[str, int]:
    view = HoodieTable.open(path).view()
    return {s.file_id: s.base_file.size for s in view.latest_slices(partition)}


def test_inserts_fill_small_files_before_new_groups(tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    opts = {**OPTS, "hoodie.parquet.small.file.limit": "200000", "hoodie.parquet.max.file.size": "400000"}
    hoodie.write(batch(0, 100), path, opts)
    first = latest_groups(path)
    assert len(first) == 1
    hoodie.write(batch(100, 100), path, opts)
    second = latest_groups(path)
    assert set(second) == set(first), "the second batch of inserts went into the small file"
    assert HoodieTable.open(path).view().latest_slices("sf")[0].base_file.size > next(iter(first.values()))
    assert hoodie.read(path).num_rows == 200


def test_new_groups_are_sized_from_the_average_record_size(tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    # no small files; 2,000 records of an estimated 100 bytes into files of 50,000 bytes
    opts = {**OPTS, "hoodie.parquet.small.file.limit": "0", "hoodie.parquet.max.file.size": "50000", "hoodie.copyonwrite.record.size.estimate": "100"}
    hoodie.write(batch(0, 2000), path, opts)
    table = HoodieTable.open(path)
    counts = sorted(table.commit_metadata(table.timeline.completed_writes()[0]).partition_to_write_stats["sf"], key=lambda s: s.numWrites)
    assert len(counts) == 4  # ceil(2000 / (50000 // 100))
    assert sum(s.numWrites for s in counts) == 2000
    assert all(300 <= s.numWrites <= 700 for s in counts), [s.numWrites for s in counts]


def test_later_commits_use_the_measured_record_size(tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    opts = {
        **OPTS,
        "hoodie.parquet.small.file.limit": "1000",
        "hoodie.parquet.max.file.size": "100000",
        "hoodie.copyonwrite.record.size.estimate": "10000",
        "hoodie.record.size.estimation.threshold": "0",
    }
    hoodie.write(batch(0, 50), path, opts)  # estimate 10,000 bytes -> 10 records per group
    assert len(latest_groups(path)) == 5
    hoodie.write(batch(50, 1000, city="nyc"), path, opts)  # measured ~ a few hundred bytes per record
    assert len(latest_groups(path, "nyc")) < 10


def test_insert_does_not_look_up_existing_keys_but_upsert_does(tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    opts = {**OPTS, "hoodie.parquet.small.file.limit": "0"}
    hoodie.write(batch(0, 3), path, {**opts, "hoodie.datasource.write.operation": "insert"})
    hoodie.write(batch(0, 1, ts=5), path, {**opts, "hoodie.datasource.write.operation": "insert"})
    assert sorted(hoodie.read(path).column("uuid").to_pylist()) == ["k000000", "k000000", "k000001", "k000002"]
    path2 = str(tmp_path / "u")
    hoodie.write(batch(0, 3), path2, opts)
    hoodie.write(batch(0, 1, ts=5), path2, {**opts, "hoodie.datasource.write.operation": "insert", "hoodie.datasource.write.insert.drop.duplicates": "true"})
    hoodie.write(batch(1, 1, ts=5), path2, opts)
    got = {r["uuid"]: r["ts"] for r in hoodie.read(path2).to_pylist()}
    assert got == {"k000000": 1, "k000001": 5, "k000002": 1}


def test_bulk_insert_writes_new_file_groups_without_packing(tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    hoodie.write(batch(0, 10), path, OPTS)
    hoodie.write(batch(10, 10), path, {**OPTS, "hoodie.datasource.write.operation": "bulk_insert"})
    table = HoodieTable.open(path)
    meta = table.commit_metadata(table.timeline.completed_writes()[-1])
    assert meta.operation_type == "BULK_INSERT"
    assert all(s.prevCommit == "null" for s in meta.write_stats())
    assert len(latest_groups(path)) == 2
    assert hoodie.read(path).num_rows == 20


def test_lower_ordering_value_does_not_overwrite(tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    hoodie.write(batch(0, 2, ts=10), path, OPTS)
    hoodie.write(pa.table({"uuid": ["k000000", "k000001"], "city": ["sf", "sf"], "ts": [9, 11], "payload": ["old", "new"]}), path, OPTS)
    got = {r["uuid"]: r["payload"] for r in hoodie.read(path).to_pylist()}
    assert got == {"k000000": "x" * 50, "k000001": "new"}


def test_commit_metadata_is_complete(tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    hoodie.write(batch(0, 5), path, OPTS)
    hoodie.write(pa.concat_tables([batch(0, 2, ts=3), batch(5, 1)]), path, OPTS)
    table = HoodieTable.open(path)
    meta = table.commit_metadata(table.timeline.completed_writes()[-1])
    (stat,) = meta.write_stats()
    assert (stat.numWrites, stat.numUpdateWrites, stat.numInserts, stat.numDeletes) == (6, 2, 1, 0)
    assert stat.prevCommit == table.timeline.completed_writes()[0].timestamp
    assert stat.fileSizeInBytes == stat.totalWriteBytes == (Path(path) / stat.path).stat().st_size
    assert '"name":"t_record","namespace":"hoodie.t"' in meta.schema
    assert meta.operation_type == "UPSERT"


def test_planned_bucket_counts_match_the_profile() -> None:
    from hoodie.writer.planner import (
        PartitionProfile,
        SizingSettings,
        build_plan,
        planned_bucket_counts,
    )

    profiles = {"a": PartitionProfile({}, 1000), "b": PartitionProfile({}, 10)}
    plan = build_plan(profiles, {}, SizingSettings(max_file_size=30000), avg_record_size=100)
    counts = planned_bucket_counts(plan, profiles)
    per_partition = {p: sum(counts[b.bucket_id] for b in plan.buckets if b.partition_path == p) for p in profiles}
    assert per_partition == {"a": 1000, "b": 10}
    assert sorted(counts[b.bucket_id] for b in plan.buckets if b.partition_path == "a") == [100, 300, 300, 300]


def _dictionary_encoded(path: str) -> dict[str, bool]:
    """Per column of the table's base files: whether every chunk is dictionary encoded."""
    out: dict[str, bool] = {}
    for s in HoodieTable.open(path).view().latest_slices_all():
        meta = pq.ParquetFile(s.base_file.path).metadata
        for rg in range(meta.num_row_groups):
            for c in range(meta.num_columns):
                col = meta.row_group(rg).column(c)
                encoded = any("DICTIONARY" in e for e in col.encodings)
                out[col.path_in_schema] = out.get(col.path_in_schema, True) and encoded
    return out


def test_dictionary_encoding_of_written_files(tmp_path: Path) -> None:
    """Meta columns that repeat and low-cardinality data columns are dictionary encoded;
    keys, sequence numbers and mostly distinct columns are not, in new and merged files."""
    path = str(tmp_path / "t")
    rng = np.random.default_rng(3)

    def rows(start: int, n: int) -> pa.Table:
        return pa.table({
            "uuid": [f"k{i:06d}" for i in range(start, start + n)],
            "city": [["sf", "nyc"][i % 2] for i in range(n)],
            "ts": [1] * n,
            "payload": rng.random(n),
            "kind": [["a", "b", "c"][i % 3] for i in range(n)],
        })

    expected = {"_hoodie_commit_time", "_hoodie_partition_path", "_hoodie_file_name", "city", "ts", "kind"}
    hoodie.write(rows(0, 3000), path, OPTS)  # new files
    assert {c for c, d in _dictionary_encoded(path).items() if d} == expected
    hoodie.write(rows(2000, 2000), path, {**OPTS, "hoodie.parquet.small.file.limit": "100000000"})  # merged into them
    assert {c for c, d in _dictionary_encoded(path).items() if d} == expected
    assert hoodie.read(path).num_rows == 4000


def test_dictionary_choice_for_several_files_samples_all_of_them() -> None:
    """Deciding for the rows of several new files at once (a task creating many), the
    sample spreads over every file: a column repeating only in the first file is not
    dictionary encoded, a per-file constant (like the file name) is."""
    from hoodie.formats.parquet import dictionary_columns

    files, rows = 10, 1100
    table = pa.table({
        "name": [f"file{i // rows}" for i in range(files * rows)],
        "late": ["same" if i < rows else f"v{i}" for i in range(files * rows)],
    })
    assert dictionary_columns(table) == ["name", "late"], "the first rows alone look alike"
    assert dictionary_columns(table, spread=True) == ["name"]
