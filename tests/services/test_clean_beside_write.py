"""``hoodie.clean.async``: a write's clean runs on a thread of its own beside the write (as
Apache Hudi's async cleaner does), with the write's instant pending; the write waits for
it after its commit, then runs its other inline services, which leave the clean out. A
clean that fails is a warning; the commit stands."""
from __future__ import annotations

import logging
import threading
import time
from pathlib import Path

import pyarrow as pa
import pytest
from readers import hudi_rs_table

import hoodie
from hoodie.errors import ConfigError
from hoodie.metadata_table.validate import validate_metadata_table
from hoodie.services import beside_write
from hoodie.services.archival import read_archived_instants
from hoodie.table.table import HoodieTable
from hoodie.timeline.instant import Action
from hoodie.writer import pipeline

OPTS = {
    "hoodie.table.name": "t",
    "hoodie.datasource.write.recordkey.field": "k",
    "hoodie.datasource.write.precombine.field": "ts",
    "hoodie.datasource.write.partitionpath.field": "p",
    "hoodie.cleaner.commits.retained": "2",
    "hoodie.keep.min.commits": "3",
    "hoodie.keep.max.commits": "4",
    "hoodie.clean.async": "true",
}


def batch(ts: int) -> pa.Table:
    return pa.table({"k": ["a", "b", "c"], "ts": [ts] * 3, "p": ["x", "y", "y"]})


def snapshot(path: str) -> dict:
    return {r["k"]: r["ts"] for r in hoodie.read(path).to_pylist()}


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_the_clean_runs_beside_each_write_with_its_instant_pending(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, table_type: str) -> None:
    path = str(tmp_path / "t")
    opts = {**OPTS, "hoodie.datasource.write.table.type": table_type, "hoodie.compact.inline": "true", "hoodie.compact.inline.max.delta.commits": "2"}
    seen: list[tuple[str, list[str]]] = []  # (the clean's thread, the data table's pending writes then)
    real_clean = beside_write.clean

    def watched(table: HoodieTable, *args, **kwargs):  # type: ignore[no-untyped-def]
        pending = [i.timestamp for i in table.reload().timeline.pending() if i.action in Action.WRITE_ACTIONS]
        seen.append((threading.current_thread().name, pending))
        return real_clean(table, *args, **kwargs)

    monkeypatch.setattr(beside_write, "clean", watched)
    instants = [hoodie.write(batch(ts), path, opts) for ts in range(1, 9)]
    assert len(seen) == len(instants), "one clean beside each write"
    for (thread, pending), instant in zip(seen, instants):
        assert thread == f"hoodie-clean-beside-{instant}" and thread != threading.main_thread().name
        assert instant in pending, "the clean ran while its write was pending"
    table = HoodieTable.open(path)
    cleans = table.timeline.completed([Action.CLEAN])
    assert cleans, "the cleans beside the writes deleted old slices"
    assert len(list(Path(path).rglob("*.parquet"))) <= 6 * 2, "old slices were cleaned"
    assert read_archived_instants(table), "archival ran after the writes, after their cleans"
    assert snapshot(path) == {r["k"]: r["ts"] for r in hudi_rs_table(path).to_pylist()} == {"a": 8, "b": 8, "c": 8}
    assert validate_metadata_table(table).ok, "the metadata table took every clean"


def test_without_it_the_clean_runs_after_the_commit_on_the_writing_thread(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = str(tmp_path / "t")
    threads: list[str] = []
    monkeypatch.setattr(beside_write.CleanBesideWrite, "__init__", lambda *a, **k: threads.append("beside"))
    for ts in range(1, 6):
        hoodie.write(batch(ts), path, {**OPTS, "hoodie.clean.async": "false"})
    assert threads == [] and HoodieTable.open(path).timeline.completed([Action.CLEAN])


def test_a_failing_clean_beside_the_write_is_a_warning_and_stops_the_services_after(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    path = str(tmp_path / "t")
    for ts in range(1, 4):
        hoodie.write(batch(ts), path, {**OPTS, "hoodie.archive.automatic": "false"})

    def broken(*args, **kwargs):  # type: ignore[no-untyped-def]
        raise OSError("disk gone")

    monkeypatch.setattr(beside_write, "clean", broken)
    ran_after: list[str] = []
    monkeypatch.setattr("hoodie.services.for_writers.run_inline_services", lambda *a, **k: ran_after.append("inline"))
    with caplog.at_level(logging.WARNING, logger="hoodie"):
        instant = hoodie.write(batch(4), path, OPTS)
    assert snapshot(path) == {"a": 4, "b": 4, "c": 4}, "the commit stands"
    (warning,) = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert f"write {instant} committed, but its inline clean failed: OSError: disk gone" in warning
    assert ran_after == [], "archival after a failed clean would leave its files to no clean"


def test_a_failed_write_waits_for_its_clean(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = str(tmp_path / "t")
    for ts in range(1, 4):
        hoodie.write(batch(ts), path, OPTS)
    started: list[beside_write.CleanBesideWrite] = []
    real_init = beside_write.CleanBesideWrite.__init__

    def keep(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        real_init(self, *args, **kwargs)
        started.append(self)

    monkeypatch.setattr(beside_write.CleanBesideWrite, "__init__", keep)

    def slow_clean(*args, **kwargs):  # type: ignore[no-untyped-def]
        time.sleep(0.5)  # still running when the write fails
        return real_clean(*args, **kwargs)

    def write_fails(*args, **kwargs):  # type: ignore[no-untyped-def]
        raise OSError("disk gone")

    real_clean = beside_write.clean
    monkeypatch.setattr(beside_write, "clean", slow_clean)
    monkeypatch.setattr(pipeline, "_execute", write_fails)
    with pytest.raises(OSError, match="disk gone"):
        hoodie.write(batch(5), path, OPTS)
    assert len(started) == 1 and not started[0]._thread.is_alive(), "a clean left running behind a failed write"
    assert snapshot(path) == {"a": 3, "b": 3, "c": 3}


def test_the_option_is_checked() -> None:
    with pytest.raises(ConfigError, match="hoodie.clean.async"):
        hoodie.write(batch(1), "memory://t-clean-async", {**OPTS, "hoodie.clean.async": "sometimes"})


def test_a_clean_that_fails_beside_a_failed_write_is_not_reported_as_after_a_commit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    path = str(tmp_path / "t")
    for ts in range(1, 4):
        hoodie.write(batch(ts), path, OPTS)

    def broken_clean(*args, **kwargs):  # type: ignore[no-untyped-def]
        raise OSError("clean disk gone")

    def write_fails(*args, **kwargs):  # type: ignore[no-untyped-def]
        raise OSError("write disk gone")

    monkeypatch.setattr(beside_write, "clean", broken_clean)
    monkeypatch.setattr(pipeline, "_execute", write_fails)
    with caplog.at_level(logging.WARNING, logger="hoodie"), pytest.raises(OSError, match="write disk gone"):
        hoodie.write(batch(5), path, OPTS)
    (warning,) = [r.getMessage() for r in caplog.records if "clean disk gone" in r.getMessage()]
    assert "committed" not in warning and "succeeded" not in warning, warning
    assert "failed, and the clean beside it failed too: OSError: clean disk gone" in warning
    assert snapshot(path) == {"a": 3, "b": 3, "c": 3}


def test_a_clean_that_cannot_start_fails_the_write_and_leaves_no_instant(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = str(tmp_path / "t")
    for ts in range(1, 3):
        hoodie.write(batch(ts), path, OPTS)

    def cannot_start(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        raise RuntimeError("can't start new thread")

    monkeypatch.setattr(beside_write.CleanBesideWrite, "__init__", cannot_start)
    with pytest.raises(RuntimeError, match="can't start new thread"):
        hoodie.write(batch(3), path, OPTS)
    assert not HoodieTable.open(path).timeline.pending(), "the write's instant was left requested"
    assert snapshot(path) == {"a": 2, "b": 2, "c": 2}
