"""Cleaning: delete file slices no retained view of the table needs any more.

A clean runs in Hudi's steps, each idempotent so that a crash is simply finished later:

1. :func:`plan_clean` (pure, see :mod:`.clean_plan`) picks the files;
2. the plan is saved as ``<t>.clean.requested`` (Avro ``HoodieCleanerPlan``), only when
   it deletes something, as Hudi does;
3. ``<t>.clean.inflight`` is written with the same plan bytes (Java 0.x does so);
4. the files are deleted through the Engine, one task per partition (a file already gone
   counts as deleted: an earlier attempt got to it);
5. ``<t>.clean`` records what was deleted (Avro ``HoodieCleanMetadata``, version 2).

:func:`clean` first finishes a clean left requested or inflight, and otherwise plans a
new one; it returns a :class:`CleanResult`, or a :class:`ServiceDecision` saying why
nothing was deleted.
"""
from __future__ import annotations

import logging
import posixpath
import time
from dataclasses import dataclass, replace

from hoodie.engine.base import Engine, TaskContext
from hoodie.engine.local import LocalEngine
from hoodie.errors import InstantNotFoundError, StorageError
from hoodie.layout import is_ascii_digits
from hoodie.services.clean_plan import (
    DEFAULT_CLEAN_SETTINGS,
    FILE_VERSIONS_RETAINED,
    CleanPlan,
    CleanPolicy,
    CleanSettings,
    allowed_deletions,
    earliest_instant_to_retain,
    plan_clean,
)
from hoodie.services.decision import ServiceDecision
from hoodie.storage.base import Storage
from hoodie.table.table import HoodieTable
from hoodie.timeline import write_claims
from hoodie.timeline.action_metadata import CleanMetadata, CleanPartitionMetadata
from hoodie.timeline.instant import Action, Instant, State

__all__ = [
    "CleanPlan",
    "CleanPolicy",
    "CleanResult",
    "CleanSettings",
    "clean",
    "earliest_instant_to_retain",
    "pending_cleans",
    "plan_clean",
    "run_clean",
    "schedule_clean",
]

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class CleanResult:
    """A completed clean: file names deleted (and not) per partition."""

    instant: str
    policy: str
    earliest_commit_to_retain: str
    deleted: dict[str, tuple[str, ...]]
    failed: dict[str, tuple[str, ...]]
    resumed: bool = False  # finished a clean an earlier run had started

    @property
    def ran(self) -> bool:
        return True

    @property
    def total_deleted(self) -> int:
        return sum(len(v) for v in self.deleted.values())


def pending_cleans(table: HoodieTable) -> list[Instant]:
    """Cleans left requested or inflight, oldest first."""
    return table.timeline.pending([Action.CLEAN])


def schedule_clean(table: HoodieTable, settings: CleanSettings = DEFAULT_CLEAN_SETTINGS, at: str | None = None) -> tuple[str | None, CleanPlan]:
    """Plan a clean and save it as ``<t>.clean.requested`` if it deletes anything (``t``
    a new instant time, or ``at`` when given: the metadata table cleans at an instant
    derived from its latest delta commit); returns (instant or None, plan)."""
    table.require_writable("clean")
    plan = plan_clean(table, settings)
    if not plan.should_run:
        return None, plan
    timeline = table.timeline.reload()
    if at is not None:
        return timeline.create_requested(Instant(at, Action.CLEAN, State.REQUESTED), plan.encode()).timestamp, plan
    instant = timeline.request_new(Action.CLEAN, plan.encode())
    return instant.timestamp, plan


@dataclass(frozen=True)
class _DeleteTask:
    storage: Storage
    partition: str
    paths: tuple[str, ...]


@dataclass(frozen=True)
class _Deleted:
    partition: str
    patterns: tuple[str, ...]
    deleted: tuple[str, ...]
    failed: tuple[str, ...]


def _delete_partition_files(task: _DeleteTask, ctx: TaskContext) -> _Deleted:
    """Delete one partition's files; names, as Java's HoodieCleanStat records them."""
    deleted, failed = [], []
    for path in task.paths:
        name = posixpath.basename(path)
        try:
            task.storage.delete(path)  # False when already gone: a retried clean got there first
            deleted.append(name)
        except (OSError, StorageError):
            failed.append(name)
    return _Deleted(task.partition, tuple(posixpath.basename(p) for p in task.paths), tuple(deleted), tuple(failed))


def run_clean(table: HoodieTable, instant: str | None = None, engine: Engine | None = None, settings: CleanSettings | None = None) -> CleanResult:
    """Execute a pending clean (the oldest by default) from its saved plan and complete it.

    Whoever saved the plan, a file is deleted only if the plan's own policy and boundary
    (a completed commit), and ``settings`` when given, allow a clean to delete it now
    (:func:`allowed_deletions`); any other file the plan names is left alone, with a
    warning naming it."""
    return _run_clean(table, instant, engine, settings, checked=True)


def _run_clean(table: HoodieTable, instant: str | None, engine: Engine | None, settings: CleanSettings | None, checked: bool) -> CleanResult:
    """``checked`` False: the plan was made by this very call of :func:`clean` and runs
    as it is."""
    table.require_writable("clean")
    table = table.reload()
    timeline = table.timeline
    pending = pending_cleans(table)
    if instant is not None:
        pending = [i for i in pending if i.timestamp == instant]
    if not pending:
        raise InstantNotFoundError(f"no pending clean{' at ' + instant if instant else ''} in {table.base_path}")
    inst = pending[0]
    started = time.monotonic()
    requested = inst.with_state(State.REQUESTED)
    plan_bytes = timeline.read_content(requested)
    plan = CleanPlan.of_saved(timeline.cleaner_plan(inst), inst.timestamp)
    if checked:
        plan = _within_rules(table, plan, settings, inst.timestamp)
    resumed = inst.is_inflight
    if not inst.is_inflight:
        timeline.transition_to_inflight(requested, plan_bytes)
    tasks = [_DeleteTask(table.storage, p, paths) for p, paths in sorted(plan.files_to_delete.items()) if paths]
    done = (engine or LocalEngine()).map(_delete_partition_files, tasks, "clean") if tasks else []
    earliest = plan.earliest_instant_to_retain.timestamp if plan.earliest_instant_to_retain else ""
    metadata = CleanMetadata(
        inst.timestamp,
        earliest,
        plan.last_completed_commit,
        {d.partition: CleanPartitionMetadata(d.partition, plan.policy.value, d.patterns, d.deleted, d.failed) for d in done},
        int((time.monotonic() - started) * 1000),
        dict(plan.extra_metadata) or None,
    )
    timeline.transition_to_completed(inst.with_state(State.INFLIGHT), metadata.encode())
    write_claims.sweep(table.storage, table.base_path)  # what writers that died left behind
    return CleanResult(
        inst.timestamp,
        plan.policy.value,
        earliest,
        {d.partition: d.deleted for d in done},
        {d.partition: d.failed for d in done if d.failed},
        resumed,
    )


def clean(
    table: HoodieTable, settings: CleanSettings = DEFAULT_CLEAN_SETTINGS, engine: Engine | None = None, at: str | None = None
) -> CleanResult | ServiceDecision:
    """Finish an interrupted clean if there is one; otherwise plan, save and run a new one
    (at instant ``at`` when given).

    Returns what was deleted, or why nothing was (too few commits, no partition written
    since the last clean, nothing old enough in the partitions scanned).
    """
    table.require_writable("clean")
    table = table.reload()
    if pending_cleans(table):
        return replace(run_clean(table, engine=engine, settings=settings), resumed=True)
    instant, plan = schedule_clean(table, settings, at)
    if instant is None:
        detail = f" ({plan.partition_selection})" if plan.partition_selection and plan.partition_selection not in plan.reason else ""
        return ServiceDecision("clean", plan.reason + detail)
    return _run_clean(table, instant, engine, settings, checked=False)


def _within_rules(table: HoodieTable, plan: CleanPlan, settings: CleanSettings | None, instant: str) -> CleanPlan:
    """``plan`` without the files that its own policy and boundary, or ``settings`` if
    given, do not allow a clean to delete now."""
    completed = {i.timestamp for i in table.timeline.completed_writes()}
    boundary = plan.earliest_instant_to_retain
    if boundary is not None and boundary.timestamp not in completed:
        log.warning("the plan of clean %s retains from %s, which is no completed commit of the table", instant, boundary.timestamp)
        boundary = None  # retains nothing certain, so it allows nothing
    versions = plan.extra_metadata.get(FILE_VERSIONS_RETAINED) or ""
    # a plan that does not say how many versions it keeps may still never take the latest
    own = CleanSettings(policy=plan.policy, file_versions_retained=int(versions) if is_ascii_digits(versions) and int(versions) > 0 else 1)
    rules = [(own, boundary)]
    if settings is not None:
        rules.append((settings, earliest_instant_to_retain(table.timeline, settings)))
    allowed = allowed_deletions(table, [p for p, paths in plan.files_to_delete.items() if paths], rules)
    kept: dict[str, tuple[str, ...]] = {}
    for partition, paths in plan.files_to_delete.items():
        ok = allowed.get(partition, frozenset())
        kept[partition] = tuple(p for p in paths if p in ok or not table.storage.exists(p))  # gone: an earlier attempt deleted it
        for path in sorted(set(paths) - set(kept[partition])):
            log.warning("the plan of clean %s names %s, which no clean may delete now (a latest, savepointed or retained slice): left alone", instant, path)
    return replace(plan, files_to_delete=kept)
