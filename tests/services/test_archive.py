"""Archival: the oldest instants move to ``.hoodie/archived`` down to the minimum kept,
never past the earliest savepoint, a pending instant or the cleaner's boundary; reads are
unchanged; the archive is a Hudi log file of HoodieArchivedMetaEntry records; an
interrupted archival is finished without duplicating records."""
from __future__ import annotations

import os

import pytest

from hoodie.formats.log import AvroDataBlock, HeaderKey, read_log_file
from hoodie.services.archival import (
    ArchiveResult,
    ArchiveSettings,
    archive,
    archive_files,
    plan_archive,
    read_archived_instants,
)
from hoodie.services.cleaning import CleanResult, CleanSettings, clean
from hoodie.services.compaction import (
    UNBOUNDED_STRATEGY,
    CompactionSettings,
    compact,
    schedule_compaction,
)
from hoodie.services.decision import ServiceDecision
from hoodie.services.savepoint import create_savepoint
from hoodie.storage.local import LocalStorage
from hoodie.timeline.instant import State

SMALL = ArchiveSettings(min_commits=2, max_commits=4)


def commits(kit, n: int) -> list[str]:
    return [kit.write(["k1", f"n{i}"], ["a", "b"], i) for i in range(n)]


def test_archives_the_oldest_up_to_the_cleaner_boundary(cow) -> None:
    t = commits(cow, 8)
    result_clean = clean(cow.open(), CleanSettings(commits_retained=3))
    assert isinstance(result_clean, CleanResult) and result_clean.earliest_commit_to_retain == t[5]
    before = {i: cow.rows(i) for i in t[5:]}
    result = archive(cow.open(), SMALL)
    assert isinstance(result, ArchiveResult)
    # 8 commits, keep 2: 6 candidates, but the last clean retains t[5] and later
    assert [i.timestamp for i in result.archived] == t[:5]
    assert "the last clean" in result.reason
    table = cow.open()
    assert [i.timestamp for i in table.timeline.completed_writes()] == t[5:]
    assert table.timeline.completed(["clean"])  # the last clean stays: the next one reads it
    assert not any(n.startswith(tuple(t[:5])) for n in cow.timeline_files())
    assert [(i.timestamp, i.action, i.state) for i in read_archived_instants(table)] == [(ts, "commit", State.COMPLETED) for ts in t[:5]]
    assert {i: cow.rows(i) for i in t[5:]} == before
    assert cow.rs_rows() == before[t[-1]]
    # the file: Hudi's archive log name, AVRO_DATA blocks of <= 10 records, SCHEMA header only
    [(version, path)] = archive_files(table)
    assert version == 1 and os.path.basename(path) == ".commits_.archive.1_1-0-1"
    blocks = read_log_file(table.storage, path)
    assert all(isinstance(b, AvroDataBlock) and list(b.header) == [HeaderKey.SCHEMA] for b in blocks)
    assert [b.records.num_rows for b in blocks] == [10, 5]  # requested, inflight, completed of 5 commits
    records = [r for b in blocks for r in b.records.select(["commitTime", "actionType", "actionState"]).to_pylist()]
    assert records[:3] == [{"commitTime": t[0], "actionType": "commit", "actionState": s} for s in ("REQUESTED", "INFLIGHT", "COMPLETED")]
    done = next(r for r in blocks[0].records.to_pylist() if r["actionState"] == "COMPLETED")
    stats = done["hoodieCommitMetadata"]["partitionToWriteStats"]  # a map: (partition, stats) pairs
    assert {p for p, _ in stats} == {"a", "b"}


def test_nothing_to_archive_is_explained(cow) -> None:
    commits(cow, 4)
    decision = archive(cow.open(), SMALL)
    assert isinstance(decision, ServiceDecision)
    assert decision.reason == "4 completed commits on the active timeline; archival starts above 4"


def test_never_at_or_past_the_earliest_savepoint(cow) -> None:
    t = commits(cow, 7)
    create_savepoint(cow.open(), t[2])
    plan = plan_archive(cow.open(), SMALL)
    assert [i.timestamp for i in plan.instants] == t[:2]
    assert plan.reason.endswith(f"stopped before {t[2]}: savepoint {t[2]}")


def test_never_past_a_pending_instant(mor) -> None:
    t = commits(mor, 2)
    pending, _ = schedule_compaction(mor.open(), CompactionSettings(strategy=UNBOUNDED_STRATEGY), require_threshold=False)
    t += commits(mor, 5)
    plan = plan_archive(mor.open(), SMALL)
    assert [i.timestamp for i in plan.instants] == t[:2]
    assert f"pending compaction {pending}" in plan.reason


def test_no_clean_yet_keeps_replace_commits_and_what_follows(cow) -> None:
    t = commits(cow, 3)
    t.append(cow.write(["k9"], "a", 9, operation="insert_overwrite"))
    t += commits(cow, 3)
    plan = plan_archive(cow.open(), SMALL)
    assert [i.timestamp for i in plan.instants] == t[:3]
    assert "must stay until a clean deletes the file groups it replaced" in plan.reason


def test_too_few_commits_to_keep_after_bounds(cow) -> None:
    t = commits(cow, 6)
    create_savepoint(cow.open(), t[0])
    decision = archive(cow.open(), SMALL)
    assert isinstance(decision, ServiceDecision) and f"the oldest, {t[0]}, must stay: savepoint {t[0]}" in decision.reason


def test_compaction_and_clean_instants_are_archived_with_their_plans(mor) -> None:
    t = commits(mor, 2)
    compact(mor.open(), CompactionSettings(strategy=UNBOUNDED_STRATEGY), require_threshold=False)
    c = mor.open().timeline.last_completed_write().timestamp
    t += [c] + commits(mor, 2)
    first_clean = clean(mor.open(), CleanSettings(commits_retained=2))
    assert isinstance(first_clean, CleanResult)
    t += commits(mor, 2)
    compact(mor.open(), CompactionSettings(strategy=UNBOUNDED_STRATEGY), require_threshold=False)
    t += commits(mor, 2)
    assert isinstance(clean(mor.open(), CleanSettings(commits_retained=2)), CleanResult)
    expected = mor.rows()
    result = archive(mor.open(), SMALL)
    assert isinstance(result, ArchiveResult)
    archived = {(i.timestamp, i.action) for i in result.archived}
    assert (c, "commit") in archived and (first_clean.instant, "clean") in archived
    blocks = [b for _, p in archive_files(mor.open()) for b in read_log_file(mor.open().storage, p)]
    rows = [r for b in blocks for r in b.records.to_pylist()]
    plan_rows = [r for r in rows if r["actionType"] == "compaction" and r["actionState"] == "REQUESTED"]
    assert plan_rows and all(r["hoodieCompactionPlan"]["operations"] for r in plan_rows)
    clean_rows = {r["actionState"]: r for r in rows if r["actionType"] == "clean"}
    assert clean_rows["COMPLETED"]["hoodieCleanMetadata"]["earliestCommitToRetain"] == first_clean.earliest_commit_to_retain
    assert clean_rows["REQUESTED"]["hoodieCleanerPlan"]["policy"] == "KEEP_LATEST_COMMITS"
    assert (c, "commit") in {(i.timestamp, i.action) for i in read_archived_instants(mor.open())}
    assert mor.rows() == expected == mor.rs_rows()


def test_interrupted_archival_is_finished_without_duplicates(cow, monkeypatch: pytest.MonkeyPatch) -> None:
    t = commits(cow, 7)
    real_delete = LocalStorage.delete
    deleted: list[str] = []

    def crash_after_two(self: LocalStorage, path: str) -> bool:
        if len(deleted) == 2:
            raise OSError("killed while deleting archived instants")
        deleted.append(path)
        return real_delete(self, path)

    monkeypatch.setattr(LocalStorage, "delete", crash_after_two)
    with pytest.raises(OSError):
        archive(cow.open(), SMALL)
    monkeypatch.undo()
    assert all(p.endswith((".requested", ".inflight")) for p in deleted)  # pending states go first
    assert cow.open().timeline.completed_writes()[0].timestamp == t[0]  # still completed, not pending
    result = archive(cow.open(), SMALL)
    assert isinstance(result, ArchiveResult) and result.archive_file is None and result.records == 0
    assert [i.timestamp for i in read_archived_instants(cow.open())] == t[:5]
    [(_, path)] = archive_files(cow.open())
    assert sum(b.records.num_rows for b in read_log_file(cow.open().storage, path)) == 15
    assert cow.rows() == cow.rs_rows()


def test_archival_after_a_restore_keeps_reads(cow) -> None:
    from hoodie.services.restore import RestoreResult, restore_to
    from hoodie.services.savepoint import delete_savepoint

    t = commits(cow, 2)
    create_savepoint(cow.open(), t[1])
    commits(cow, 1)
    assert isinstance(restore_to(cow.open(), t[1]), RestoreResult)
    delete_savepoint(cow.open(), t[1])
    t.append(cow.write(["only"], "c", 100))  # partition c is never written again
    t += commits(cow, 5)
    assert isinstance(clean(cow.open(), CleanSettings(commits_retained=3)), CleanResult)
    before = cow.rows()
    result = archive(cow.open(), SMALL)
    assert isinstance(result, ArchiveResult) and [i.timestamp for i in result.archived if i.action == "commit"] == t[:5]
    # the restore instant stays on the active timeline (Hudi never archives restores), older
    # than the commits kept: files of archived commits must still count as committed
    assert cow.open().timeline.instants[0].action == "restore"
    assert ("only", "c", 100, 100.0) in before
    assert cow.rows() == before == cow.rs_rows()


def test_replace_commit_waits_for_the_clean_after_a_savepoint_is_deleted(cow) -> None:
    from hoodie.services.savepoint import delete_savepoint

    t = [cow.write(["k1", "k2"], "a", 1)]
    create_savepoint(cow.open(), t[0])
    t.append(cow.write(["k9"], "a", 2, operation="insert_overwrite"))
    t += [cow.write([f"x{i}"], "b", 10 + i) for i in range(5)]
    assert isinstance(clean(cow.open(), CleanSettings(commits_retained=2)), CleanResult)
    replaced = {f for f in cow.data_files() if f"_{t[0]}." in f and f.startswith("a/")}
    assert replaced  # pinned by the savepoint, so the clean kept the replaced file group
    delete_savepoint(cow.open(), t[0])
    plan = plan_archive(cow.open(), SMALL)
    # archiving the replace commit now would make the replaced file group live again
    assert [i.timestamp for i in plan.instants] == t[:1]
    assert f"replace commit {t[1]} waits for the next clean" in plan.reason
    assert isinstance(clean(cow.open(), CleanSettings(commits_retained=2)), CleanResult)
    assert replaced.isdisjoint(cow.data_files())
    assert t[1] in {i.timestamp for i in plan_archive(cow.open(), SMALL).instants}
    expected = cow.rows()
    assert isinstance(archive(cow.open(), SMALL), ArchiveResult)
    assert cow.rows() == expected == cow.rs_rows()
