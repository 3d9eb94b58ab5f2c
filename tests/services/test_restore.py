"""Restore to a savepoint: every write after it is undone (completed and pending, COW and
MOR, upserts, deletes and insert_overwrite), so that hoodie and hudi-rs read exactly the
savepointed table; an interrupted restore is finished by the next call."""
from __future__ import annotations

import io
import os

import fastavro
import pytest

from hoodie.errors import InstantNotFoundError, TimelineError
from hoodie.services import restore as restore_mod
from hoodie.services.decision import ServiceDecision
from hoodie.services.for_writers import WRITER_SERVICES
from hoodie.services.restore import (
    RestoreResult,
    pending_restore,
    restore_to,
    resume_restore,
)
from hoodie.services.savepoint import create_savepoint
from hoodie.writer.transaction import WriteTransaction


def history_after_savepoint(kit) -> tuple[str, list[tuple], list[str]]:
    """Two commits, a savepoint on the second, then upserts, inserts into a new partition,
    a delete and an insert_overwrite."""
    kit.write(["k1", "k2", "k3"], ["a", "a", "b"], 1)
    savepoint = kit.write(["k1"], "a", 2)
    create_savepoint(kit.open(), savepoint)
    state = kit.rows()
    later = [
        kit.write(["k1", "k4"], ["a", "b"], 3),
        kit.write(["k2", "k5"], ["a", "c"], 4),
        kit.write(["k3"], "b", 5, operation="delete"),
        kit.write(["k9"], "a", 6, operation="insert_overwrite"),
    ]
    assert kit.rows() != state
    return savepoint, state, later


@pytest.mark.parametrize("kind", ["cow", "mor"])
def test_restore_brings_back_exactly_the_savepointed_table(kind: str, request: pytest.FixtureRequest) -> None:
    kit = request.getfixturevalue(kind)
    savepoint, state, later = history_after_savepoint(kit)
    files_at_savepoint = kit.data_files()
    result = restore_to(kit.open(), savepoint)
    assert isinstance(result, RestoreResult)
    assert result.rolled_back == tuple(reversed(later))
    assert kit.rows() == state == kit.rs_rows()
    table = kit.open()
    assert table.timeline.last_completed_write().timestamp == savepoint
    assert not any(table.timeline.contains(t) for t in later)
    left = kit.data_files()
    if kind == "cow":
        assert left <= files_at_savepoint and not any(t in f for f in left for t in later)
    else:
        # logs appended to older slices stay, neutralised by rollback command blocks
        assert result.rollback_log_files and all(f.split("/")[-1].endswith("_1-0-1") for f in result.rollback_log_files)
    # the result is the net effect: rollback logs it names exist, deleted files were there before
    assert all(os.path.exists(f) for f in result.rollback_log_files)
    assert not set(result.deleted_files) & set(result.rollback_log_files)
    assert {os.path.relpath(f, kit.path) for f in result.deleted_files} <= files_at_savepoint
    # the table lives on: a new write after the restore reads back everywhere
    kit.write(["k7"], "a", 9)
    assert kit.rows() == sorted(state + [("k7", "a", 9, 9.0)]) == kit.rs_rows()


def test_pending_write_after_the_savepoint_is_undone_too(cow) -> None:
    savepoint, state, _ = history_after_savepoint(cow)
    txn = WriteTransaction.begin(cow.open(), "upsert", WRITER_SERVICES)  # a writer that died after requesting
    result = restore_to(cow.open(), savepoint)
    assert isinstance(result, RestoreResult) and result.rolled_back[0] == txn.instant_time
    assert not any(txn.instant_time in n for n in cow.timeline_files())
    assert cow.rows() == state


def test_restore_metadata_is_hudi_avro(cow) -> None:
    savepoint, _, later = history_after_savepoint(cow)
    result = restore_to(cow.open(), savepoint)
    assert isinstance(result, RestoreResult)
    meta = os.path.join(cow.path, ".hoodie")

    def read(name: str) -> dict:
        with open(os.path.join(meta, name), "rb") as f:
            return next(iter(fastavro.reader(io.BytesIO(f.read()))))

    plan = read(f"{result.restore_instant}.restore.requested")
    assert plan["version"] == 2 and plan["savepointToRestoreTimestamp"] == savepoint
    assert [i["commitTime"] for i in plan["instantsToRollback"]] == list(reversed(later))
    assert plan["instantsToRollback"][0]["action"] == "replacecommit"
    assert os.path.getsize(os.path.join(meta, f"{result.restore_instant}.restore.inflight")) == 0
    done = read(f"{result.restore_instant}.restore")
    assert done["instantsToRollback"] == list(reversed(later))
    assert [i["action"] for i in done["restoreInstantInfo"]] == ["replacecommit", "commit", "commit", "commit"]
    rb = done["hoodieRestoreMetadata"][later[0]][0]
    assert rb["commitsRollback"] == [later[0]] and rb["totalFilesDeleted"] >= 1


@pytest.mark.parametrize("crash_at", [2, 3, 4])
def test_interrupted_restore_is_finished_by_the_next_call(mor, monkeypatch: pytest.MonkeyPatch, crash_at: int) -> None:
    savepoint, state, later = history_after_savepoint(mor)
    files_before = mor.data_files()
    calls = []
    real = restore_mod.execute_undo

    def crash_on_second(*args: object) -> dict:
        calls.append(args)
        if len(calls) == crash_at:
            raise RuntimeError("killed mid-restore")
        return real(*args)

    monkeypatch.setattr(restore_mod, "execute_undo", crash_on_second)
    with pytest.raises(RuntimeError):
        restore_to(mor.open(), savepoint)
    monkeypatch.undo()
    pending = pending_restore(mor.open())
    assert pending is not None and pending.is_inflight
    with pytest.raises(TimelineError, match="unfinished"):
        restore_to(mor.open(), later[0])  # a different target must wait
    result = restore_to(mor.open(), savepoint)
    assert isinstance(result, RestoreResult) and result.resumed and result.restore_instant == pending.timestamp
    assert result.rolled_back == tuple(reversed(later))
    assert mor.rows() == state == mor.rs_rows()
    assert resume_restore(mor.open()) is None
    # the net effect, across both attempts: what it deleted was there before it began, and
    # the rollback logs it names are still there
    assert {os.path.relpath(f, mor.path) for f in result.deleted_files} <= files_before
    assert all(os.path.exists(f) for f in result.rollback_log_files)


def test_refusals_and_nothing_to_do(cow) -> None:
    cow.write(["k1"], "a", 1)
    s1 = cow.write(["k1"], "a", 2)
    create_savepoint(cow.open(), s1)
    decision = restore_to(cow.open(), s1)
    assert isinstance(decision, ServiceDecision) and "nothing to undo" in decision.reason
    with pytest.raises(InstantNotFoundError, match="no savepoint at"):
        restore_to(cow.open(), "20000101000000000")
    s2 = cow.write(["k1"], "a", 3)
    create_savepoint(cow.open(), s2)
    cow.write(["k1"], "a", 4)
    with pytest.raises(TimelineError, match=f"later savepoints {s2}"):
        restore_to(cow.open(), s1)


def test_crash_inside_an_undo_leaves_a_readable_table(cow, monkeypatch: pytest.MonkeyPatch) -> None:
    from hoodie.storage.local import LocalStorage

    savepoint, state, later = history_after_savepoint(cow)
    before_last = cow.rows(later[-2])
    real_delete = LocalStorage.delete

    class Killed(BaseException):
        """The process dies (not an I/O error the undo would record and go on from)."""

    def crash_on_data_files(self: LocalStorage, path: str) -> bool:
        if path.endswith(".parquet"):
            raise Killed
        return real_delete(self, path)

    monkeypatch.setattr(LocalStorage, "delete", crash_on_data_files)
    with pytest.raises(Killed):
        restore_to(cow.open(), savepoint)
    monkeypatch.undo()
    # the newest commit already lost its completed file: readers see it as never committed
    names = cow.timeline_files()
    assert f"{later[-1]}.replacecommit" not in names and f"{later[-1]}.replacecommit.inflight" in names
    assert cow.rows() == before_last == cow.rs_rows()
    result = restore_to(cow.open(), savepoint)
    assert isinstance(result, RestoreResult) and result.resumed
    assert cow.rows() == state == cow.rs_rows()
