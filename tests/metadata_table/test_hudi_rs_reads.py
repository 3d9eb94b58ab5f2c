"""hudi-rs reads the tables hoodie writes with the metadata table on: after every write
of a sequence (inserts, upserts, deletes, an insert_overwrite; inline compaction and
cleaning; all four metadata partitions, the metadata table compacting itself every three
delta commits), on copy-on-write and merge-on-read, hudi-rs's snapshot, with and without
``hoodie.metadata.enable=true``, holds exactly the model's rows.

hudi-rs 0.5.0 reads a metadata table on table versions 8 and 9 only
(``is_metadata_table_enabled``): on version 6, hoodie's tables as Apache Hudi 0.15's, it
lists storage whatever the option says. A data file outside the timeline's files (on
storage, not in the metadata table) shows it: hudi-rs reads it, hoodie's read through the
metadata table does not (docs/apache-hudi.md)."""
from __future__ import annotations

import shutil
from pathlib import Path

import pyarrow as pa
import pytest
from readers import hudi_rs_table

import hoodie
from hoodie.metadata_table import MetadataTableReader
from hoodie.table.table import HoodieTable
from hoodie.timeline.instant import Action

OPTIONS = {
    "hoodie.table.name": "rs",
    "hoodie.datasource.write.recordkey.field": "id",
    "hoodie.datasource.write.partitionpath.field": "p",
    "hoodie.datasource.write.precombine.field": "ts",
    "hoodie.compact.inline": "true",
    "hoodie.compact.inline.max.delta.commits": "2",
    "hoodie.cleaner.commits.retained": "1",
    "hoodie.metadata.enable": "true",
    "hoodie.metadata.index.column.stats.enable": "true",
    "hoodie.metadata.index.bloom.filter.enable": "true",
    "hoodie.metadata.record.index.enable": "true",
    "hoodie.metadata.compact.max.delta.commits": "3",
}
#: (keys, ts, operation)
STEPS = [
    (range(0, 30), 1, "insert"),
    (range(20, 40), 2, "upsert"),
    ([0, 5, 21, 33], 3, "delete"),
    (range(40, 45), 4, "insert_overwrite"),  # replaces the file groups of the partitions it writes
    (range(10, 50, 3), 5, "upsert"),
    ([11, 43], 6, "delete"),
    (range(0, 50, 7), 7, "upsert"),
]
THROUGH_MDT = {"hoodie.metadata.enable": "true"}


def _batch(keys: range | list[int], ts: int) -> pa.Table:
    keys = list(keys)
    return pa.table({"id": [f"k{k:03d}" for k in keys], "p": [f"p{k % 3}" for k in keys], "ts": [ts] * len(keys), "v": [k * ts for k in keys]})


def _rows(table: pa.Table) -> dict[str, int]:
    rows = table.select(["id", "v"]).to_pylist()
    out = {r["id"]: r["v"] for r in rows}
    assert len(out) == len(rows), f"a key read twice: {sorted(r['id'] for r in rows)}"
    return out


def _apply(model: dict[str, int], keys: range | list[int], ts: int, op: str) -> dict[str, int]:
    if op == "delete":
        return {k: v for k, v in model.items() if k not in {f"k{n:03d}" for n in keys}}
    if op == "insert_overwrite":
        touched = {f"p{n % 3}" for n in keys}
        model = {k: v for k, v in model.items() if f"p{int(k[1:]) % 3}" not in touched}
    return {**model, **{f"k{n:03d}": n * ts for n in keys}}


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_hudi_rs_reads_every_write_of_a_table_with_a_metadata_table(tmp_path: Path, table_type: str) -> None:
    path = tmp_path / "t"
    model: dict[str, int] = {}
    for n, (keys, ts, op) in enumerate(STEPS):
        hoodie.write(_batch(keys, ts), str(path), {**OPTIONS, "hoodie.datasource.write.table.type": table_type, "hoodie.datasource.write.operation": op})
        model = _apply(model, keys, ts, op)
        assert _rows(hudi_rs_table(path, THROUGH_MDT)) == model, f"hudi-rs through the metadata table, after write {n} ({op})"
        assert _rows(hudi_rs_table(path)) == model, f"hudi-rs, after write {n} ({op})"
    table = HoodieTable.open(str(path))
    assert set(table.config.metadata_partitions) == {"files", "column_stats", "bloom_filters", "record_index"}
    actions = {i.action for i in table.timeline.completed()}
    assert {Action.CLEAN, Action.REPLACE_COMMIT} <= actions and (table_type == "COPY_ON_WRITE" or Action.COMMIT in actions), actions
    assert MetadataTableReader(table).table.timeline.completed([Action.COMMIT]), "the metadata table never compacted itself"

    # a stray copy of a base file under another file id, at a completed instant: on
    # storage, not in the metadata table
    base = next(s.base_file for s in table.local_view().latest_slices("p1") if s.base_file is not None)
    shutil.copyfile(base.path, Path(base.path).with_name("aaaaaaaa" + base.file_name[8:]))
    assert _rows(hoodie.read(str(path), THROUGH_MDT)) == model
    for options in (THROUGH_MDT, {}):
        with pytest.raises(AssertionError, match="a key read twice"):
            _rows(hudi_rs_table(path, options))
