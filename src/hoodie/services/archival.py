"""Archival: move the oldest instants off the active timeline into the archived timeline.

When more than ``max_commits`` completed commits (commit, delta commit, replace commit)
are active, the oldest are archived down to ``min_commits``, but never

* at or past the earliest savepoint (restore needs its history),
* at or past the oldest pending instant of any action (no hole before unfinished work),
* ahead of the cleaner: only instants older than the ``earliestCommitToRetain`` of the
  last clean (its incremental planning reads their metadata, and a replace commit must
  stay until its replaced file groups are cleaned; with no clean yet, archival stops at
  the oldest replace commit),
* past the latest compaction of the table's metadata table (nothing while it has not
  compacted): its base files hold what every instant up to it did,

and always leaving ``min_commits`` (≥ 1) completed commits. Completed cleans and
rollbacks older than the first commit kept go along, except the last clean (the next
clean reads it). Restore instants are never archived (Hudi's archive format has no place
for them).

Every timeline file of those instants becomes a ``HoodieArchivedMetaEntry`` record
(:mod:`.archive_entry`) in a new archive log file ``.hoodie/archived/.commits_.archive.<N>_1-0-1``
(Hudi's log format: AVRO_DATA blocks of ``batch_size`` records, header SCHEMA only, as
Java's archiver writes them; a new version per run, since hoodie never appends). The
file is written whole first; only then are the instant files deleted, requested and
inflight files of all instants before any completed one, completed ones oldest first, so
no reader ever sees an archived commit as pending or a hole in the timeline. A run
interrupted after writing the archive file is finished by the next run, which finds its
records already archived and only deletes.
"""
from __future__ import annotations

import struct
from collections.abc import Sequence
from dataclasses import dataclass

from hoodie.errors import ConfigError
from hoodie.formats.avro_schema import avro_schema_json
from hoodie.formats.log import BlockType, HeaderKey, frame_block
from hoodie.layout import InstantTime
from hoodie.metadata_table.stats import open_metadata_table
from hoodie.services.archive_entry import ARCHIVED_META_ENTRY, encode_records, entry_for
from hoodie.services.clean_plan import SAVEPOINTED_TIMESTAMPS, last_clean_metadata
from hoodie.services.decision import ServiceDecision
from hoodie.services.savepoint import earliest_savepoint
from hoodie.services.timeline_files import TimelineFile, files_of, timeline_files
from hoodie.storage.paths import under
from hoodie.table.archived import ARCHIVE_EXTENSION, ARCHIVE_FILE_ID, archive_files, archived_entries, read_archived_instants
from hoodie.table.table import HoodieTable
from hoodie.timeline.instant import Action, Instant

__all__ = [
    "ArchivePlan",
    "ArchiveResult",
    "ArchiveSettings",
    "archive",
    "archive_files",
    "plan_archive",
    "read_archived_instants",  # the archived timeline is read by hoodie.table.archived
]

ARCHIVE_WRITE_TOKEN = "1-0-1"
AVRO_BLOCK_VERSION = 3


@dataclass(frozen=True)
class ArchiveSettings:
    """``hoodie.keep.min.commits``, ``hoodie.keep.max.commits``, ``hoodie.commits.archival.batch``."""

    min_commits: int = 20
    max_commits: int = 30
    batch_size: int = 10

    def __post_init__(self) -> None:
        if self.min_commits < 1:
            raise ConfigError(f"hoodie.keep.min.commits must be at least 1, got {self.min_commits}")
        if self.max_commits <= self.min_commits:
            raise ConfigError(f"hoodie.keep.max.commits ({self.max_commits}) must be greater than hoodie.keep.min.commits ({self.min_commits})")
        if self.batch_size < 1:
            raise ConfigError(f"hoodie.commits.archival.batch must be at least 1, got {self.batch_size}")


@dataclass(frozen=True)
class ArchivePlan:
    """Instants to archive, oldest first, and what bounded the choice."""

    instants: tuple[Instant, ...]
    reason: str

    @property
    def should_run(self) -> bool:
        return bool(self.instants)


@dataclass(frozen=True)
class ArchiveResult:
    """A completed archival: the instants moved and the archive file written (None when an
    interrupted run had already written them)."""

    archived: tuple[Instant, ...]
    archive_file: str | None
    records: int
    reason: str

    @property
    def ran(self) -> bool:
        return True


DEFAULT_ARCHIVE_SETTINGS = ArchiveSettings()


# --- planning ----------------------------------------------------------------------------------


def _cleaner_limits(table: HoodieTable) -> list[tuple[str, str]]:
    """(first instant archival must keep, why) as far as the cleaner is concerned."""
    timeline = table.timeline
    last = last_clean_metadata(timeline)
    writes = timeline.completed_writes()
    replaces = timeline.completed([Action.REPLACE_COMMIT])
    limits: list[tuple[str, str]] = []
    if last is None:
        if replaces:
            limits.append((replaces[0].timestamp, f"replace commit {replaces[0].timestamp} must stay until a clean deletes the file groups it replaced"))
        return limits
    clean, meta = last
    retained = meta.earliest_commit_to_retain
    if retained:
        limits.append((retained, f"the last clean ({clean.timestamp}) retains {retained} and later"))
    else:
        seen = meta.last_completed_commit
        later = [w for w in writes if w.time > InstantTime(seen)] if seen else writes
        if later:
            limits.append((later[0].timestamp, f"the last clean ({clean.timestamp}) saw commits up to {seen or 'none'}"))
    pinned_then = {t for t in (meta.extra.get(SAVEPOINTED_TIMESTAMPS) or "").split(",") if t}
    if replaces and pinned_then - {i.timestamp for i in timeline.completed([Action.SAVEPOINT])}:
        # a savepoint deleted since that clean kept replaced file groups the cleaner has not
        # removed yet: their replace commits must stay until the next clean does
        limits.append(
            (
                replaces[0].timestamp,
                f"a savepoint was deleted since the last clean ({clean.timestamp}); replace commit {replaces[0].timestamp} waits for the next clean",
            )
        )
    return limits


def _metadata_table_limits(table: HoodieTable, first: Instant) -> list[tuple[str, str]]:
    """(first instant archival must keep, why) as far as the table's metadata table is
    concerned: nothing after its latest compaction (whose base files hold every instant
    up to it), nothing at all before its first, as Apache Hudi's archiver."""
    if not table.config.metadata_partitions:
        return []
    compactions = open_metadata_table(table).timeline.completed([Action.COMMIT])
    if not compactions:
        return [(first.timestamp, "the metadata table has not compacted yet")]
    latest = compactions[-1].timestamp
    return [(latest, f"the metadata table's latest compaction is {latest}")]


def plan_archive(table: HoodieTable, settings: ArchiveSettings = DEFAULT_ARCHIVE_SETTINGS, keep: Sequence[tuple[str, str]] = ()) -> ArchivePlan:
    """Which instants archival would move now, and why not more; writes nothing. ``keep``:
    more (instant, why) pairs archival stops before (the metadata table's, from its data
    table)."""
    timeline = table.timeline
    writes = timeline.completed_writes()
    if len(writes) <= settings.max_commits:
        return ArchivePlan((), f"{len(writes)} completed commits on the active timeline; archival starts above {settings.max_commits}")
    limits: list[tuple[str, str]] = []
    savepoint = earliest_savepoint(table)
    if savepoint is not None:
        limits.append((savepoint, f"savepoint {savepoint}"))
    pending = timeline.pending()
    if pending:
        limits.append((pending[0].timestamp, f"pending {pending[0].action} {pending[0].timestamp}"))
    limits += _cleaner_limits(table)
    limits += _metadata_table_limits(table, writes[0])
    limits += keep
    candidates = writes[: len(writes) - settings.min_commits]
    chosen: list[Instant] = []
    stopped_by = ""
    for w in candidates:
        blocking = [why for ts, why in limits if w.time >= InstantTime(ts)]
        if blocking:
            stopped_by = blocking[0]
            break
        chosen.append(w)
    if not chosen:
        return ArchivePlan((), f"{len(writes)} completed commits, but the oldest, {writes[0].timestamp}, must stay: {stopped_by}")
    keep_from = writes[len(chosen)].timestamp
    cleans = timeline.completed([Action.CLEAN])
    last_clean = cleans[-1].timestamp if cleans else None
    others = [
        i for i in timeline.completed([Action.CLEAN, Action.ROLLBACK])
        if i.time < InstantTime(keep_from) and i.timestamp != last_clean
    ]
    instants = tuple(sorted(chosen + others, key=Instant.sort_key))
    reason = f"{len(chosen)} of {len(writes)} completed commits (keeping {settings.min_commits})"
    if stopped_by:
        reason += f", stopped before {keep_from}: {stopped_by}"
    if others:
        reason += f", with {len(others)} older clean/rollback instants"
    return ArchivePlan(instants, reason)


# --- the archive file (read by hoodie.table.archived) ------------------------------------------


def _archive_bytes(records: list[bytes], batch_size: int) -> bytes:
    """AVRO_DATA blocks: int32 block version, int32 count, then length-prefixed records."""
    header = {HeaderKey.SCHEMA: avro_schema_json(ARCHIVED_META_ENTRY)}
    blocks = []
    for start in range(0, len(records), batch_size):
        batch = records[start : start + batch_size]
        content = struct.pack(">ii", AVRO_BLOCK_VERSION, len(batch)) + b"".join(struct.pack(">i", len(r)) + r for r in batch)
        blocks.append(frame_block(BlockType.AVRO_DATA, header, content))
    return b"".join(blocks)


# --- execution ---------------------------------------------------------------------------------


def archive(
    table: HoodieTable, settings: ArchiveSettings = DEFAULT_ARCHIVE_SETTINGS, keep: Sequence[tuple[str, str]] = ()
) -> ArchiveResult | ServiceDecision:
    """Archive what :func:`plan_archive` picks; returns what moved, or why nothing did."""
    table.require_writable("archive")
    table = table.reload()
    plan = plan_archive(table, settings, keep)
    if not plan.should_run:
        return ServiceDecision("archive", plan.reason)
    files = timeline_files(table)
    to_move: list[TimelineFile] = [f for inst in plan.instants for f in files_of(files, inst.timestamp, inst.action)]
    existing = archive_files(table)
    # an interrupted run may have written these records already (always to the newest file)
    done = set(archived_entries(table, existing[-1][1])) if existing else set()
    fresh = [f for f in to_move if (f.instant.timestamp, f.instant.action, f.instant.state.value) not in done]
    path = None
    if fresh:
        version = (existing[-1][0] if existing else 0) + 1
        name = f".{ARCHIVE_FILE_ID}_.{ARCHIVE_EXTENSION}.{version}_{ARCHIVE_WRITE_TOKEN}"
        path = under(table.archive_path, name)
        records = encode_records([entry_for(table.storage, f) for f in fresh])
        table.storage.create_new(path, _archive_bytes(records, settings.batch_size))
    # pending states of every instant first, then completed ones oldest first
    ordered = sorted(to_move, key=lambda f: (f.instant.is_completed, f.instant.sort_key()))
    for f in ordered:
        table.storage.delete(f.path)
    return ArchiveResult(plan.instants, path, len(fresh), plan.reason)
