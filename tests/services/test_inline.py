"""Writers run cleaning and archival after their commits (``hoodie.clean.automatic``,
``hoodie.archive.automatic``), and finish an interrupted restore before writing. A service
that fails after the commit does not fail the write: it returns its instant and the
failure is a warning naming the service, the instant and the cause (so is a failure to
remove the markers of the committed write)."""
from __future__ import annotations

import logging
from pathlib import Path

import pyarrow as pa
import pytest
from hostile_paths import forge_clean_outside
from readers import hudi_rs_table

import hoodie
from hoodie.errors import TableServiceError
from hoodie.services.archival import read_archived_instants
from hoodie.services.for_writers import WRITER_SERVICES
from hoodie.services.restore import pending_restore, restore_to
from hoodie.services.savepoint import create_savepoint
from hoodie.table.table import HoodieTable
from hoodie.writer.client import WriteClient

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


def test_an_insert_whose_inline_clean_fails_still_returns_its_instant(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    # issue 27 item 4: the commit succeeded, so the write must not raise (a caller retrying
    # an insert would duplicate its rows); the clean's refusal is a warning
    path = tmp_path / "t"
    victim = tmp_path / "victim.txt"
    victim.write_text("not the table's")
    opts = {**OPTS, "hoodie.archive.automatic": "false"}
    hoodie.write(pa.table({"k": ["a"], "ts": [1]}), str(path), opts)
    clean_instant = forge_clean_outside(path, victim)
    with caplog.at_level(logging.WARNING, logger="hoodie"):
        instant = hoodie.write(pa.table({"k": ["b"], "ts": [1]}), str(path), {**opts, "hoodie.datasource.write.operation": "insert"})
    assert instant in [i.timestamp for i in HoodieTable.open(str(path)).timeline.completed_writes()]
    assert sorted(r["k"] for r in hoodie.read(str(path)).to_pylist()) == ["a", "b"]
    (warning,) = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    for text in (f"write {instant} committed", "inline clean failed", "UnsafePathError", f"the plan of clean {clean_instant}", str(victim)):
        assert text in warning, warning
    assert victim.read_text() == "not the table's"


class FailingServices:
    """hoodie's own services, but the inline ones raise ``error``."""

    def __init__(self, error: Exception) -> None:
        self.error = error
        self.check_settings = WRITER_SERVICES.check_settings
        self.recover = WRITER_SERVICES.recover
        self.roll_back = WRITER_SERVICES.roll_back
        self.beside_write = WRITER_SERVICES.beside_write

    def after_commit(self, table: HoodieTable, config: object, engine: object, instant: str) -> None:
        raise self.error


@pytest.mark.parametrize(
    ("error", "service"),
    [(OSError("disk gone"), "table services"), (TableServiceError("compaction", "t", OSError("disk gone")), "compaction")],
    ids=["any-error", "table-service-error"],
)
def test_a_failing_service_of_any_kind_is_a_warning_naming_it(tmp_path: Path, caplog: pytest.LogCaptureFixture, error: Exception, service: str) -> None:
    path = str(tmp_path / "t")
    with caplog.at_level(logging.WARNING, logger="hoodie"):
        instant = WriteClient(path, OPTS, services=FailingServices(error)).write(pa.table({"k": ["a"], "ts": [1]}))
    assert snapshot(path) == {"a": 1}
    (warning,) = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert f"inline {service} failed: OSError: disk gone" in warning and (service == "compaction" or f"write {instant} committed" in warning), warning


def test_a_committed_write_whose_markers_cannot_be_removed_still_returns_its_instant(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the same rule for the tidying right after the commit: the commit stands
    from hoodie.markers import DirectMarkers

    def fail(self: DirectMarkers) -> None:
        raise OSError("storage went away")

    monkeypatch.setattr(DirectMarkers, "delete_all", fail)
    path = str(tmp_path / "t")
    with caplog.at_level(logging.WARNING, logger="hoodie"):
        instant = hoodie.write(pa.table({"k": ["a"], "ts": [1]}), path, {**OPTS, "hoodie.datasource.write.operation": "insert"})
    monkeypatch.undo()
    assert snapshot(path) == {"a": 1}
    assert f"write {instant} committed, but its markers or claim were not removed: OSError: storage went away" in caplog.text
