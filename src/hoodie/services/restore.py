"""Restore a table to a savepoint: undo every write after it, newest first.

``restore_to(table, S)`` follows Hudi's restore:

1. plan: every write-timeline instant after ``S`` (commit, delta commit, replace commit,
   compaction; completed or pending), newest first, saved as ``<r>.restore.requested``
   (Avro ``HoodieRestorePlan`` version 2, naming the savepoint);
2. ``<r>.restore.inflight`` (empty);
3. each instant is undone (:mod:`.undo`): its new base files deleted so earlier versions
   are the latest again, rollback command blocks on slices it appended logs to, its
   timeline files removed. A replace commit's replaced file groups come back by
   themselves once its completed file is gone;
4. ``<r>.restore`` records the rollback metadata of each (Avro ``HoodieRestoreMetadata``).

Java creates a rollback instant per undone commit and deletes them at the end; hoodie
undoes them under the restore instant directly (the command blocks carry its time), so no
rollback instant is ever left for a writer to misread. A restore interrupted at any step
is finished by calling ``restore_to`` again (or :func:`resume_restore`): instants already
undone are gone from the timeline and are recorded with empty rollback metadata.
Writers should not run while a restore is pending (see :func:`pending_restore`).
"""
from __future__ import annotations

import time
from dataclasses import dataclass

from hoodie.errors import InstantNotFoundError, TimelineError
from hoodie.formats.log import first_block_instant
from hoodie.layout import InstantTime, parse_log_file_name
from hoodie.services.decision import ServiceDecision
from hoodie.services.savepoint import savepoint_instants
from hoodie.services.timeline_files import files_of, timeline_files
from hoodie.services.undo import execute_undo, plan_undo
from hoodie.table.table import HoodieTable
from hoodie.timeline.instant import Action, Instant, State
from hoodie.timeline.rollback_metadata import RestoreMetadata, RestorePlan, RollbackMetadata

# what a restore undoes: everything that writes data files, in any state
_WRITE_TIMELINE = (*Action.WRITE_ACTIONS, Action.COMPACTION, Action.LOG_COMPACTION, Action.CLUSTERING)


@dataclass(frozen=True)
class RestoreResult:
    """A completed restore: the instants undone (newest first) and the files involved."""

    restore_instant: str
    savepoint: str
    rolled_back: tuple[str, ...]
    deleted_files: tuple[str, ...]
    rollback_log_files: tuple[str, ...]
    resumed: bool = False

    @property
    def ran(self) -> bool:
        return True


def pending_restore(table: HoodieTable) -> Instant | None:
    """A restore left requested or inflight, if any (the table is half restored)."""
    pending = table.timeline.pending([Action.RESTORE])
    return pending[0] if pending else None


def instants_to_restore(table: HoodieTable, savepoint: str) -> list[Instant]:
    """Write-timeline instants after ``savepoint``, newest first."""
    after = [
        i for i in table.timeline.instants
        if i.action in _WRITE_TIMELINE and i.time > InstantTime(savepoint)
    ]
    return sorted(after, key=Instant.sort_key, reverse=True)


def _check_savepoint(table: HoodieTable, savepoint: str) -> None:
    savepoints = [i.timestamp for i in savepoint_instants(table)]
    if savepoint not in savepoints:
        have = ", ".join(savepoints) or "none"
        raise InstantNotFoundError(f"no savepoint at {savepoint} in {table.base_path} (savepoints: {have})")
    # metadata the cleaner would refuse (undecodable, or naming paths outside the table)
    # is refused here too: a restore trusts nothing a clean would not
    table.timeline.savepoint(Instant(savepoint, Action.SAVEPOINT, State.COMPLETED))
    later = [s for s in savepoints if InstantTime(s) > InstantTime(savepoint)]
    if later:
        # their commits are about to disappear: they would pin files of a history that no longer exists
        raise TimelineError(f"cannot restore {table.base_path} to {savepoint}: later savepoints {', '.join(later)} must be deleted first")


def _check_plan(table: HoodieTable, restore: Instant, plan: RestorePlan) -> None:
    """A pending restore is finished only if it goes to a savepoint that exists and undoes
    nothing at or before it: a plan that asks for more touches nothing."""
    target = plan.savepoint
    what = f"restore {restore.timestamp} of {table.base_path}"
    remedy = f"nothing was undone; remove {restore.timestamp}.restore.requested (and .inflight) from .hoodie if no restore of yours left it"
    if not any(i.timestamp == target for i in savepoint_instants(table)):
        raise TimelineError(f"{what} goes to {target or 'no instant'}, which is not a savepoint of the table: {remedy}")
    table.timeline.savepoint(Instant(target, Action.SAVEPOINT, State.COMPLETED))
    for instant in plan.instants_to_rollback:
        if instant.time <= InstantTime(target) or instant.action not in _WRITE_TIMELINE:
            raise TimelineError(f"{what} to savepoint {target} would undo {instant.action} {instant.timestamp}, which a restore to it keeps: {remedy}")


def restore_to(table: HoodieTable, savepoint: str) -> RestoreResult | ServiceDecision:
    """Bring the table back to exactly its state at the savepoint ``savepoint``."""
    table.require_writable("restore")
    table = table.reload()
    pending = pending_restore(table)
    if pending is not None:
        plan = table.timeline.restore_plan(pending)
        target = plan.savepoint
        _check_plan(table, pending, plan)
        if target != savepoint:
            raise TimelineError(f"restore {pending.timestamp} of {table.base_path} to {target} is unfinished; finish it first (restore_to(table, {target!r}))")
        return _execute(table, pending, plan, resumed=True)
    _check_savepoint(table, savepoint)
    undo = instants_to_restore(table, savepoint)
    if not undo:
        return ServiceDecision("restore", f"{table.base_path} has no write after savepoint {savepoint}: nothing to undo")
    timeline = table.timeline
    restore = Instant(timeline.new_instant_time(), Action.RESTORE, State.REQUESTED)
    plan = RestorePlan(savepoint, tuple(undo))
    timeline.create_requested(restore, plan.encode())
    return _execute(table, restore, plan, resumed=False)


def resume_restore(table: HoodieTable) -> RestoreResult | None:
    """Finish a pending restore, if there is one."""
    table = table.reload()
    pending = pending_restore(table)
    if pending is None:
        return None
    plan = table.timeline.restore_plan(pending)
    _check_plan(table, pending, plan)
    return _execute(table, pending, plan, resumed=True)


def _execute(table: HoodieTable, restore: Instant, plan: RestorePlan, resumed: bool) -> RestoreResult:
    started = time.monotonic()
    timeline = table.timeline
    if not timeline.storage.exists(timeline.instant_path(restore.with_state(State.INFLIGHT))):
        timeline.transition_to_inflight(restore, b"")
    undone: dict[str, tuple[RollbackMetadata, ...]] = {}
    deleted: list[str] = []
    command_logs: list[str] = []
    own: set[str] = set()
    for target in plan.instants_to_rollback:
        # reread the timeline each time: every undo removes files from it
        table = table.reload()
        files = files_of(timeline_files(table), target.timestamp, target.action)
        if not files:
            # undone by an earlier attempt of this restore
            undone[target.timestamp] = (RollbackMetadata.of(restore.timestamp, target, {}, 0),)
            continue
        undo = plan_undo(table, target, files)
        # rollback logs an earlier attempt of this restore wrote, which this undo deletes
        # (checked now: once deleted, nothing says who wrote them)
        own.update(
            p for p in undo.files_to_delete()
            if parse_log_file_name(p.rsplit("/", 1)[-1]) is not None and first_block_instant(table.storage, p) == restore.timestamp
        )
        metadata = execute_undo(table, undo, files, restore.timestamp)
        undone[target.timestamp] = (metadata,)
        deleted.extend(metadata.deleted_files())
        command_logs.extend(metadata.command_logs())
    record = RestoreMetadata(restore.timestamp, plan.instants_to_rollback, undone, int((time.monotonic() - started) * 1000))
    table.timeline.reload().transition_to_completed(restore.with_state(State.INFLIGHT), record.encode())
    # The result is the net effect: undoing an older instant can delete a rollback log that
    # undoing a newer one wrote (the file group it appended to goes away), in this attempt
    # or an interrupted one. Such a log was neither there before the restore nor after it.
    # The Avro record keeps each undo as done.
    written, removed = set(command_logs) | own, set(deleted)
    return RestoreResult(
        restore.timestamp,
        plan.savepoint,
        tuple(i.timestamp for i in plan.instants_to_rollback),
        tuple(f for f in deleted if f not in written),
        tuple(f for f in dict.fromkeys(command_logs) if f not in removed),
        resumed,
    )
