"""Undo one write instant, completed or not: the rollback step of a restore.

:mod:`.rollback` undoes *failed* writes, finding the partitions they wrote by their markers
and inflight workload. A restore also undoes *completed* commits, whose markers are gone;
their partitions are found from what the instant recorded (write stats, inflight workload,
compaction plan), or every partition when it recorded nothing readable. Both then find
and undo its files in those partitions by the same rules and the same code
(:func:`.rollback.undo_requests`, :func:`.rollback.apply_requests`, guarded by
:class:`.rollback.UndoGuard`).

The order makes every step safe to interrupt: the completed instant file goes first, so
readers see the instant as never committed before any file changes; the inflight and
requested files go last, so a resumed restore (or a writer's rollback of failed writes)
can still find the instant and its workload.
"""
from __future__ import annotations

import time
from dataclasses import dataclass

from hoodie.markers import DirectMarkers
from hoodie.services.rollback import apply_requests, marked_files, undo_requests
from hoodie.services.timeline_files import TimelineFile
from hoodie.table.fs_view import FileSystemView
from hoodie.table.table import HoodieTable
from hoodie.timeline.commit_metadata import CommitMetadata
from hoodie.timeline.compaction_plan import CompactionPlan
from hoodie.timeline.instant import Action, Instant, State
from hoodie.timeline.rollback_metadata import RollbackMetadata, RollbackRequest


@dataclass(frozen=True)
class UndoPlan:
    """What undoing ``instant`` changes: files to delete and slices whose logs get a
    rollback block, as a rollback plan states them."""

    instant: Instant
    requests: tuple[RollbackRequest, ...]

    def files_to_delete(self) -> list[str]:
        return [p for r in self.requests for p in r.files_to_delete]


def _known_partitions(table: HoodieTable, view: FileSystemView, instant: Instant, files: list[TimelineFile]) -> tuple[set[str] | None, set[str]]:
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
    marked, by_markers = marked_files(table, instant.timestamp, view)
    known = known or bool(marked)
    return (partitions | marked if known else None), written | by_markers


def plan_undo(table: HoodieTable, instant: Instant, files: list[TimelineFile]) -> UndoPlan:
    """Find what ``instant`` wrote; reads its timeline files and lists its partitions."""
    # a view of storage: files of a write that never completed are in no committed slice,
    # nor in the metadata table (which knows committed files only)
    view = table.storage_view()
    partitions, written = _known_partitions(table, view, instant, files)
    completed = any(f.instant.is_completed for f in files)
    if partitions is None:
        # it may have written files but recorded nothing readable: look everywhere (unless
        # it is requested only, with no markers: then it never wrote anything)
        wrote = any(f.instant.is_inflight for f in files) or completed
        partitions = set(view.all_partition_paths()) if wrote else set()
    t = instant.timestamp
    return UndoPlan(instant, undo_requests(table, view, t, partitions, written, completed=completed, logs=True, source=f"the undo of {t}"))


def _delete_timeline_files(table: HoodieTable, files: list[TimelineFile], states: tuple[State, ...]) -> None:
    for f in files:
        if f.instant.state in states:
            table.storage.delete(f.path)


def execute_undo(table: HoodieTable, plan: UndoPlan, files: list[TimelineFile], rollback_time: str) -> RollbackMetadata:
    """Undo the instant; returns what it did (``HoodieRollbackMetadata``)."""
    started = time.monotonic()
    # 1. the instant stops counting as committed before any data file changes
    _delete_timeline_files(table, files, (State.COMPLETED,))
    metadata = apply_requests(table, plan.requests, rollback_time, plan.instant, started)
    # 2. only now forget the instant: until here a crash resumes this undo
    _delete_timeline_files(table, files, (State.INFLIGHT, State.REQUESTED))
    DirectMarkers(table.storage, table.base_path, plan.instant.timestamp).delete_all()
    return metadata
