"""The services' Python API on a table whose metadata partition Apache Hudi 0.15 dropped
(its folder deleted, the metadata table's completed instants still naming its files):
:func:`hoodie.services.open_for_services` checks the metadata table as a write does and
builds it again, under the commit lock, with the partitions the table names, so that the
service's completion and the metadata table's own services work on it."""
from __future__ import annotations

import logging
from pathlib import Path

import pyarrow as pa
import pytest
from mdt_checks import INDEXED_MOR, built_again_for, services_after_a_hudi_drop

import hoodie
from hoodie.services import CleanResult, CleanSettings, clean, open_for_services, run_compaction
from hoodie.storage.local import LocalStorage
from hoodie.table.table import HoodieTable
from hoodie.timeline.instant import Action


@pytest.mark.parametrize("service", ["clean", "compaction"])
def test_a_service_builds_again_a_metadata_table_apache_hudi_dropped_a_partition_of(tmp_path: Path, caplog: pytest.LogCaptureFixture, service: str) -> None:
    path = str(tmp_path / "t")
    services_after_a_hudi_drop(tmp_path / "t", pending_compaction=service == "compaction")
    before = set(HoodieTable.open(path).timeline.completed())
    with caplog.at_level(logging.WARNING, logger="hoodie"):
        table = open_for_services(path, INDEXED_MOR)
        if service == "clean":
            assert isinstance(clean(table, CleanSettings(commits_retained=1)), CleanResult)
        else:
            run_compaction(table)
    assert "whose folder another writer deleted" in caplog.text and "before the table service" in caplog.text
    assert built_again_for(path, before).action == (Action.CLEAN if service == "clean" else Action.COMMIT)


def test_a_sound_metadata_table_is_kept_with_the_partitions_the_table_names(tmp_path: Path) -> None:
    """A service given no index options (Apache Hudi's defaults: every index off) neither
    drops a partition, as a write with them would, nor builds anything again."""
    path = tmp_path / "t"
    hoodie.write(pa.table({"id": [1, 2], "p": ["a", "b"], "ts": [1, 1]}), str(path), INDEXED_MOR)
    instants = sorted(p.name for p in (path / ".hoodie" / "metadata" / ".hoodie").iterdir())
    table = open_for_services(str(path))
    assert table.config.metadata_partitions == ("bloom_filters", "column_stats", "files")
    assert sorted(p.name for p in (path / ".hoodie" / "metadata" / ".hoodie").iterdir()) == instants


def test_metadata_stats_describes_a_partition_apache_hudi_dropped_without_reading_it(tmp_path: Path) -> None:
    """`hoodie metadata stats` before any write or service built the metadata table again:
    the dropped partition, gone from storage and from hoodie.properties but still named by
    the metadata timeline, is not described and its files not looked for."""
    from typer.testing import CliRunner

    from hoodie.cli.main import app
    from hoodie.metadata_table import metadata_table_stats

    path = tmp_path / "t"
    services_after_a_hudi_drop(path, pending_compaction=False)
    report = metadata_table_stats(HoodieTable.open(str(path)))
    assert "column_stats" not in report.on_storage + report.complete
    assert {s.partition for s in report.slices} == {"bloom_filters", "files"} == set(report.on_storage)
    shown = CliRunner().invoke(app, ["metadata", "stats", str(path), "--json"])
    assert shown.exit_code == 0, shown.output
    assert '"bloom_filters": "complete"' in shown.stdout and "column_stats" not in shown.stdout


def test_metadata_stats_of_a_named_partition_gone_from_storage_is_damage(tmp_path: Path) -> None:
    import shutil

    from hoodie.errors import DamagedTableError
    from hoodie.metadata_table import metadata_table_stats

    path = tmp_path / "t"
    hoodie.write(pa.table({"id": [1, 2], "p": ["a", "b"], "ts": [1, 1]}), str(path), INDEXED_MOR)
    shutil.rmtree(path / ".hoodie" / "metadata" / "bloom_filters")  # still named by hoodie.properties
    with pytest.raises(DamagedTableError, match="bloom_filters"):
        metadata_table_stats(HoodieTable.open(str(path)))


class LocksTaken(LocalStorage):
    """Local storage that records each commit lock created."""

    def __init__(self) -> None:
        super().__init__()
        self.locks: list[str] = []

    def create_new(self, path: str, data: bytes, durable: bool = True) -> None:
        if path.endswith("/commit.lock"):
            self.locks.append(path)
        super().create_new(path, data, durable)


def test_the_commit_lock_is_taken_only_for_a_metadata_table_to_build_again(tmp_path: Path) -> None:
    """A service opening a sound table does not wait for a writer's commit: it takes no
    lock; one whose metadata table must be built again takes it."""
    sound, dropped = tmp_path / "sound", tmp_path / "dropped"
    hoodie.write(pa.table({"id": [1, 2], "p": ["a", "b"], "ts": [1, 1]}), str(sound), INDEXED_MOR)
    services_after_a_hudi_drop(dropped, pending_compaction=False)
    storage = LocksTaken()
    open_for_services(str(sound), INDEXED_MOR, storage)
    assert storage.locks == []
    open_for_services(str(dropped), INDEXED_MOR, storage)
    assert storage.locks == [f"{dropped}/.hoodie/.aux/.claims/commit.lock"]
