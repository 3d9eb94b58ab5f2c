"""A failed write is undone by one path, whether a writer rolls it back or a restore
undoes it: the same rules find its files in the partitions it wrote (files named with its
instant are deleted, logs it appended to older slices get a rollback block), under the
same guard."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from hoodie.markers import DirectMarkers
from hoodie.services.restore import restore_to
from hoodie.services.rollback import rollback_failed_writes
from hoodie.services.savepoint import create_savepoint
from hoodie.timeline import Action, Instant, State
from hoodie.writer.transaction import WriteTransaction


def leave_pending(kit) -> str:
    instant = kit.open().timeline.new_instant_time()
    for state in (State.REQUESTED, State.INFLIGHT):
        (Path(kit.path) / ".hoodie" / Instant(instant, Action.DELTA_COMMIT, state).file_name()).write_bytes(b"")
    return instant


def test_the_slice_a_failed_write_opened_is_deleted_logs_and_all(mor) -> None:
    """A failed write's new file group (a base file and a log file named with its instant)
    goes entirely: no rollback block is appended to a slice whose base file goes too."""
    mor.write(["k1", "k2"], "p", 1)
    rows, before = mor.rows(), mor.data_files()
    failed = leave_pending(mor)
    base = f"f9-0_0-1-0_{failed}.parquet"
    log = f".f9-0_{failed}.log.1_0-1-0"
    for name in (base, log):
        (Path(mor.path) / "p" / name).write_bytes(b"partial")
    table = mor.open()
    DirectMarkers(table.storage, table.base_path, failed).create_all([("p", base, "CREATE"), ("p", log, "APPEND")])
    (result,) = rollback_failed_writes(table)
    assert result.rolled_back == failed
    assert mor.data_files() == before, "both files are gone, and no rollback log was written for the slice"
    assert mor.rows() == rows
    meta = mor.open().timeline.rollback_metadata(mor.open().timeline.completed([Action.ROLLBACK])[0])
    assert sorted(meta.deleted_files()) == sorted(str(Path(mor.path) / "p" / n) for n in (base, log)) and meta.command_logs() == []


@pytest.mark.parametrize("kit_name", ["cow", "mor"])
def test_a_rollback_and_a_restore_undo_a_failed_write_alike(
    kit_name: str, request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    kit = request.getfixturevalue(kit_name)
    kit.write(["k1", "k2"], ["p", "q"], 1)
    savepoint = kit.write(["k1"], "p", 2)  # merge-on-read: a log on p's slice
    create_savepoint(kit.open(), savepoint)

    def crash(self, *args, **kwargs):
        raise RuntimeError("writer died before completing")

    monkeypatch.setattr(WriteTransaction, "commit", crash)
    monkeypatch.setattr(WriteTransaction, "abort", lambda self: None)  # nobody cleans up: a crash
    with pytest.raises(RuntimeError, match="writer died"):
        kit.write(["k1", "k3"], ["p", "r"], 3)  # an update of p's file group, a new one in r
    monkeypatch.undo()
    twin = type(kit)(str(tmp_path / "twin"), kit.table_type)
    shutil.copytree(kit.path, twin.path)
    written = kit.data_files()

    (rolled,) = rollback_failed_writes(kit.open())
    restored = restore_to(twin.open(), savepoint)
    assert restored.rolled_back == (rolled.rolled_back,)
    deleted = sorted(Path(f).relative_to(kit.path) for f in rolled.deleted_files)
    assert deleted == sorted(Path(f).relative_to(twin.path) for f in restored.deleted_files)
    assert rolled.deleted_files, "the failed write's new files are deleted"

    def rollback_logs(files: set[str]) -> set[str]:
        # a rollback block is a new log version with Java's rollback token, whoever wrote it
        return {f for f in files if f.endswith("_1-0-1") and f not in written}

    assert kit.rows() == twin.rows()
    assert {f for f in kit.data_files() if f in written} == {f for f in twin.data_files() if f in written}
    assert rollback_logs(kit.data_files()) == rollback_logs(twin.data_files())
    assert bool(rollback_logs(kit.data_files())) == (kit.table_type == "MERGE_ON_READ"), "the failed update's log is neutralised"
