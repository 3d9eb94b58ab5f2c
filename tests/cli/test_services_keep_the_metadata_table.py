"""The CLI's table services (clean, compaction, savepoint and restore) on a table that
keeps a metadata table update it first, as a write does: each instant they complete has
its delta commit there, and the metadata table lists exactly the committed files. The
writes and the commands are given no ``hoodie.metadata.enable``: on by default."""
from __future__ import annotations

from pathlib import Path

import pyarrow as pa
from mdt_checks import check_files

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
