"""The archived timeline, read: which instants archival moved off the active timeline
and what the commits among them wrote.

A layout-1 archive (``.hoodie/archived``, table version 6) is a series of Hudi log files
``.commits_.archive.<N>_<token>`` whose ``AVRO_DATA`` blocks hold one
``HoodieArchivedMetaEntry`` record per timeline file of an archived instant
(:mod:`hoodie.services.archive_entry` writes them; Java's archiver writes the same).
Completed commits, delta commits and replace commits carry their commit metadata in
Avro form, so the files they wrote can still be checked after archival
(:func:`archived_commits`, used by ``hoodie validate``). A layout-2 (LSM) history is not
read here. Read-only: archival (:mod:`hoodie.services.archival`) writes the archive.
"""
from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from hoodie.formats.log import AvroDataBlock, read_log_file
from hoodie.layout import InstantTime, parse_log_file_name
from hoodie.table.table import HoodieTable
from hoodie.timeline.commit_metadata import CommitMetadata
from hoodie.timeline.instant import STATE_ORDER, Action, Instant, State, completed_action

ARCHIVE_FILE_ID = "commits"  # ".commits_.archive.<N>_<token>", as HoodieArchivedTimeline names them
ARCHIVE_EXTENSION = "archive"
_ENTRY_FIELDS = ("commitTime", "actionType", "actionState")
# where an archived entry keeps the metadata of a completed write, by its action
_METADATA_FIELD = {
    Action.COMMIT: "hoodieCommitMetadata",
    Action.DELTA_COMMIT: "hoodieCommitMetadata",
    Action.REPLACE_COMMIT: "hoodieReplaceCommitMetadata",
}


def archive_files(table: HoodieTable) -> list[tuple[int, str]]:
    """(version, path) of every archive log file, oldest first."""
    out = []
    for info in table.storage.list_dir(table.archive_path):
        lf = parse_log_file_name(info.name)
        if lf is not None and lf.file_id == ARCHIVE_FILE_ID and lf.extension == ARCHIVE_EXTENSION and not info.is_dir:
            out.append((lf.version, info.path))
    return sorted(out)


def _records(table: HoodieTable, path: str, columns: tuple[str, ...]) -> Iterator[dict[str, Any]]:
    for block in read_log_file(table.storage, path):
        if isinstance(block, AvroDataBlock):
            present = [c for c in columns if c in block.records.column_names]
            yield from block.records.select(present).to_pylist(maps_as_pydicts="strict")


def archived_entries(table: HoodieTable, path: str) -> list[tuple[str, str, str]]:
    """(commitTime, actionType, actionState) of every record of one archive file."""
    return [(r["commitTime"], r["actionType"], r["actionState"] or State.COMPLETED.value) for r in _records(table, path, _ENTRY_FIELDS)]


def read_archived_instants(table: HoodieTable) -> list[Instant]:
    """Instants of the archived timeline, each in the latest state it was archived in
    (a compaction as the commit it completed as), oldest first."""
    by_key: dict[tuple[str, str], Instant] = {}
    for _, path in archive_files(table):
        for ts, action, state in archived_entries(table, path):
            inst = Instant(ts, completed_action(action) if state == State.COMPLETED.value else action, State(state))
            key = (ts, completed_action(action))
            prev = by_key.get(key)
            if prev is None or STATE_ORDER[inst.state] > STATE_ORDER[prev.state]:
                by_key[key] = inst
    return sorted(by_key.values(), key=Instant.sort_key)


def archived_commits(table: HoodieTable, as_of: str | None = None) -> list[tuple[Instant, CommitMetadata]]:
    """The completed writes (commits, delta commits, replace commits) of the archived
    timeline at or before ``as_of``, oldest first, each with its commit metadata, checked
    as the active timeline's is (a path outside the table is an
    :class:`~hoodie.errors.UnsafePathError` naming the instant). Instants still on the
    active timeline (an archival interrupted before it deleted them) and instants a
    rollback undid are left out."""
    timeline = table.timeline
    active = {i.timestamp for i in timeline.instants}
    undone: frozenset[str] | None = None
    found: dict[str, tuple[Instant, CommitMetadata]] = {}
    for _, path in archive_files(table):
        for r in _records(table, path, (*_ENTRY_FIELDS, *sorted(set(_METADATA_FIELD.values())))):
            ts, action = r["commitTime"], r["actionType"]
            meta_field = _METADATA_FIELD.get(action)
            if meta_field is None or (r["actionState"] or State.COMPLETED.value) != State.COMPLETED.value or r.get(meta_field) is None:
                continue
            if ts in active or (as_of is not None and InstantTime(ts) > InstantTime(as_of)):
                continue
            if undone is None:
                undone = timeline.rolled_back()
            if ts in undone:
                continue
            found[ts] = (Instant(ts, action, State.COMPLETED), CommitMetadata.from_dict(r[meta_field], f"archived commit metadata of instant {ts}"))
    return [found[ts] for ts in sorted(found, key=InstantTime)]
