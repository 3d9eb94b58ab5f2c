"""Savepoints: pin the files of a completed commit so the table can be restored to it.

A savepoint is named after the commit it keeps (``<t>.savepoint.inflight``, then
``<t>.savepoint`` holding the Avro ``HoodieSavepointMetadata``: for every partition the
names of the base and log files of the latest file slices as of ``t``). The cleaner never
deletes a file a savepoint lists, and archival never archives at or past the earliest
savepoint, so :func:`hoodie.services.restore.restore_to` can always bring ``t`` back.
This module owns those instants; it never touches data files.
"""
from __future__ import annotations

import contextlib
import time

from hoodie.errors import FileAlreadyExistsError, InstantNotFoundError, TimelineError
from hoodie.layout import InstantTime
from hoodie.table.table import HoodieTable
from hoodie.timeline.action_metadata import SavepointInfo
from hoodie.timeline.instant import Action, Instant, State

__all__ = ["SavepointInfo", "create_savepoint", "delete_savepoint", "list_savepoints", "savepoint_instants"]


def savepoint_instants(table: HoodieTable) -> list[Instant]:
    """Completed savepoints on the active timeline, oldest first."""
    return table.timeline.completed([Action.SAVEPOINT])


def earliest_savepoint(table: HoodieTable) -> str | None:
    instants = savepoint_instants(table)
    return instants[0].timestamp if instants else None


def list_savepoints(table: HoodieTable) -> list[SavepointInfo]:
    """Every completed savepoint, oldest first."""
    return [table.timeline.savepoint(i) for i in savepoint_instants(table)]


def savepointed_file_names(table: HoodieTable) -> frozenset[str]:
    """Names of every file some savepoint pins (what the cleaner must keep)."""
    return frozenset(name for sp in list_savepoints(table) for name in sp.file_names())


def _lookback_start(table: HoodieTable) -> str | None:
    """The oldest commit whose files are certainly still there: the last clean's
    ``earliestCommitToRetain`` (older slices may be gone), else the first commit."""
    timeline = table.timeline
    cleans = timeline.completed([Action.CLEAN])
    if cleans:
        retained = timeline.clean_metadata(cleans[-1]).earliest_commit_to_retain
        if retained:
            return retained
    writes = timeline.completed_writes()
    return writes[0].timestamp if writes else None


def create_savepoint(table: HoodieTable, instant: str | None = None, user: str = "", comment: str = "") -> SavepointInfo:
    """Savepoint the completed commit ``instant`` (default: the latest one).

    Refused when the commit is not a completed write on the active timeline, is already
    savepointed, or is older than what the last clean kept (its files may be gone), as
    Hudi refuses it.
    """
    table.require_writable("savepoint")
    table = table.reload()
    timeline = table.timeline
    writes = {i.timestamp: i for i in timeline.completed_writes()}
    if instant is None:
        last = timeline.last_completed_write()
        if last is None:
            raise TimelineError(f"{table.base_path} has no completed commit to savepoint")
        instant = last.timestamp
    if instant not in writes:
        raise InstantNotFoundError(f"cannot savepoint {instant}: it is not a completed commit on the active timeline of {table.base_path}")
    if any(i.timestamp == instant for i in savepoint_instants(table)):
        raise TimelineError(f"commit {instant} of {table.base_path} is already savepointed")
    start = _lookback_start(table)
    if start is not None and InstantTime(instant) < InstantTime(start):
        raise TimelineError(f"cannot savepoint {instant}: it is older than {start}, the earliest commit the last clean kept, so its files may be gone")

    view = table.view(as_of=instant)
    files: dict[str, tuple[str, ...]] = {}
    for partition in view.all_partition_paths():
        names: list[str] = []
        for s in view.latest_slices(partition):
            if s.base_file is not None:
                names.append(s.base_file.file_name)
            names.extend(lf.file_name for lf in s.log_files)
        files[partition] = tuple(sorted(names))
    record = SavepointInfo(instant, user, int(time.time() * 1000), comment, files)
    # Java creates the inflight file directly (a savepoint has no requested state).
    inflight = Instant(instant, Action.SAVEPOINT, State.INFLIGHT)
    with contextlib.suppress(FileAlreadyExistsError):  # left by an interrupted attempt: complete it now
        table.storage.create_new(timeline.instant_path(inflight), b"")
    try:
        table.storage.create_new(timeline.instant_path(inflight.with_state(State.COMPLETED)), record.encode())
    except FileAlreadyExistsError:
        raise TimelineError(f"commit {instant} of {table.base_path} is already savepointed") from None
    return record


def delete_savepoint(table: HoodieTable, instant: str) -> None:
    """Remove the savepoint of ``instant``. The completed file goes first: it is what makes
    the savepoint count, so a crash in between leaves only a harmless inflight file. Its
    files become cleanable again; the next clean lists every partition to find them."""
    table.require_writable("delete a savepoint of")
    timeline = table.timeline.reload()
    restores = timeline.pending([Action.RESTORE])
    if restores:
        # the restore goes to a savepoint, and only to one that exists
        raise TimelineError(f"cannot delete savepoint {instant} of {table.base_path} while restore {restores[0].timestamp} is pending: finish it first")
    completed = Instant(instant, Action.SAVEPOINT, State.COMPLETED)
    inflight = completed.with_state(State.INFLIGHT)
    existed = timeline.storage.delete(timeline.instant_path(completed))
    existed = timeline.storage.delete(timeline.instant_path(inflight)) or existed
    if not existed:
        raise InstantNotFoundError(f"no savepoint at {instant} in {table.base_path}")
