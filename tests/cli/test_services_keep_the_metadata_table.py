"""The CLI's table services (clean, compaction, savepoint and restore) on a table that
keeps a metadata table update it first, as a write does: each instant they complete has
its delta commit there, and the metadata table lists exactly the committed files. The
writes and the commands are given no ``hoodie.metadata.enable``: on by default."""
from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest
from mdt_checks import built_again_for, check_files, services_after_a_hudi_drop

import hoodie
from hoodie.metadata_table import MetadataTableReader
from hoodie.table.table import HoodieTable
from hoodie.timeline.instant import Action

OPTIONS = {
    "hoodie.table.name": "t", "hoodie.datasource.write.recordkey.field": "id", "hoodie.datasource.write.partitionpath.field": "p",
    "hoodie.datasource.write.precombine.field": "ts", "hoodie.datasource.write.table.type": "MERGE_ON_READ",
    "hoodie.clean.automatic": "false", "hoodie.archive.automatic": "false",
    "hoodie.metadata.compact.max.delta.commits": "100",  # the restore undoes delta commits, none compacted
}


def _updates(path: str, first: int, count: int) -> list[str]:
    batch = lambda ts: pa.table({"id": [1, 2, 3, 4], "p": ["a", "a", "b", "b"], "ts": [ts] * 4})  # noqa: E731
    return [hoodie.write(batch(ts), path, OPTIONS) for ts in range(first, first + count)]


def _check(path: str) -> set[str]:
    table = HoodieTable.open(path)
    check_files(MetadataTableReader(table), table)
    mdt = HoodieTable.open(f"{path}/.hoodie/metadata")
    deltas = {i.timestamp for i in mdt.timeline.completed([Action.DELTA_COMMIT])}
    assert {i.timestamp for i in table.timeline.completed()} <= deltas
    return deltas


def test_cli_services_update_the_metadata_table(cli, tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    _updates(path, 1, 5)
    _check(path)
    for args in (
        ("compaction", "schedule", path, "--force"),
        ("compaction", "run", path),
        ("clean", path, "-o", "hoodie.cleaner.commits.retained=1"),
        ("savepoint", "create", path),
    ):
        if args[0] == "clean":
            _updates(path, 6, 2)
        result = cli(*args)
        assert result.exit_code == 0, result.output
        _check(path)
    actions = {i.action for i in HoodieTable.open(path).timeline.completed()}
    assert {Action.COMMIT, Action.CLEAN, Action.SAVEPOINT} <= actions
    savepoint = HoodieTable.open(path).timeline.completed([Action.SAVEPOINT])[-1].timestamp
    later = _updates(path, 10, 2)
    result = cli("restore", path, "--to", savepoint, "--yes")
    assert result.exit_code == 0, result.output
    deltas = _check(path)
    assert not set(later) & deltas  # the restored writes' delta commits are undone


@pytest.mark.parametrize("command", [("clean", "{path}", "-o", "hoodie.cleaner.commits.retained=1"), ("compaction", "run", "{path}")])
def test_a_cli_service_builds_again_a_metadata_table_apache_hudi_dropped_a_partition_of(cli, tmp_path: Path, command: tuple[str, ...]) -> None:
    """A partition Apache Hudi 0.15 dropped (its folder deleted, the metadata table's
    completed instants still naming its files) is detected by the service as by a write:
    the metadata table is built again, with the partitions the table names, before the
    service completes into it; its own services and its readers work on."""
    path = str(tmp_path / "t")
    services_after_a_hudi_drop(tmp_path / "t", pending_compaction=command[0] == "compaction")
    before = set(HoodieTable.open(path).timeline.completed())

    result = cli(*(arg.format(path=path) for arg in command))
    assert result.exit_code == 0, result.output
    assert "whose folder another writer deleted" in result.output and "building it again from a listing before the table service" in result.output
    assert built_again_for(path, before).action == (Action.CLEAN if command[0] == "clean" else Action.COMMIT)
    assert cli("metadata", "stats", path).exit_code == 0  # (which failed too)


def test_a_dry_run_leaves_such_a_metadata_table_as_it_is(cli, tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    services_after_a_hudi_drop(tmp_path / "t", pending_compaction=False)
    mdt = sorted(p.name for p in (tmp_path / "t" / ".hoodie" / "metadata" / ".hoodie").iterdir())
    result = cli("clean", path, "--dry-run", "-o", "hoodie.cleaner.commits.retained=1")
    assert result.exit_code == 0 and "would delete" in result.output, result.output
    assert sorted(p.name for p in (tmp_path / "t" / ".hoodie" / "metadata" / ".hoodie").iterdir()) == mdt
