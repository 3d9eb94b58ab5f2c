"""Cleaning: each policy deletes exactly the slices no retained view needs, never what a
savepoint, a retained commit or a pending compaction needs; reads within the retained
window are unchanged (hoodie and hudi-rs); planning lists only the partitions written
since the last clean; an interrupted clean is finished by the next run."""
from __future__ import annotations

import io
import os
from collections import Counter, defaultdict
from datetime import timedelta
from pathlib import Path

import fastavro
import pytest
from hostile_paths import tree_state

from hoodie.formats.log.blocks import CommandBlock
from hoodie.formats.log.writer import encode_log_file
from hoodie.layout import parse_base_file_name, parse_instant, parse_log_file_name
from hoodie.services import cleaning as clean_mod
from hoodie.services.cleaning import (
    CleanPolicy,
    CleanResult,
    CleanSettings,
    clean,
    pending_cleans,
    plan_clean,
    run_clean,
    schedule_clean,
)
from hoodie.services.compaction import (
    UNBOUNDED_STRATEGY,
    CompactionSettings,
    compact,
    run_compaction,
    schedule_compaction,
)
from hoodie.services.decision import ServiceDecision
from hoodie.services.savepoint import create_savepoint
from hoodie.table.fs_view import FileSystemView
from hoodie.table.table import HoodieTable


def slices(files: set[str]) -> dict[tuple[str, str], set[str]]:
    """(partition, file id) → base instants of the slices present on disk."""
    out: dict[tuple[str, str], set[str]] = defaultdict(set)
    for rel in files:
        part, name = os.path.split(rel)
        b = parse_base_file_name(name)
        lf = parse_log_file_name(name)
        if b:
            out[(part, b.file_id)].add(b.instant)
        elif lf:
            out[(part, lf.file_id)].add(lf.instant)
    return out


def cow_history(kit) -> list[str]:
    """Six commits over partitions a and b, each upsert a new slice of its file group."""
    t = [kit.write(["k1", "k2", "k3", "k4"], "a", 1)]
    t.append(kit.write(["k5", "k6"], "b", 1))
    t.append(kit.write(["k1"], "a", 2))
    t.append(kit.write(["k5"], "b", 3))
    t.append(kit.write(["k2"], "a", 4))
    t.append(kit.write(["k3"], "a", 5))
    t.append(kit.write(["k6"], "b", 6))
    return t


def test_keep_latest_commits_keeps_every_slice_a_retained_commit_reads(cow) -> None:
    t = cow_history(cow)
    before = {i: cow.rows(i) for i in t}
    before_files = cow.data_files()
    result = clean(cow.open(), CleanSettings(commits_retained=2))
    assert isinstance(result, CleanResult)
    # 7 commits, 2 retained: the boundary is the 6th; per group the latest slice before
    # it stays (a query as of the commit just before the boundary still reads it)
    earliest = t[5]
    assert result.earliest_commit_to_retain == earliest
    expected_deleted = set()
    for (part, fid), instants in slices(before_files).items():
        older = sorted(i for i in instants if i < earliest)
        expected_deleted |= {f for f in before_files if f.startswith(part + "/") and fid in f and any(f"_{i}." in f for i in older[:-1])}
    assert before_files - cow.data_files() == expected_deleted and expected_deleted
    assert sum(len(v) for v in result.deleted.values()) == len(expected_deleted)
    for i in t[4:]:  # the retained commits and the one just before them
        assert cow.rows(i) == before[i]
    assert cow.rs_rows() == before[t[-1]]


@pytest.mark.parametrize("policy", [CleanPolicy.KEEP_LATEST_COMMITS, CleanPolicy.KEEP_LATEST_FILE_VERSIONS])
def test_only_partitions_with_an_older_slice_have_their_file_groups_built(cow, monkeypatch: pytest.MonkeyPatch, policy: CleanPolicy) -> None:
    """A partition whose every file group has one slice holds nothing a clean may delete:
    the plan reads the names its listing holds and builds none of its file groups (a
    table scans every partition each write until its first clean deletes something)."""
    cow.write(["k1", "k2"], "a", 1)
    cow.write(["k5", "k6"], "b", 1)
    cow.write(["k1"], "a", 2)  # a second slice of a's file group
    cow.write(["k7"], "b", 3, **{"hoodie.parquet.small.file.limit": "0"})  # a second file group in b
    cow.write(["k2"], "a", 4)
    built: list[str] = []
    build = FileSystemView.file_groups
    monkeypatch.setattr(FileSystemView, "file_groups", lambda view, partition: built.append(partition) or build(view, partition))
    plan = plan_clean(cow.open(), CleanSettings(policy=policy, commits_retained=1, file_versions_retained=1))
    assert set(plan.partitions_scanned) == {"a", "b"}
    assert set(built) == {"a"}
    # a's oldest slice (and, keeping one version, the one after it too)
    assert set(plan.files_to_delete) == {"a"} and plan.file_count == {CleanPolicy.KEEP_LATEST_COMMITS: 1, CleanPolicy.KEEP_LATEST_FILE_VERSIONS: 2}[policy]


def test_keep_latest_file_versions(cow) -> None:
    cow_history(cow)
    latest = cow.rows()
    before = slices(cow.data_files())
    result = clean(cow.open(), CleanSettings(policy=CleanPolicy.KEEP_LATEST_FILE_VERSIONS, file_versions_retained=2))
    assert isinstance(result, CleanResult) and result.policy == "KEEP_LATEST_FILE_VERSIONS"
    after = slices(cow.data_files())
    for group, instants in before.items():
        assert after[group] == set(sorted(instants)[-2:])
    assert cow.rows() == latest == cow.rs_rows()
    # a second run finds nothing new (and says so)
    again = clean(cow.open(), CleanSettings(policy=CleanPolicy.KEEP_LATEST_FILE_VERSIONS, file_versions_retained=2))
    assert isinstance(again, ServiceDecision) and again.reason.startswith("no partition to clean (incremental: 0 partitions")


def test_keep_latest_by_hours(cow) -> None:
    t = cow_history(cow)
    now = parse_instant(t[4]) + timedelta(hours=1)
    plan = plan_clean(cow.open(), CleanSettings(policy=CleanPolicy.KEEP_LATEST_BY_HOURS, hours_retained=1), now=now)
    assert plan.earliest_instant_to_retain is not None and plan.earliest_instant_to_retain.timestamp == t[4]
    assert plan.should_run
    far = plan_clean(cow.open(), CleanSettings(policy=CleanPolicy.KEEP_LATEST_BY_HOURS, hours_retained=1), now=now + timedelta(days=2))
    assert not far.should_run and "last 1 hours" in far.reason


def test_too_few_commits_is_explained(cow) -> None:
    cow_history(cow)
    decision = clean(cow.open(), CleanSettings(commits_retained=10))
    assert isinstance(decision, ServiceDecision)
    assert decision.reason == "7 completed commits and 10 retained: no commit is old enough to clean"
    assert not [f for f in cow.timeline_files() if ".clean" in f]


def test_savepointed_files_are_never_cleaned(cow) -> None:
    t = cow_history(cow)
    create_savepoint(cow.open(), t[2], user="ops", comment="before the fix")
    at_savepoint = cow.rows(t[2])
    pinned = {f for f in cow.data_files() if f"_{t[2]}." in f or f"_{t[0]}." in f or f"_{t[1]}." in f}
    by_versions = CleanSettings(policy=CleanPolicy.KEEP_LATEST_FILE_VERSIONS, file_versions_retained=1, incremental=False)
    for settings in (CleanSettings(commits_retained=1), by_versions):
        assert isinstance(clean(cow.open(), settings), CleanResult)
    remaining = cow.data_files()
    # the slices latest as of the savepoint: k1's group at t[2], b's group at t[1]
    view = cow.open().view(as_of=t[2])
    for part in ("a", "b"):
        for s in view.latest_slices(part):
            assert f"{part}/{s.base_file.file_name}" in remaining
    assert pinned - remaining  # older, unpinned slices did go
    assert cow.rows(t[2]) == at_savepoint
    assert cow.rows() == cow.rs_rows()


def test_replaced_file_groups_go_whole_once_older_than_the_boundary(cow) -> None:
    t1 = cow.write(["k1", "k2"], "a", 1)
    t2 = cow.write(["k9"], "a", 2, operation="insert_overwrite")
    t3 = cow.write(["x1"], "b", 3)
    t4 = cow.write(["x2"], "b", 4)
    replaced = {f for f in cow.data_files() if f"_{t1}." in f and f.startswith("a/")}
    assert replaced
    # boundary at the replace commit itself: the replaced group must stay (time travel to t1)
    kept = clean(cow.open(), CleanSettings(commits_retained=3))
    assert isinstance(kept, ServiceDecision)
    assert cow.rows(t1) == [("k1", "a", 1, 1.0), ("k2", "a", 1, 1.0)]
    snapshot = {t: cow.rows(t) for t in (t3, t4)}
    result = clean(cow.open(), CleanSettings(commits_retained=2))
    assert isinstance(result, CleanResult)
    assert replaced.isdisjoint(cow.data_files())
    assert {t: cow.rows(t) for t in (t3, t4)} == snapshot
    assert cow.rs_rows() == snapshot[t4]
    assert t2  # the replace commit itself stays on the timeline


def _leave_in_group(kit, rel_base: str, name: str) -> str:
    """A file named ``name`` beside the base file ``rel_base`` (its bytes): what a writer
    left there that no committed slice names."""
    src = Path(kit.path) / rel_base
    dest = src.parent / name
    dest.write_bytes(src.read_bytes())
    return f"{os.path.dirname(rel_base)}/{name}"


@pytest.mark.parametrize("kind", ["cow", "mor"])
def test_a_replaced_group_goes_with_its_change_log_and_failed_files(request, kind: str) -> None:
    """Once its replace commit is older than the boundary, a replaced file group goes
    whole: its committed slices, and what no committed slice names — an Apache Hudi
    change-log (``.cdc``) file, the base and log files of a write rolled back without
    them, a duplicate task attempt's base file. A file named after an instant still
    pending (a writer that began before the replace) stays."""
    kit = request.getfixturevalue(kind)
    t1 = kit.write(["k1", "k2"], "a", 1)
    [base] = [f for f in kit.data_files() if f.startswith("a/")]
    group = parse_base_file_name(os.path.basename(base))
    assert group is not None
    failed = kit.open().timeline.new_instant_time()  # an attempt rolled back: not on the timeline
    left = {
        _leave_in_group(kit, base, f".{group.file_id}_{t1}.log.1_0-1-0.cdc"),
        _leave_in_group(kit, base, f"{group.file_id}_0-9-0_{failed}.parquet"),
        _leave_in_group(kit, base, f".{group.file_id}_{failed}.log.1_0-9-0"),
        _leave_in_group(kit, base, f"{group.file_id}_0-1-1_{t1}.parquet"),
    }
    t2 = kit.write(["k9"], "a", 2, operation="insert_overwrite")
    t3 = kit.write(["x1"], "b", 3)
    t4 = kit.write(["x2"], "b", 4)
    # a writer that began before the replace, still running: its file in the group stays
    timeline = kit.open().timeline
    pending = timeline.transition_to_inflight(timeline.request_new("commit" if kind == "cow" else "deltacommit"), b"{}")
    running = _leave_in_group(kit, base, f"{group.file_id}_0-2-0_{pending.timestamp}.parquet")
    snapshot = {t: kit.rows(t) for t in (t3, t4)}
    result = clean(kit.open(), CleanSettings(commits_retained=2))
    assert isinstance(result, CleanResult)
    remaining = kit.data_files()
    assert {f for f in remaining if f.startswith("a/") and group.file_id in f} == {running}
    assert left | {base} <= {f"a/{name}" for name in result.deleted["a"]}
    assert {t: kit.rows(t) for t in (t3, t4)} == snapshot
    assert kit.rs_rows() == snapshot[t4]
    assert t2


def test_a_log_a_pending_write_appends_to_a_replaced_group_stays(mor) -> None:
    """A log file names the base instant of its slice, not the write appending it: a
    writer that began before the replace, still running, keeps the log it writes into the
    replaced group (its first block names it), while a rolled-back write's log goes."""
    t1 = mor.write(["k1", "k2"], "a", 1)
    [base] = [f for f in mor.data_files() if f.startswith("a/")]
    group = parse_base_file_name(os.path.basename(base))
    assert group is not None
    failed = mor.open().timeline.new_instant_time()
    mor.write(["k9"], "a", 2, operation="insert_overwrite")
    mor.write(["x1"], "b", 3)
    mor.write(["x2"], "b", 4)
    timeline = mor.open().timeline
    pending = timeline.transition_to_inflight(timeline.request_new("deltacommit"), b"{}")
    folder = Path(mor.path) / os.path.dirname(base)
    running = folder / f".{group.file_id}_{t1}.log.1_0-2-0"
    running.write_bytes(encode_log_file([CommandBlock.rollback(pending.timestamp, t1)]))
    gone = folder / f".{group.file_id}_{t1}.log.1_0-9-0"
    gone.write_bytes(encode_log_file([CommandBlock.rollback(failed, t1)]))
    result = clean(mor.open(), CleanSettings(commits_retained=2))
    assert isinstance(result, CleanResult)
    assert running.exists() and not gone.exists()
    assert running.name not in result.deleted["a"] and gone.name in result.deleted["a"]


def test_a_savepoint_keeps_the_slice_of_a_replaced_group_with_its_change_log(cow) -> None:
    """A savepoint pins a replaced group's slice: it stays with its change-log file, while
    a rolled-back write's file in the same group goes."""
    t1 = cow.write(["k1", "k2"], "a", 1)
    [base] = [f for f in cow.data_files() if f.startswith("a/")]
    group = parse_base_file_name(os.path.basename(base))
    assert group is not None
    cdc = _leave_in_group(cow, base, f".{group.file_id}_{t1}.log.1_0-1-0.cdc")
    orphan = _leave_in_group(cow, base, f"{group.file_id}_0-9-0_{cow.open().timeline.new_instant_time()}.parquet")
    create_savepoint(cow.open(), t1, user="ops", comment="before the overwrite")
    cow.write(["k9"], "a", 2, operation="insert_overwrite")
    cow.write(["x1"], "b", 3)
    cow.write(["x2"], "b", 4)
    assert isinstance(clean(cow.open(), CleanSettings(commits_retained=2)), CleanResult)
    remaining = cow.data_files()
    assert {base, cdc} <= remaining and orphan not in remaining
    assert cow.rows(t1) == [("k1", "a", 1, 1.0), ("k2", "a", 1, 1.0)]


def test_merge_on_read_slices_and_their_logs(mor) -> None:
    t = [mor.write(["k1", "k2", "k3"], "a", 1), mor.write(["k1"], "a", 2)]
    compaction = CompactionSettings(strategy=UNBOUNDED_STRATEGY)
    meta, _ = compact(mor.open(), compaction, require_threshold=False)
    assert meta is not None
    t.append(mor.open().timeline.last_completed_write().timestamp)
    t.append(mor.write(["k2"], "a", 3))
    compact(mor.open(), compaction, require_threshold=False)
    t.append(mor.open().timeline.last_completed_write().timestamp)
    t.append(mor.write(["k3"], "a", 4))
    t.append(mor.write(["k1"], "a", 5))
    before = {i: mor.rows(i) for i in t[4:]}
    files = mor.data_files()
    first_slice = {f for f in files if f"_{t[0]}" in f}
    assert any(".log." in f for f in first_slice)
    result = clean(mor.open(), CleanSettings(commits_retained=3))
    assert isinstance(result, CleanResult) and result.earliest_commit_to_retain == t[4]
    assert files - mor.data_files() == first_slice  # base file and its log file
    assert {i: mor.rows(i) for i in t[4:]} == before
    assert mor.rs_rows() == before[t[-1]]


def test_pending_compaction_keeps_the_slice_it_reads(mor) -> None:
    compaction = CompactionSettings(strategy=UNBOUNDED_STRATEGY)
    t1 = mor.write(["k1", "k2"], "a", 1)
    mor.write(["k1"], "a", 2)
    compact(mor.open(), compaction, require_threshold=False)
    mor.write(["k2"], "a", 3)
    pending, decision = schedule_compaction(mor.open(), compaction, require_threshold=False)
    assert pending is not None
    read_slice = decision.operations[0].base_instant
    mor.write(["k1"], "a", 4)  # lands in the slice the pending compaction opens
    expected = mor.rows()
    by_versions = CleanSettings(policy=CleanPolicy.KEEP_LATEST_FILE_VERSIONS, file_versions_retained=1, incremental=False)
    for settings in (CleanSettings(commits_retained=1), by_versions):
        clean(mor.open(), settings)
        left = mor.data_files()
        assert any(f"_{read_slice}" in f and f.endswith(".parquet") for f in left)
        assert any(f"_{read_slice}.log" in f for f in left)
    assert not any(f"_{t1}" in f for f in mor.data_files())  # the older slice did go
    run_compaction(mor.open(), pending)
    assert mor.rows() == expected == mor.rs_rows()


def test_a_slice_a_pending_compaction_reads_makes_no_partition_built(mor, monkeypatch: pytest.MonkeyPatch) -> None:
    """While a compaction is pending, each of its file groups has two slices: the one it
    reads and the one the writes after it open. Neither is a clean's to delete, so a
    plan builds no file group of their partitions (but for those holding another)."""
    compaction = CompactionSettings(strategy=UNBOUNDED_STRATEGY)
    mor.write(["k1", "k2"], "a", 1)
    mor.write(["k3"], "b", 1)
    mor.write(["k1"], "a", 2)
    mor.write(["k3"], "b", 2)
    pending, _ = schedule_compaction(mor.open(), compaction, require_threshold=False)
    assert pending is not None
    mor.write(["k1"], "a", 3)
    mor.write(["k3"], "b", 3)
    built: list[str] = []
    build = FileSystemView.file_groups
    monkeypatch.setattr(FileSystemView, "file_groups", lambda view, partition: built.append(partition) or build(view, partition))
    plan = plan_clean(mor.open(), CleanSettings(commits_retained=1))
    assert set(plan.partitions_scanned) == {"a", "b"} and built == [] and not plan.should_run
    run_compaction(mor.open(), pending)
    mor.write(["k1"], "a", 4)
    built.clear()
    plan = plan_clean(mor.open(), CleanSettings(commits_retained=1))
    assert set(built) == {"a", "b"} and set(plan.files_to_delete) == {"a", "b"}  # the compacted slices are older now


def test_incremental_planning_lists_only_partitions_written_since_the_last_clean(cow, recording_storage) -> None:
    cow.write(["k0", "k1", "k2", "k3"], ["p0", "p1", "p2", "p3"], 1)
    for ts in (2, 3, 4):
        cow.write(["k0"], "p0", ts)
    cow.write(["k1"], "p1", 5)
    first = plan_clean(HoodieTable.open(cow.path, recording_storage), CleanSettings(commits_retained=2))
    assert first.partition_selection == "all partitions (first clean of the table)"
    assert isinstance(clean(cow.open(), CleanSettings(commits_retained=2)), CleanResult)
    for ts in (6, 7, 8):
        cow.write(["k2"], "p2", ts)
    table = HoodieTable.open(cow.path, recording_storage)
    recording_storage.listed.clear()
    plan = plan_clean(table, CleanSettings(commits_retained=2))
    assert plan.partition_selection.startswith("incremental: 3 partitions")
    assert plan.partitions_scanned == ("p0", "p1", "p2")
    listed_data_dirs = {os.path.relpath(p, cow.path) for p in recording_storage.listed}
    assert listed_data_dirs == {"p0", "p1", "p2"}  # never the table root, never p3
    assert set(plan.files_to_delete) == {"p0", "p1", "p2"}


def test_interrupted_clean_is_finished_by_the_next_run(cow, monkeypatch: pytest.MonkeyPatch) -> None:
    cow_history(cow)
    latest = cow.rows()

    def crash(*_args: object) -> None:
        raise RuntimeError("killed while deleting")

    monkeypatch.setattr(clean_mod, "_delete_partition_files", crash)
    with pytest.raises(RuntimeError):
        clean(cow.open(), CleanSettings(commits_retained=2))
    monkeypatch.undo()
    [pending] = pending_cleans(cow.open())
    assert pending.is_inflight
    timeline = cow.timeline_files()
    assert f"{pending.timestamp}.clean.requested" in timeline and f"{pending.timestamp}.clean" not in timeline
    result = clean(cow.open(), CleanSettings(commits_retained=2))
    assert isinstance(result, CleanResult) and result.resumed and result.instant == pending.timestamp
    assert result.total_deleted == 3
    assert cow.rows() == latest


def test_requested_only_clean_is_finished_too(cow) -> None:
    cow_history(cow)
    instant, plan = schedule_clean(cow.open(), CleanSettings(commits_retained=2))
    assert instant is not None and plan.file_count == 3
    result = run_clean(cow.open())  # the saved plan runs within its own policy and boundary
    assert isinstance(result, CleanResult) and result.instant == instant and result.total_deleted == 3


def test_a_saved_plan_deletes_only_what_the_running_settings_allow_too(cow) -> None:
    cow_history(cow)
    instant, plan = schedule_clean(cow.open(), CleanSettings(commits_retained=2))
    assert instant is not None and plan.file_count == 3
    before = {k: v for k, v in tree_state(Path(cow.path)).items() if not k.startswith(".hoodie")}
    result = clean(cow.open(), CleanSettings(commits_retained=5))  # retains what the plan would delete
    assert isinstance(result, CleanResult) and result.instant == instant and result.resumed and result.total_deleted == 0
    assert {k: v for k, v in tree_state(Path(cow.path)).items() if not k.startswith(".hoodie")} == before


def test_instant_files_are_what_java_reads(cow) -> None:
    t = cow_history(cow)
    result = clean(cow.open(), CleanSettings(commits_retained=2))
    assert isinstance(result, CleanResult)
    meta = os.path.join(cow.path, ".hoodie")

    def read(name: str) -> tuple[dict, dict]:
        with open(os.path.join(meta, name), "rb") as f:
            data = f.read()
        reader = fastavro.reader(io.BytesIO(data))
        return reader.writer_schema, next(iter(reader))

    schema, plan = read(f"{result.instant}.clean.requested")
    assert schema["name"] == "org.apache.hudi.avro.model.HoodieCleanerPlan" or schema["name"] == "HoodieCleanerPlan"
    assert plan["version"] == 2 and plan["policy"] == "KEEP_LATEST_COMMITS"
    assert plan["earliestInstantToRetain"] == {"timestamp": t[5], "action": "commit", "state": "COMPLETED"}
    assert plan["lastCompletedCommitTimestamp"] == t[-1]
    paths = [i["filePath"] for infos in plan["filePathsToBeDeletedPerPartition"].values() for i in infos]
    assert len(paths) == 3 and all(p.startswith(cow.path) for p in paths)
    with open(os.path.join(meta, f"{result.instant}.clean.requested"), "rb") as a, open(os.path.join(meta, f"{result.instant}.clean.inflight"), "rb") as b:
        assert a.read() == b.read()  # Java 0.x writes the plan again as the inflight content
    _, done = read(f"{result.instant}.clean")
    assert done["version"] == 2 and done["totalFilesDeleted"] == 3 and done["earliestCommitToRetain"] == t[5]
    names = [n for pm in done["partitionMetadata"].values() for n in pm["successDeleteFiles"]]
    assert sorted(names) == sorted(os.path.basename(p) for p in paths)  # names, not paths


def test_a_policy_change_or_fewer_versions_lists_every_partition(cow) -> None:
    cow_history(cow)
    assert isinstance(clean(cow.open(), CleanSettings(commits_retained=2)), CleanResult)
    cow.write(["k1"], "a", 7)
    versions = CleanSettings(policy=CleanPolicy.KEEP_LATEST_FILE_VERSIONS, file_versions_retained=2)
    plan = plan_clean(cow.open(), versions)
    assert plan.partition_selection.startswith("all partitions (the clean at") and "used KEEP_LATEST_COMMITS" in plan.partition_selection
    assert isinstance(clean(cow.open(), versions), CleanResult)
    cow.write(["k1"], "a", 8)
    assert plan_clean(cow.open(), versions).partition_selection.startswith("incremental: 1 partitions")
    fewer = plan_clean(cow.open(), CleanSettings(policy=CleanPolicy.KEEP_LATEST_FILE_VERSIONS, file_versions_retained=1))
    assert "kept 2 file versions, now 1" in fewer.partition_selection
    assert set(fewer.files_to_delete) == {"a", "b"}  # b was not written since, but holds 2 versions


def test_a_clean_sweeps_the_claims_of_writers_that_died(cow) -> None:
    """A writer killed between completing its commit and dropping its claim leaves the
    claim behind; the next clean drops it, and keeps the claims live processes hold."""
    import socket
    import time

    from hoodie.timeline import write_claims

    cow_history(cow)
    table = cow.open()
    claims = os.path.join(table.base_path, ".hoodie", ".aux", ".claims")
    os.makedirs(claims, exist_ok=True)
    with open(os.path.join(claims, "20200101000000000"), "w") as f:  # a dead process of this machine
        f.write(f"commit {time.time():.3f} {socket.gethostname()} 999999999")
    live = write_claims.claim(table.storage, table.base_path, "20200101000000001", write_claims.COMMIT)
    assert live.ours
    assert isinstance(clean(table, CleanSettings(commits_retained=2)), CleanResult)
    assert sorted(os.listdir(claims)) == ["20200101000000001"]


def test_a_first_clean_looks_its_partitions_up_in_the_metadata_table_at_once(tmp_path: Path) -> None:
    """A clean plan scanning every partition of a table listed through its metadata table
    reads the files partition's slice once, not once a partition."""
    import pyarrow as pa
    from opened_files import OpenedFiles

    import hoodie
    from hoodie.metadata_table.listing import MetadataListing, listed_through_metadata

    path = str(tmp_path / "t")
    opts = {
        "hoodie.table.name": "t", "hoodie.datasource.write.recordkey.field": "k",
        "hoodie.datasource.write.partitionpath.field": "p", "hoodie.datasource.write.precombine.field": "ts",
        "hoodie.metadata.enable": "true", "hoodie.clean.automatic": "false",
    }
    for ts in (1, 2, 3):
        hoodie.write(pa.table({"k": [f"k{i}" for i in range(8)], "p": [f"p{i}" for i in range(8)], "ts": [ts] * 8}), path, opts)

    class Recording(OpenedFiles):  # the files pyarrow opened (base HFiles) and those read whole (log files)
        def read_bytes(self, p: str) -> bytes:
            self.opened.append(p)
            return super().read_bytes(p)

    storage = Recording()
    table = listed_through_metadata(HoodieTable.open(path, storage), MetadataListing())
    plan = plan_clean(table, CleanSettings(commits_retained=1))
    assert len(plan.partitions_scanned) == 8 and sum(len(f) for f in plan.files_to_delete.values()) == 8
    # each file of the slice read twice: for the list of partitions, then for their files
    reads = Counter(r.rsplit("/", 1)[-1] for r in storage.opened if "/.hoodie/metadata/files/" in r)
    assert reads and set(reads.values()) == {2}, reads
