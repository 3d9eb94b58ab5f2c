"""Undo one write instant, completed or not: the rollback step of a restore.

:mod:`.rollback` undoes *failed* writes, finding their files by markers. A restore also
undoes *completed* commits, whose markers are gone; their files are found from what the
instant recorded (write stats, inflight workload, compaction plan) plus a listing of those
partitions only. The rules, as Hudi's listing-based rollback:

* files named with the instant (base files it wrote, and log files of slices it opened,
  such as those of a compaction's slice) are deleted, so the previous version of each file
  group is the latest again;
* log files it appended to older slices get a rollback command block on that slice
  (merge-on-read), as :mod:`.rollback` does for failed writes, so no reader applies them.

The order makes every step safe to interrupt: the completed instant file goes first, so
readers see the instant as never committed before any file changes; the inflight and
requested files go last, so a resumed restore (or a writer's rollback of failed writes)
can still find the instant and its workload.
"""
from __future__ import annotations

import time
from collections import defaultdict
from dataclasses import dataclass, field

from hoodie.layout import parse_base_file_name, parse_log_file_name
from hoodie.markers import DirectMarkers, log_file_written_by
from hoodie.services.rollback import UndoGuard, UndoRecord, append_rollback_block
from hoodie.services.timeline_files import TimelineFile
from hoodie.storage.paths import relative_to, under
from hoodie.table.fs_view import FileSystemView
from hoodie.table.table import HoodieTable
from hoodie.timeline.commit_metadata import CommitMetadata
from hoodie.timeline.compaction_plan import CompactionPlan
from hoodie.timeline.instant import Action, Instant, State
from hoodie.timeline.rollback_metadata import RollbackMetadata


@dataclass
class UndoPlan:
    """What undoing ``instant`` changes: files to delete (partition → absolute paths) and
    slices whose logs get a rollback block ((partition, file id, base instant) → the log
    files the instant wrote there, with their sizes)."""

    instant: Instant
    delete: dict[str, set[str]] = field(default_factory=lambda: defaultdict(set))
    rollback_logs: dict[tuple[str, str, str], dict[str, int]] = field(default_factory=lambda: defaultdict(dict))


def _known_partitions(table: HoodieTable, instant: Instant, files: list[TimelineFile]) -> tuple[set[str] | None, set[str]]:
    """(partitions the instant touched, or None if unknown; relative paths it wrote)."""
    partitions: set[str] = set()
    written: set[str] = set()
    known = False
    for f in reversed(files):  # the completed file knows best, then the inflight workload
        content = table.storage.read_bytes(f.path) if f.size else b""
        if not content.strip():
            continue
        if f.instant.action in (Action.COMPACTION, Action.LOG_COMPACTION):
            if f.instant.is_requested:
                plan = CompactionPlan.decode(content, instant.timestamp)
                partitions.update(op.partition_path for op in plan.operations)
                known = True
            continue
        if f.instant.action in Action.WRITE_ACTIONS and not f.instant.is_requested:
            meta = CommitMetadata.decode(content, instant.timestamp)
            partitions.update(meta.partition_to_write_stats)
            if f.instant.is_completed:
                written.update(s.path for s in meta.write_stats() if s.path)
            known = True
    markers = DirectMarkers(table.storage, table.base_path, instant.timestamp)
    for entry in markers.entries(strict=False):  # the written partitions are listed too
        partitions.add(entry.partition_path)
        written.update(markers.files_of(entry))
        known = True
    return (partitions if known else None), written


def plan_undo(table: HoodieTable, instant: Instant, files: list[TimelineFile]) -> UndoPlan:
    """Find what ``instant`` wrote; reads its timeline files and lists its partitions."""
    plan = UndoPlan(instant)
    t = instant.timestamp
    partitions, written = _known_partitions(table, instant, files)
    completed = any(f.instant.is_completed for f in files)
    if partitions is None:
        if any(f.instant.is_inflight for f in files) or completed:
            # it may have written files but recorded nothing readable: look everywhere
            partitions = set(FileSystemView(table.storage, table.base_path, table.timeline).all_partition_paths())
        else:
            partitions = set()  # requested only, no markers: it never wrote anything
    for partition in sorted(partitions):
        directory = under(table.base_path, partition)
        for info in table.storage.list_dir(directory):
            if info.is_dir:
                continue
            rel = relative_to(info.path, table.base_path)
            b = parse_base_file_name(info.name)
            if b is not None:
                if b.instant == t:
                    plan.delete[partition].add(info.path)
                continue
            lf = parse_log_file_name(info.name)
            if lf is None or (lf.cdc and lf.instant != t):
                continue
            if lf.instant == t:
                plan.delete[partition].add(info.path)
            elif rel in written or (not completed and log_file_written_by(table.storage, info.path, t)):
                plan.rollback_logs[(partition, lf.file_id, lf.instant)][info.path] = info.size
    guard = UndoGuard(table, t, f"the undo of {t}")
    for partition, paths in plan.delete.items():
        plan.delete[partition] = set(guard.deletable(sorted(paths)))
    return plan


def _delete_timeline_files(table: HoodieTable, files: list[TimelineFile], states: tuple[State, ...]) -> None:
    for f in files:
        if f.instant.state in states:
            table.storage.delete(f.path)


def execute_undo(table: HoodieTable, plan: UndoPlan, files: list[TimelineFile], rollback_time: str) -> RollbackMetadata:
    """Undo the instant; returns what it did (``HoodieRollbackMetadata``)."""
    started = time.monotonic()
    target = plan.instant.timestamp
    # 1. the instant stops counting as committed before any data file changes
    _delete_timeline_files(table, files, (State.COMPLETED,))
    done = UndoRecord()
    for partition, paths in sorted(plan.delete.items()):
        for path in sorted(paths):
            done.delete(table, partition, path)
    for (partition, file_id, base), logs in sorted(plan.rollback_logs.items()):
        done.neutralised(table, partition, append_rollback_block(table, partition, file_id, base, rollback_time, target), logs)
    # 2. only now forget the instant: until here a crash resumes this undo
    _delete_timeline_files(table, files, (State.INFLIGHT, State.REQUESTED))
    DirectMarkers(table.storage, table.base_path, target).delete_all()
    return done.metadata(rollback_time, plan.instant, started)
