"""Undoing a delta commit of the metadata table: what a crash left pending, a delta commit
written again at the same instant, or the delta commit of a data instant that a rollback
or a restore undid.

A delta commit writes new files only (a log file per touched file group, or the base
HFiles and empty logs of an initialisation), so undoing it deletes them. Order matters:
a completed instant loses its completed file first, so that from then on no reader counts
its blocks (the reader sees blocks of completed metadata instants only); then its files
go; then its inflight and requested files. A crash in between leaves a pending delta
commit, undone again the next time. The files come from what the instant names (hoodie's
inflight instant names every file it will write; a completed one its write stats); an
instant naming none (Apache Hudi's inflight holds a workload profile without paths) is
looked for in the raw listings of the metadata partitions: base files of its instant and
log files whose first block it wrote.

Apache Hudi also records a ``rollback`` instant (``<t>006``) in the metadata timeline when
it undoes a completed delta commit; hoodie removes the delta commit outright, which the
metadata table's readers (Java's and hoodie's) see alike: its blocks are gone.
"""
from __future__ import annotations

import logging

from hoodie.errors import FormatError, InstantNotFoundError
from hoodie.formats.log import first_block_instant
from hoodie.layout import InstantTime, parse_base_file_name, parse_log_file_name
from hoodie.storage.base import Storage
from hoodie.storage.paths import under
from hoodie.table.table import HoodieTable
from hoodie.timeline.commit_metadata import CommitMetadata
from hoodie.timeline.instant import Action, Instant, State

__all__ = ["undo_delta_commit", "undo_pending"]

log = logging.getLogger(__name__)


def undo_pending(mdt: HoodieTable, instant: str, storage: Storage) -> list[str]:
    """Before a delta commit at ``instant``: undo the metadata table's delta commit at that
    instant (whatever its state: the data action completes again after a crash) and every
    pending one at an older instant (a crash). Returns the instants undone."""
    at = InstantTime(instant)
    undone = []
    for inst in mdt.timeline.instants:
        if inst.action != Action.DELTA_COMMIT:
            continue
        if inst.timestamp == instant or (not inst.is_completed and inst.time < at):
            undo_delta_commit(mdt, inst, storage)
            undone.append(inst.timestamp)
    return undone


def undo_delta_commit(mdt: HoodieTable, inst: Instant, storage: Storage) -> None:
    """Remove the metadata table's delta commit ``inst`` and the files it wrote."""
    timeline = mdt.timeline
    files = _named_files(mdt, inst) or _found_files(mdt, inst.timestamp, storage)
    if inst.is_completed:
        storage.delete(timeline.instant_path(inst))
    for path in files:
        storage.delete(path)
    timeline.delete_instant_files(inst, (State.INFLIGHT, State.REQUESTED))
    log.info("metadata table %s: delta commit %s undone (%d files)", mdt.base_path, inst.timestamp, len(files))


def _named_files(mdt: HoodieTable, inst: Instant) -> set[str]:
    """The files the instant's inflight and completed metadata name."""
    out: set[str] = set()
    states = (State.INFLIGHT, State.COMPLETED) if inst.is_completed else (State.INFLIGHT,)
    for state in states:
        try:
            content = mdt.timeline.read_content(inst.with_state(state))
            metadata = CommitMetadata.decode(content, inst.timestamp, completed=False)
        except (InstantNotFoundError, FormatError):
            continue
        source = f"deltacommit {inst.timestamp} of metadata table {mdt.base_path}"
        out.update(under(mdt.base_path, s.path, source=source) for s in metadata.write_stats() if s.path)
    return out


def _found_files(mdt: HoodieTable, instant: str, storage: Storage) -> set[str]:
    """The files of ``instant`` in the raw listings of the metadata partitions."""
    view = mdt.storage_view()  # files no completed instant names: storage, whatever lists the table
    out = set()
    for partition in view.all_partition_paths():
        for f in view.partition_files(partition):
            base = parse_base_file_name(f.name)
            if base is not None and base.instant == instant or parse_log_file_name(f.name) is not None and first_block_instant(storage, f.path) == instant:
                out.add(f.path)
    return out
