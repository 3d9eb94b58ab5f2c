"""Roll back failed writes.

A write that never completed leaves a requested/inflight instant, markers and maybe data
files. Rollback plans the files to delete (from the markers, plus a listing of the
partitions the inflight workload names, for files whose markers were lost), saves the
plan as ``<t>.rollback.requested``, deletes the files, writes ``<t>.rollback`` with what
it did, then removes the failed instant and its markers. Every step is idempotent, so a
rollback interrupted by a crash is simply resumed by the next writer.
"""
from __future__ import annotations

import time
from collections import defaultdict
from dataclasses import dataclass

from hoodie.layout import parse_base_file_name, parse_log_file_name
from hoodie.storage.base import join
from hoodie.table.table import HoodieTable
from hoodie.timeline import avro_metadata as avro
from hoodie.timeline.commit_metadata import CommitMetadata
from hoodie.timeline.instant import Action, Instant, State
from hoodie.writer.markers import DirectMarkers


@dataclass(frozen=True)
class RollbackResult:
    rollback_instant: str
    rolled_back: str
    deleted_files: tuple[str, ...]


def pending_writes(table: HoodieTable) -> list[Instant]:
    return table.timeline.pending(Action.WRITE_ACTIONS)


def rollback_failed_writes(table: HoodieTable) -> list[RollbackResult]:
    """Finish interrupted rollbacks, then roll back every pending write (single writer)."""
    results = []
    timeline = table.timeline
    resumed: set[str] = set()
    for rb in timeline.pending([Action.ROLLBACK]):
        plan = avro.decode(timeline.read_content(rb.with_state(State.REQUESTED)), f"rollback plan {rb.timestamp}")
        target = plan["instantToRollback"]
        results.append(_execute(table, rb, Instant(target["commitTime"], target["action"], State.INFLIGHT), plan))
        resumed.add(target["commitTime"])
        timeline = timeline.reload()
    for inst in timeline.pending(Action.WRITE_ACTIONS):
        if inst.timestamp in resumed:
            continue
        results.append(rollback_instant(table, inst))
    return results


def rollback_instant(table: HoodieTable, failed: Instant) -> RollbackResult:
    timeline = table.timeline.reload()
    rb_time = timeline.new_instant_time()
    requests = _plan_requests(table, failed)
    plan = {
        "instantToRollback": {"commitTime": failed.timestamp, "action": failed.action},
        "RollbackRequests": requests,
        "version": 1,
    }
    rb = timeline.create_requested(Instant(rb_time, Action.ROLLBACK, State.REQUESTED), avro.encode(avro.ROLLBACK_PLAN, plan))
    return _execute(table, rb, failed, plan)


def _plan_requests(table: HoodieTable, failed: Instant) -> list[dict]:
    files: dict[str, set[str]] = defaultdict(set)
    markers = DirectMarkers(table.storage, table.base_path, failed.timestamp)
    for entry in markers.entries():
        files[entry.partition_path].add(join(table.base_path, entry.data_file_path))
    # Partitions named by the inflight workload: catch files whose marker never made it.
    partitions: set[str] = set(files)
    if failed.is_inflight:
        try:
            meta = CommitMetadata.decode(table.timeline.read_content(failed), failed.timestamp)
            partitions.update(meta.partition_to_write_stats)
        except Exception:  # an unreadable inflight file must not block the rollback
            pass
    for partition in partitions:
        for info in table.storage.list_dir(join(table.base_path, partition)):
            b = parse_base_file_name(info.name)
            if b is not None and b.instant == failed.timestamp:
                files[partition].add(info.path)
            lf = parse_log_file_name(info.name)
            if lf is not None and lf.instant == failed.timestamp:
                files[partition].add(info.path)
    return [
        {"partitionPath": p, "fileId": None, "latestBaseInstant": None, "filesToBeDeleted": sorted(paths), "logBlocksToBeDeleted": {}}
        for p, paths in sorted(files.items())
    ]


def _execute(table: HoodieTable, rb: Instant, failed: Instant, plan: dict) -> RollbackResult:
    started = time.monotonic()
    timeline = table.timeline.reload()
    if not timeline.storage.exists(timeline.instant_path(rb.with_state(State.INFLIGHT))):
        timeline.transition_to_inflight(rb, b"")
    partition_meta: dict[str, dict] = {}
    deleted: list[str] = []
    for req in plan.get("RollbackRequests") or []:
        ok, failed_del = [], []
        for path in req.get("filesToBeDeleted") or []:
            try:
                table.storage.delete(path)
                ok.append(path)
            except OSError:
                failed_del.append(path)
        deleted.extend(ok)
        pm = partition_meta.setdefault(req["partitionPath"], {
            "partitionPath": req["partitionPath"], "successDeleteFiles": [], "failedDeleteFiles": [],
            "rollbackLogFiles": {}, "logFilesFromFailedCommit": {},
        })
        pm["successDeleteFiles"].extend(ok)
        pm["failedDeleteFiles"].extend(failed_del)
    metadata = {
        "startRollbackTime": rb.timestamp,
        "timeTakenInMillis": int((time.monotonic() - started) * 1000),
        "totalFilesDeleted": len(deleted),
        "commitsRollback": [failed.timestamp],
        "partitionMetadata": partition_meta,
        "version": 1,
        "instantsRollback": [{"commitTime": failed.timestamp, "action": failed.action}],
    }
    timeline.transition_to_completed(rb, avro.encode(avro.ROLLBACK_METADATA, metadata))
    # Only now forget the failed instant: until here a crash resumes this rollback.
    timeline.delete_instant_files(failed, (State.INFLIGHT, State.REQUESTED))
    DirectMarkers(table.storage, table.base_path, failed.timestamp).delete_all()
    return RollbackResult(rb.timestamp, failed.timestamp, tuple(deleted))
