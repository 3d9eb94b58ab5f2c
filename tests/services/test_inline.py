"""Writers run cleaning and archival after their commits (``hoodie.clean.automatic``,
``hoodie.archive.automatic``), and finish an interrupted restore before writing."""
from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest
from readers import hudi_rs_table

import hoodie
from hoodie.services.archival import read_archived_instants
from hoodie.services.restore import pending_restore, restore_to
from hoodie.services.savepoint import create_savepoint
from hoodie.table.table import HoodieTable

OPTS = {
    "hoodie.table.name": "t",
    "hoodie.datasource.write.recordkey.field": "k",
    "hoodie.datasource.write.precombine.field": "ts",
    "hoodie.index.bloom.num_entries": "500",
    "hoodie.cleaner.commits.retained": "2",
    "hoodie.keep.min.commits": "3",
    "hoodie.keep.max.commits": "4",
}


def snapshot(path: str) -> dict:
    return {r["k"]: r["ts"] for r in hoodie.read(path).to_pylist()}


def hudi_rs(path: str) -> dict:
    return {r["k"]: r["ts"] for r in hudi_rs_table(path).to_pylist()}


def test_writes_clean_and_archive_inline(tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    for ts in range(1, 9):
        hoodie.write(pa.table({"k": ["a", "b"], "ts": [ts, ts]}), path, OPTS)
    table = HoodieTable.open(path)
    assert table.timeline.completed(["clean"]), "automatic cleaning ran"
    versions = list(Path(path).glob("*.parquet"))
    assert len(versions) <= 4, f"old slices were cleaned, {len(versions)} left"
    assert len(table.timeline.completed_writes()) <= 4, "the active timeline was archived"
    assert len(read_archived_instants(table)) >= 4
    assert snapshot(path) == hudi_rs(path) == {"a": 8, "b": 8}


def test_services_can_be_switched_off(tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    opts = {**OPTS, "hoodie.clean.automatic": "false", "hoodie.archive.automatic": "false"}
    for ts in range(1, 7):
        hoodie.write(pa.table({"k": ["a"], "ts": [ts]}), path, opts)
    table = HoodieTable.open(path)
    assert not table.timeline.completed(["clean"])
    assert len(table.timeline.completed_writes()) == 6
    assert len(list(Path(path).glob("*.parquet"))) == 6


def test_a_write_finishes_an_interrupted_restore_first(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = str(tmp_path / "t")
    opts = {**OPTS, "hoodie.clean.automatic": "false", "hoodie.archive.automatic": "false"}
    hoodie.write(pa.table({"k": ["a"], "ts": [1]}), path, opts)
    create_savepoint(HoodieTable.open(path))
    hoodie.write(pa.table({"k": ["a", "b"], "ts": [2, 2]}), path, opts)
    from hoodie.services import restore as r

    def crash(*args, **kwargs):
        raise KeyboardInterrupt("killed mid-restore")

    monkeypatch.setattr(r, "execute_undo", crash)
    with pytest.raises(KeyboardInterrupt):
        restore_to(HoodieTable.open(path), HoodieTable.open(path).timeline.completed_writes()[0].timestamp)
    monkeypatch.undo()
    assert pending_restore(HoodieTable.open(path)) is not None
    hoodie.write(pa.table({"k": ["c"], "ts": [3]}), path, opts)
    assert pending_restore(HoodieTable.open(path)) is None
    assert snapshot(path) == hudi_rs(path) == {"a": 1, "c": 3}
