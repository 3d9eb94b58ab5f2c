"""Roll back failed writes, and failed attempts of a compaction.

A write that never completed leaves a requested/inflight instant, markers and maybe data
files. Rollback plans what to undo in the partitions its markers and inflight workload
name (listed, for files whose markers were lost), saves the plan as
``<t>.rollback.requested``, deletes the files and neutralises the logs, writes
``<t>.rollback`` with what it did, then removes the failed instant and its markers. Every
step is idempotent, so a rollback interrupted by a crash is simply resumed by the next
writer.

How an instant's files are found in a partition and undone (:func:`undo_requests`,
:func:`apply_requests`, :class:`UndoGuard`) is shared with the undo step of a restore
(:mod:`.undo`), which undoes completed commits too.
"""
from __future__ import annotations

import contextlib
import logging
import time
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, replace

from hoodie.errors import TimelineError
from hoodie.formats.log import CommandBlock, HeaderKey, LogFileReader, write_log_file
from hoodie.formats.log.blocks import CorruptBlock
from hoodie.layout import LogFileName, parse_base_file_name, parse_log_file_name
from hoodie.markers import DirectMarkers, log_file_written_by
from hoodie.storage.paths import relative, relative_to, under
from hoodie.table.committed import paths_completed_writes_name
from hoodie.table.fs_view import FileSystemView
from hoodie.table.table import HoodieTable
from hoodie.timeline import write_claims
from hoodie.timeline.commit_metadata import CommitMetadata
from hoodie.timeline.instant import Action, Instant, State
from hoodie.timeline.rollback_metadata import RollbackMetadata, RollbackPartitionMetadata, RollbackPlan, RollbackRequest

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class RollbackResult:
    rollback_instant: str
    rolled_back: str
    deleted_files: tuple[str, ...]


def pending_writes(table: HoodieTable) -> list[Instant]:
    return table.timeline.pending(Action.WRITE_ACTIONS)


def rollback_failed_writes(table: HoodieTable) -> list[RollbackResult]:
    """Finish interrupted rollbacks, then roll back every pending write (single writer).

    A pending write whose writer has claimed it for its commit (``write_claims``) is left
    to that writer: it is completing at this very moment."""
    results = []
    resumed: set[str] = set()
    for rb, plan in _pending_rollbacks(table):
        failed = plan.instant_to_rollback
        # the claim of whoever started it (alive) stays until it is done; ours, taken
        # fresh or over from a starter that died, goes when this run is done
        claim = write_claims.claim(table.storage, table.base_path, failed.timestamp, write_claims.ROLLBACK)
        results.append(_execute(table, rb, failed, plan))
        if claim.ours:
            write_claims.release(table.storage, table.base_path, failed.timestamp)
        resumed.add(failed.timestamp)
    for inst in table.timeline.reload().pending(Action.WRITE_ACTIONS):
        if inst.timestamp in resumed:
            continue
        result = _rollback_unless_committing(table, inst)
        if result is not None:
            results.append(result)
    return results


def _rollback_unless_committing(table: HoodieTable, pending: Instant) -> RollbackResult | None:
    claim = write_claims.claim(table.storage, table.base_path, pending.timestamp, write_claims.ROLLBACK)
    if not claim.ours and claim.outcome == write_claims.COMMIT:
        log.warning("write %s is being committed by its writer: left to it", pending.timestamp)
        return None
    timeline = table.timeline.reload()
    if not any(i.timestamp == pending.timestamp for i in timeline.pending(Action.WRITE_ACTIONS)):
        # completed (or rolled back) between the listing and the claim
        if claim.ours:
            write_claims.release(table.storage, table.base_path, pending.timestamp)
        return None
    # a rollback that fails keeps its claim: it may have deleted files already, so the
    # instant's writer must not commit it (the claim goes once this process does)
    result = rollback_instant(table, pending)
    if claim.ours:
        write_claims.release(table.storage, table.base_path, pending.timestamp)
    return result


def rollback_instant(table: HoodieTable, failed: Instant, partitions: Iterable[str] = ()) -> RollbackResult | None:
    """Roll back ``failed`` (``partitions`` are listed for its files besides those its
    markers and inflight workload name); ``None`` when there was nothing left to undo
    (another writer's rollback removed the instant and every file it wrote)."""
    requests = _plan_requests(table, failed, partitions)
    if not requests and not table.timeline.reload().contains(failed.timestamp):
        DirectMarkers(table.storage, table.base_path, failed.timestamp).delete_all()
        return None
    return _start(table, failed, requests)


def rollback_compaction_attempt(table: HoodieTable, inflight: Instant, partitions: Iterable[str]) -> RollbackResult:
    """Roll back a failed attempt of a compaction, as Hudi's ``rollbackInflightCompaction``
    does: a rollback instant deletes the base files the attempt wrote (its markers name
    them; the plan's ``partitions`` are listed for files whose marker was lost), then the
    compaction goes back to requested, to be run again under the same instant. Log files
    are never touched: those on the slice the compaction opens belong to later writes."""
    for rb, plan in _pending_rollbacks(table):
        # a rollback of this attempt that a crash interrupted is finished, not started anew
        # (left pending, a writer would resume it later, after the compaction ran again)
        if plan.instant_to_rollback.timestamp == inflight.timestamp:
            return _execute(table, rb, inflight, plan)
    return _start(table, inflight, _plan_requests(table, inflight, partitions))


def _pending_rollbacks(table: HoodieTable) -> list[tuple[Instant, RollbackPlan]]:
    """Rollbacks a crash interrupted, with their plans. A plan aimed at a completed
    instant is no interrupted rollback of a failed write (those never complete): it is
    left alone with a warning, and nothing it names is touched."""
    timeline = table.timeline.reload()
    out = []
    completed = {i.timestamp for i in timeline.completed()}
    for rb in timeline.pending([Action.ROLLBACK]):
        plan = _read_plan(table, rb)
        target = plan.instant_to_rollback
        if target.timestamp in completed:
            log.warning("rollback %s of %s is aimed at %s, a completed instant: ignored", rb.timestamp, table.base_path, target.timestamp)
            continue
        out.append((rb, plan))
    return out


def _read_plan(table: HoodieTable, rb: Instant) -> RollbackPlan:
    """The saved ``HoodieRollbackPlan`` of ``rb``, every path in it checked and rebuilt
    under the table's base path: resuming a plan deletes what it lists, so a plan that
    names anything outside the table stops the rollback (:class:`UnsafePathError`). Files
    the plan would delete that its target did not write are dropped (:class:`UndoGuard`)."""
    plan = table.timeline.rollback_plan(rb)
    guard = UndoGuard(table, plan.instant_to_rollback.timestamp, f"the plan of rollback {rb.timestamp}")
    return replace(plan, requests=tuple(replace(r, files_to_delete=tuple(guard.deletable(r.files_to_delete))) for r in plan.requests))


class UndoGuard:
    """What undoing ``instant`` may delete: files whose name carries the instant (its
    base files, log files of slices it opened) that no completed write other than the
    instant itself names. Whatever else a marker or a plan asks for is left alone, each
    with a warning naming it."""

    def __init__(self, table: HoodieTable, instant: str, source: str) -> None:
        self._table = table
        self._instant = instant
        self._source = source
        self._committed: frozenset[str] | None = None

    def deletable(self, paths: Iterable[str]) -> list[str]:
        """Of ``paths`` (absolute), those the undo may delete."""
        out = []
        for path in paths:
            name = path.rsplit("/", 1)[-1]
            parsed = parse_base_file_name(name) or parse_log_file_name(name)
            rel = relative_to(path, self._table.base_path)
            if parsed is None or parsed.instant != self._instant:
                log.warning("%s would delete %s, which %s did not write: left alone", self._source, rel, self._instant)
            elif rel in self._named_by_completed():
                log.warning("%s would delete %s, which a completed commit names: left alone", self._source, rel)
            else:
                out.append(path)
        return out

    def _named_by_completed(self) -> frozenset[str]:
        if self._committed is None:  # read only when there is something to delete
            self._committed = paths_completed_writes_name(self._table.timeline.reload(), excluding=(self._instant,))
        return self._committed


def _start(table: HoodieTable, failed: Instant, requests: tuple[RollbackRequest, ...]) -> RollbackResult:
    """Save the rollback plan of ``failed`` as a requested rollback instant, then run it."""
    timeline = table.timeline.reload()
    plan = RollbackPlan(failed, requests)
    rb = timeline.request_new(Action.ROLLBACK, plan.encode())
    return _execute(table, rb, failed, plan)


def _plan_requests(table: HoodieTable, failed: Instant, partitions: Iterable[str] = ()) -> tuple[RollbackRequest, ...]:
    """What to undo of a failed write: the partitions its markers and inflight workload
    name, and ``partitions``, are listed for the files it wrote (:func:`undo_requests`);
    the workload catches files whose marker never made it. A compaction's log files are
    left alone: it writes none, and later writes' logs carry its instant as their base
    instant."""
    compaction = failed.action == Action.COMPACTION
    # a view of storage: the failed write's files are in no committed slice (nor in the
    # metadata table), so only a listing of storage shows them (it lists each partition
    # once, for the markers and the scan)
    view = table.storage_view()
    listed, written = marked_files(table, failed.timestamp, view)
    listed.update(partitions)
    if failed.is_inflight and not compaction:
        try:
            meta = CommitMetadata.decode(table.timeline.read_content(failed), failed.timestamp)
            listed.update(meta.partition_to_write_stats)
        except Exception:  # an unreadable inflight file must not block the rollback
            pass
    return undo_requests(table, view, failed.timestamp, listed, written, completed=False, logs=not compaction, source=f"the rollback of {failed.timestamp}")


def marked_files(table: HoodieTable, instant: str, view: FileSystemView) -> tuple[set[str], set[str]]:
    """(partitions, relative paths) the markers of ``instant`` name (``view``, a local
    view, lists the partitions of APPEND markers)."""
    markers = DirectMarkers(table.storage, table.base_path, instant)
    partitions: set[str] = set()
    written: set[str] = set()
    for entry in markers.entries(strict=False):  # the written partitions are listed too
        partitions.add(entry.partition_path)
        written.update(markers.files_of(entry, view.partition_files))
    return partitions, written


def undo_requests(
    table: HoodieTable, view: FileSystemView, instant: str, partitions: Iterable[str], written: set[str], *, completed: bool, logs: bool, source: str
) -> tuple[RollbackRequest, ...]:
    """How to undo what ``instant`` wrote in ``partitions`` (each listed once, by ``view``,
    a local view: files of a write that never completed are in no committed slice), as Hudi's
    listing-based rollback does: files named with the instant (base files it wrote, and,
    when ``logs``, log files of slices it opened) are deleted, so the previous version of
    each file group is the latest again; log files it appended to older slices (those of
    ``written``, relative paths it recorded, or, for an instant that never ``completed``,
    any whose first block it wrote) get a rollback command block on their slice, so no
    reader applies them. Deletions pass :class:`UndoGuard` (``source`` names the undo in
    its warnings)."""
    delete: dict[str, set[str]] = defaultdict(set)
    neutralise: dict[tuple[str, str, str], dict[str, int]] = defaultdict(dict)
    for partition in sorted(partitions):
        for info in view.partition_files(partition):
            b = parse_base_file_name(info.name)
            if b is not None:
                if b.instant == instant:
                    delete[partition].add(info.path)
                continue
            lf = parse_log_file_name(info.name)
            if not logs or lf is None or (lf.cdc and lf.instant != instant):
                continue
            if lf.instant == instant:
                delete[partition].add(info.path)
            elif relative(partition, info.name) in written or (not completed and log_file_written_by(table.storage, info.path, instant)):
                neutralise[(partition, lf.file_id, lf.instant)][info.path] = info.size
    guard = UndoGuard(table, instant, source)
    kept = {p: guard.deletable(sorted(paths)) for p, paths in sorted(delete.items())}
    return tuple(
        [RollbackRequest(p, files_to_delete=tuple(paths)) for p, paths in kept.items() if paths]
        + [RollbackRequest(p, fid, base, (), dict(sorted(sizes.items()))) for (p, fid, base), sizes in sorted(neutralise.items())]
    )


ROLLBACK_WRITE_TOKEN = "1-0-1"  # the token Java's rollback gives its command-block log files


def append_rollback_block(table: HoodieTable, view: FileSystemView, partition: str, file_id: str, base: str, rollback_time: str, target: str) -> str:
    """A new log version of the slice (``file_id``, ``base``) holding a rollback command
    block for ``target``; reused if an interrupted run already wrote that very block.
    ``view`` is a local view of the table: its listing of the partition, taken after the
    files the rollback deletes were deleted, names every log version (committed or not)."""
    directory = under(table.base_path, partition)
    versions = []
    for info in view.partition_files(partition):
        lf = parse_log_file_name(info.name)
        if lf is None or lf.file_id != file_id or lf.instant != base:
            continue
        versions.append(lf.version)
        if lf.write_token == ROLLBACK_WRITE_TOKEN and _is_rollback_of(table, info.path, rollback_time, target):
            return info.path
    path = under(directory, LogFileName(file_id, base, max(versions, default=0) + 1, ROLLBACK_WRITE_TOKEN).name)
    write_log_file(table.storage, path, [CommandBlock.rollback(rollback_time, target)])
    view.forget(partition)  # the next block on this partition sees this one
    return path


def _is_rollback_of(table: HoodieTable, path: str, rollback_time: str, target: str) -> bool:
    with LogFileReader(table.storage, path) as reader:
        for found in reader.scan():
            if isinstance(found, CorruptBlock):
                return False
            h = found.header
            return h.get(HeaderKey.INSTANT_TIME) == rollback_time and h.get(HeaderKey.TARGET_INSTANT_TIME) == target
    return False


def apply_requests(table: HoodieTable, requests: Iterable[RollbackRequest], rollback_time: str, target: Instant, started: float) -> RollbackMetadata:
    """Carry out ``requests`` (undoing ``target`` under the instant ``rollback_time``, begun
    at ``started``, monotonic): delete their files, append their rollback command blocks.
    Returns what was done, partition by partition in the order of the requests."""
    done: dict[str, tuple[list[str], list[str], dict[str, int], dict[str, int]]] = {}
    # lists a partition (storage: the log versions of failed writes count) when a rollback block goes there
    view = table.storage_view()
    for req in requests:
        success, failed, commands, failed_logs = done.setdefault(req.partition_path, ([], [], {}, {}))
        for path in req.files_to_delete:
            try:
                if table.storage.delete(path):  # a marker whose file never got written deletes nothing
                    success.append(path)
            except OSError:
                failed.append(path)
        if req.files_to_delete:
            view.forget(req.partition_path)  # a listing taken before would still show them
        if req.log_blocks_to_delete:
            assert req.file_id is not None and req.latest_base_instant is not None  # RollbackRequest.from_avro checks it
            command_log = append_rollback_block(table, view, req.partition_path, req.file_id, req.latest_base_instant, rollback_time, target.timestamp)
            commands[command_log] = table.storage.size(command_log)
            failed_logs.update(req.log_blocks_to_delete)
    partitions = {p: RollbackPartitionMetadata(p, tuple(success), tuple(failed), commands, logs) for p, (success, failed, commands, logs) in done.items()}
    return RollbackMetadata.of(rollback_time, target, partitions, int((time.monotonic() - started) * 1000))


def _execute(table: HoodieTable, rb: Instant, failed: Instant, plan: RollbackPlan) -> RollbackResult:
    started = time.monotonic()
    timeline = table.timeline.reload()
    if not timeline.storage.exists(timeline.instant_path(rb.with_state(State.INFLIGHT))):
        with contextlib.suppress(TimelineError):  # another writer resuming it got there first
            timeline.transition_to_inflight(rb, b"")
    metadata = apply_requests(table, plan.requests, rb.timestamp, failed, started)
    try:
        timeline.transition_to_completed(rb, metadata.encode())
    except TimelineError:
        if not timeline.storage.exists(timeline.instant_path(rb.with_state(State.COMPLETED))):
            raise  # else another writer resuming this rollback completed it first
    # Only now forget the failed instant: until here a crash resumes this rollback. A
    # compaction keeps its requested plan, to be run again.
    forgotten = (State.INFLIGHT,) if failed.action == Action.COMPACTION else (State.INFLIGHT, State.REQUESTED)
    timeline.delete_instant_files(failed, forgotten)
    DirectMarkers(table.storage, table.base_path, failed.timestamp).delete_all()
    return RollbackResult(rb.timestamp, failed.timestamp, tuple(metadata.deleted_files()))
