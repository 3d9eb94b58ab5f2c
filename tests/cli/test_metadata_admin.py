"""``hoodie metadata create | delete | init``: build a metadata table on a table that has
none (hoodie's, written with it off), delete it, build it again; each prints how long it
took, and what it builds lists exactly the committed files. A table with a write in
progress is refused (that writer would complete without updating it)."""
from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pytest
from mdt_checks import check_files

import hoodie
from hoodie.errors import UnsupportedTableError
from hoodie.metadata_table import MetadataTableReader
from hoodie.table.table import HoodieTable
from hoodie.timeline.instant import Action

OPTIONS = {
    "hoodie.table.name": "t", "hoodie.datasource.write.recordkey.field": "id", "hoodie.datasource.write.partitionpath.field": "p",
    "hoodie.datasource.write.precombine.field": "ts", "hoodie.datasource.write.table.type": "MERGE_ON_READ",
}
WITHOUT_MDT = {**OPTIONS, "hoodie.metadata.enable": "false"}


def _table(tmp_path: Path) -> str:
    path = str(tmp_path / "t")
    for ts in range(1, 4):
        hoodie.write(pa.table({"id": [ts, ts + 1, ts + 2], "p": ["a", "b", "c"], "ts": [ts] * 3}), path, WITHOUT_MDT)
    return path


def _check(path: str) -> list[str]:
    table = HoodieTable.open(path)
    return check_files(MetadataTableReader(table), table)


def test_create_delete_init(cli, tmp_path: Path) -> None:
    path = _table(tmp_path)
    result = cli("metadata", "create", path)
    assert result.exit_code == 0, result.output
    last = result.stdout.rstrip().splitlines()[-1]
    assert last.startswith("Created the metadata table of t (files) in ") and last.endswith(" s")
    assert "partition=files" in result.stdout  # the metrics of the partition built
    assert _check(path) == ["a", "b", "c"]

    again = cli("metadata", "create", path)
    assert again.exit_code != 0 and "already has a metadata table (files)" in again.output

    result = cli("metadata", "init", path, "--json")
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    assert out["partitions"] == ["files"] and out["duration_s"] >= 0
    # the files partition's records: the list of partitions and each partition's files
    [built] = out["metrics"]
    assert (built["metric"], built["label"], built["value"], built["count"]) == ("initialize", "partition", "files", 1)
    assert (built["records"], built["file_groups"]) == (4, 1) and built["seconds"] > 0
    mdt = HoodieTable.open(f"{path}/.hoodie/metadata")
    assert [i.timestamp for i in mdt.timeline.completed()] == [f"{HoodieTable.open(path).timeline.completed()[-1].timestamp}010"]
    _check(path)

    # writes with it on (the default) keep it
    hoodie.write(pa.table({"id": [9], "p": ["a"], "ts": [9]}), path, OPTIONS)
    _check(path)

    result = cli("metadata", "delete", path)
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("Deleted the metadata table of t in ")
    table = HoodieTable.open(path)
    assert not table.config.metadata_partitions and not (tmp_path / "t" / ".hoodie" / "metadata").exists()
    assert cli("metadata", "delete", path).stdout.startswith("There was no metadata table to delete in t")


def test_building_refuses_a_write_in_progress(cli, tmp_path: Path) -> None:
    path = _table(tmp_path)
    timeline = HoodieTable.open(path).timeline
    pending = timeline.transition_to_inflight(timeline.request_new(Action.DELTA_COMMIT), b"{}")
    result = cli("metadata", "create", path)
    assert result.exit_code != 0 and f"write {pending.timestamp} (deltacommit) is in progress" in result.output
    assert not HoodieTable.open(path).config.metadata_partitions


def test_create_asks_whether_hoodie_writes_the_table_once_and_before_anything_is_written(cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = _table(tmp_path)
    asked: list[str] = []
    writable = HoodieTable.require_writable

    def counted(self: HoodieTable, what: str = "write to") -> None:
        asked.append(what)
        writable(self, what)

    monkeypatch.setattr(HoodieTable, "require_writable", counted)
    assert cli("metadata", "create", path).exit_code == 0
    assert asked == ["create the metadata table of"]

    # refused (as a table of a version hoodie does not write is): nothing written, the lock included
    def refused(self: HoodieTable, what: str = "write to") -> None:
        raise UnsupportedTableError(f"cannot {what} {self.base_path}: refused by the test")

    monkeypatch.setattr(HoodieTable, "require_writable", refused)
    hoodie_folder = Path(path) / ".hoodie"
    before = sorted(hoodie_folder.rglob("*"))
    result = cli("metadata", "init", path)
    assert result.exit_code != 0 and "cannot initialise the metadata table of" in result.output
    assert sorted(hoodie_folder.rglob("*")) == before
    result = cli("metadata", "create", path)  # (it has one: the refusal still comes first)
    assert result.exit_code != 0 and "cannot create the metadata table of" in result.output
