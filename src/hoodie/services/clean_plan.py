"""Clean planning: which old file slices a cleaning policy may delete, without deleting any.

:func:`plan_clean` is pure (reads only). It follows Hudi's ``CleanPlanner``:

* **the earliest commit to retain** (``KEEP_LATEST_COMMITS``: the N-th latest completed
  commit, never past the oldest pending write; ``KEEP_LATEST_BY_HOURS``: the first commit
  of the last H hours). A slice is kept if it was the latest as of some retained commit:
  every slice whose base instant is at or after that commit, plus the latest one before it.
  ``KEEP_LATEST_FILE_VERSIONS`` keeps the N newest slices of every file group instead.
* **never deleted**: the latest slice of a file group, a slice holding a file some
  savepoint lists, a slice a pending (log) compaction reads or opens. File groups replaced
  by a completed replace commit older than the retention boundary go whole: every file
  storage holds of them, also those no committed slice names — change-log (``.cdc``)
  files, files a failed or rolled-back write left — but for those of a slice a savepoint
  pins and those an instant still pending wrote (named after it, or a log whose first
  block it wrote: its writer, or its rollback, may need them).
* **incremental** (RFC-03): the partitions to list come from the commit metadata of the
  commits written since the last clean's boundary (``KEEP_LATEST_FILE_VERSIONS``: since
  the last commit it saw), never from listing the table. Every partition is listed only
  for the first clean, when incremental mode is off, when the last clean's boundary left
  the active timeline, when a savepoint was deleted since (its files were skipped by every
  earlier clean, wherever they are), or when the policy changed or now keeps fewer file
  versions (partitions not written since may exceed the new limit).

The plan is what ``<t>.clean.requested`` stores (Avro ``HoodieCleanerPlan``, version 2).
"""
from __future__ import annotations

import enum
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone

from hoodie.errors import ConfigError, FormatError
from hoodie.formats.log.reader import first_block_instant
from hoodie.layout import InstantTime, LogFileName, format_instant, is_ascii_digits, parse_base_file_name, parse_log_file_name
from hoodie.services.savepoint import SavepointInfo, list_savepoints
from hoodie.table.file_group import FileSlice
from hoodie.table.fs_view import FileSystemView, TableView
from hoodie.table.table import HoodieTable
from hoodie.timeline.action_metadata import CleanerPlan, CleanMetadata
from hoodie.timeline.active import ActiveTimeline
from hoodie.timeline.compaction_plan import pending_compaction_bases
from hoodie.timeline.instant import Action, Instant
from hoodie.timeline.instant_time import InstantRange

SAVEPOINTED_TIMESTAMPS = "savepointed_timestamps"  # extra metadata key, as Java's CleanPlanner
# hoodie's own extra metadata key: the versions a KEEP_LATEST_FILE_VERSIONS clean kept, so
# that the next one knows whether partitions it does not list are within the limit
FILE_VERSIONS_RETAINED = "hoodie.cleaner.fileversions.retained"
_COMPACTIONS = (Action.COMPACTION, Action.LOG_COMPACTION)


class CleanPolicy(str, enum.Enum):
    """``hoodie.cleaner.policy``."""

    KEEP_LATEST_COMMITS = "KEEP_LATEST_COMMITS"
    KEEP_LATEST_FILE_VERSIONS = "KEEP_LATEST_FILE_VERSIONS"
    KEEP_LATEST_BY_HOURS = "KEEP_LATEST_BY_HOURS"


@dataclass(frozen=True)
class CleanSettings:
    """Typed cleaner settings; each field maps to one Hudi option (see the report/README)."""

    policy: CleanPolicy = CleanPolicy.KEEP_LATEST_COMMITS  # hoodie.cleaner.policy
    commits_retained: int = 10  # hoodie.cleaner.commits.retained
    file_versions_retained: int = 3  # hoodie.cleaner.fileversions.retained
    hours_retained: int = 24  # hoodie.cleaner.hours.retained
    incremental: bool = True  # hoodie.cleaner.incremental.mode

    def __post_init__(self) -> None:
        object.__setattr__(self, "policy", CleanPolicy(str(getattr(self.policy, "value", self.policy)).upper()))
        for name, key in (("commits_retained", "hoodie.cleaner.commits.retained"), ("file_versions_retained", "hoodie.cleaner.fileversions.retained")):
            if getattr(self, name) < 1:
                raise ConfigError(f"{key} must be at least 1, got {getattr(self, name)}")
        if self.hours_retained < 0:
            raise ConfigError(f"hoodie.cleaner.hours.retained must not be negative, got {self.hours_retained}")


@dataclass(frozen=True)
class CleanPlan:
    """Files a clean would delete (partition → absolute paths) and why.

    ``partition_selection`` says how the partitions were chosen (incremental or full
    listing, and why); ``reason`` sums up the decision.
    """

    policy: CleanPolicy
    earliest_instant_to_retain: Instant | None
    last_completed_commit: str
    files_to_delete: dict[str, tuple[str, ...]]
    partitions_scanned: tuple[str, ...] = ()
    partition_selection: str = ""
    reason: str = ""
    extra_metadata: dict[str, str] = field(default_factory=dict)

    @property
    def should_run(self) -> bool:
        return any(self.files_to_delete.values())

    @property
    def file_count(self) -> int:
        return sum(len(v) for v in self.files_to_delete.values())

    def saved(self) -> CleanerPlan:
        """The plan as ``<t>.clean.requested`` stores it."""
        return CleanerPlan(self.policy.value, self.earliest_instant_to_retain, self.last_completed_commit, self.files_to_delete, self.extra_metadata)

    def encode(self) -> bytes:
        return self.saved().encode()

    @classmethod
    def of_saved(cls, saved: CleanerPlan, instant: str) -> CleanPlan:
        """The plan clean ``instant`` saved."""
        try:
            policy = CleanPolicy(saved.policy or CleanPolicy.KEEP_LATEST_COMMITS.value)
        except ValueError:
            raise FormatError(f"the plan of clean {instant} names the policy {saved.policy!r}, which is no cleaner policy") from None
        files = saved.files_to_delete
        return cls(
            policy, saved.earliest_instant_to_retain, saved.last_completed_commit, files, tuple(sorted(files)),
            "saved plan", f"plan of clean {instant}", dict(saved.extra_metadata),
        )


# --- the boundary ------------------------------------------------------------------------------


def earliest_instant_to_retain(timeline: ActiveTimeline, settings: CleanSettings, now: datetime | None = None) -> Instant | None:
    """The oldest commit whose view the cleaner must keep readable (None: keep everything
    for the commit-based policies; not used by ``KEEP_LATEST_FILE_VERSIONS``)."""
    completed = timeline.completed_writes()
    if settings.policy is CleanPolicy.KEEP_LATEST_COMMITS:
        if len(completed) <= settings.commits_retained:
            return None
        nth = completed[len(completed) - settings.commits_retained]
        pending = [i for i in timeline.instants if not i.is_completed and (i.action in Action.WRITE_ACTIONS or i.action in _COMPACTIONS)]
        if pending and nth.time > pending[0].time:
            # a pending write may still read older slices: never retain less than it needs
            before = [i for i in completed if i.time < pending[0].time]
            return before[-1] if before else None
        return nth
    if settings.policy is CleanPolicy.KEEP_LATEST_BY_HOURS:
        cutoff = format_instant((now or datetime.now(timezone.utc)) - timedelta(hours=settings.hours_retained))
        return next((i for i in completed if i.time >= InstantTime(cutoff)), None)
    return None


# --- which partitions ------------------------------------------------------------------------


def last_clean_metadata(timeline: ActiveTimeline) -> tuple[Instant, CleanMetadata] | None:
    """The newest completed clean and its ``HoodieCleanMetadata``."""
    cleans = timeline.completed([Action.CLEAN])
    if not cleans:
        return None
    return cleans[-1], timeline.clean_metadata(cleans[-1])


def partitions_written(table: HoodieTable, instant: Instant) -> set[str]:
    """Partitions a completed commit wrote or replaced, from its metadata (no listing)."""
    meta = table.commit_metadata(instant)
    return set(meta.partition_to_write_stats) | set(meta.replaced_file_ids())


def _incremental_partitions(table: HoodieTable, settings: CleanSettings, earliest: Instant | None, savepoints: Iterable[str]) -> tuple[list[str], str] | str:
    """(partitions, how) when incremental planning applies, else why it does not."""
    if not settings.incremental:
        return "incremental cleaning is off"
    timeline = table.timeline
    last = last_clean_metadata(timeline)
    if last is None:
        return "first clean of the table"
    last_instant, meta = last
    before = {t for t in (meta.extra.get(SAVEPOINTED_TIMESTAMPS) or "").split(",") if t}
    removed = sorted(before - set(savepoints))
    if removed:
        return f"savepoint {', '.join(removed)} was deleted since the clean at {last_instant.timestamp}"
    policies = {pm.policy for pm in meta.partition_metadata.values()} - {""}
    if policies and policies != {settings.policy.value}:
        return f"the clean at {last_instant.timestamp} used {', '.join(sorted(policies))}"
    if settings.policy is CleanPolicy.KEEP_LATEST_FILE_VERSIONS:
        kept = meta.extra.get(FILE_VERSIONS_RETAINED)
        if kept is None or not is_ascii_digits(kept) or int(kept) > settings.file_versions_retained:
            # partitions not written since may hold more versions than now allowed
            return f"the clean at {last_instant.timestamp} kept {kept or 'an unknown number of'} file versions, now {settings.file_versions_retained}"
    writes = timeline.completed_writes()
    pending = [i for i in timeline.instants if not i.is_completed and (i.action in Action.WRITE_ACTIONS or i.action in _COMPACTIONS)]
    starts = [i.timestamp for i in writes[:1] + pending[:1]]
    start = min(starts, key=InstantTime) if starts else None
    if settings.policy is CleanPolicy.KEEP_LATEST_FILE_VERSIONS:
        since = meta.last_completed_commit
        window = [w for w in writes if w.timestamp in InstantRange(after=since)] if since else []
        what = f"commits after {since}, the last one the clean at {last_instant.timestamp} saw"
    else:
        since = meta.earliest_commit_to_retain
        upto = earliest.timestamp if earliest else ""
        window = [w for w in writes if w.timestamp in InstantRange(from_=since, before=upto)] if since and upto else []
        what = f"commits in [{since}, {upto}) (from the last clean's boundary to this one's)"
    if not since:
        return f"the clean at {last_instant.timestamp} recorded no boundary"
    if start is None or InstantTime(since) < InstantTime(start):
        return f"the last clean's boundary {since} is no longer on the active timeline"
    partitions = sorted({p for w in window for p in partitions_written(table, w)})
    return partitions, f"incremental: {len(partitions)} partitions written by {len(window)} {what}"


# --- per partition -----------------------------------------------------------------------------


def _replaced_groups(table: HoodieTable, before: str | None) -> dict[str, set[str]]:
    """partition → file ids replaced by completed replace commits (older than ``before``)."""
    older = [i for i in table.timeline.completed([Action.REPLACE_COMMIT]) if before is None or i.time < InstantTime(before)]
    return table.timeline.replaced_file_groups(older)


@dataclass(frozen=True)
class _Guards:
    """What must never be deleted, whatever the policy."""

    savepointed: frozenset[str]
    compaction_bases: dict[tuple[str, str], str]

    def pinned(self, s: FileSlice) -> bool:
        """A savepoint lists one of the slice's files."""
        if s.base_file is not None and s.base_file.file_name in self.savepointed:
            return True
        return any(lf.file_name in self.savepointed for lf in s.log_files)

    def compacting(self, s: FileSlice) -> bool:
        """A pending compaction reads this slice (or it is newer than the one it reads)."""
        base = self.compaction_bases.get((s.partition_path, s.file_id))
        return base is not None and InstantTime(s.base_instant) >= InstantTime(base)

    def keeps(self, s: FileSlice) -> bool:
        return self.pinned(s) or self.compacting(s)


def _slice_paths(s: FileSlice) -> list[str]:
    return ([s.base_file.path] if s.base_file is not None else []) + [lf.path for lf in s.log_files]


def _by_commits(view: TableView, partition: str, earliest: str, guards: _Guards) -> list[str]:
    out: list[str] = []
    for g in view.file_groups(partition):
        latest = g.slices[-1]
        older = [s for s in g.slices if InstantTime(s.base_instant) < InstantTime(earliest)]
        # the latest slice before the boundary is what the oldest retained commit reads
        last_before = older[-1] if older else None
        for s in older:
            if s is latest or s is last_before or guards.keeps(s):
                continue
            out.extend(_slice_paths(s))
    return out


def _by_versions(view: TableView, partition: str, versions: int, guards: _Guards) -> list[str]:
    out: list[str] = []
    for g in view.file_groups(partition):
        keep = versions
        if (partition, g.file_id) in guards.compaction_bases:
            keep -= 1  # the slice under compaction already counts as one version
        newest_first = [s for s in reversed(g.slices) if not guards.compacting(s)]
        for s in newest_first[max(keep, 0):]:
            if s is g.slices[-1] or guards.pinned(s):
                continue
            out.extend(_slice_paths(s))
    return out


def _replaced_files(view: TableView, stored: FileSystemView, partition: str, file_ids: set[str], guards: _Guards) -> list[str]:
    """Every file of the replaced file groups ``file_ids`` that ``stored`` (a view listing
    storage) finds, but for those of slices a savepoint pins and those a pending instant
    wrote (named after it, or a log whose first block it wrote). Besides the committed
    slices (``view``), a replaced group may hold files no committed slice names, which no
    later clean would otherwise ever reach:
    Apache Hudi's change-log (``.cdc``) files, files a failed write left that its rollback
    did not delete, a duplicate task attempt's copy of a base file."""
    groups = [g for g in view.replaced_file_groups(partition) if g.file_id in file_ids] if file_ids else []
    if not groups:
        return []  # (storage is listed by the clean that deletes the groups' slices, once)
    pinned = {(g.file_id, s.base_instant) for g in groups for s in g.slices if guards.pinned(s)}
    pending = {i.timestamp for i in stored.timeline.instants if not i.is_completed}
    out: list[str] = []
    for info in stored.partition_files(partition):
        name = parse_base_file_name(info.name) or parse_log_file_name(info.name)
        # (a log names the base instant of its slice: a slice a savepoint pins keeps its logs)
        if name is None or name.file_id not in file_ids or (name.file_id, name.instant) in pinned or name.instant in pending:
            continue
        # (a log's header is read only when some instant is pending: none to find otherwise)
        if pending and isinstance(name, LogFileName) and first_block_instant(stored.storage, info.path) in pending:
            continue  # a pending write appends it (a view's slice holds it too: its reader skips the blocks)
        out.append(info.path)
    return out


# --- the plan ----------------------------------------------------------------------------------


DEFAULT_CLEAN_SETTINGS = CleanSettings()


def plan_clean(table: HoodieTable, settings: CleanSettings = DEFAULT_CLEAN_SETTINGS, now: datetime | None = None) -> CleanPlan:
    """What a clean would delete now, and why; reads the timeline and the partitions it
    needs, writes nothing."""
    timeline = table.timeline
    completed = timeline.completed_writes()
    last_completed = completed[-1].timestamp if completed else ""
    savepoints = list_savepoints(table)
    extra = {SAVEPOINTED_TIMESTAMPS: ",".join(sp.instant for sp in savepoints)} if savepoints else {}
    if settings.policy is CleanPolicy.KEEP_LATEST_FILE_VERSIONS:
        extra[FILE_VERSIONS_RETAINED] = str(settings.file_versions_retained)
    earliest = earliest_instant_to_retain(timeline, settings, now)
    policy = settings.policy

    def plan(files: dict[str, tuple[str, ...]], scanned: tuple[str, ...], how: str, reason: str) -> CleanPlan:
        return CleanPlan(policy, earliest, last_completed, files, scanned, how, reason, extra)

    if policy is CleanPolicy.KEEP_LATEST_COMMITS and earliest is None:
        return plan({}, (), "", f"{len(completed)} completed commits and {settings.commits_retained} retained: no commit is old enough to clean")
    if policy is CleanPolicy.KEEP_LATEST_BY_HOURS and earliest is None:
        return plan({}, (), "", f"no completed commit in the last {settings.hours_retained} hours to retain from")

    # one view for the whole plan: it lists each partition once, for the live file groups
    # and the replaced ones alike (a timeline server's view lists nothing here)
    view = table.view()
    chosen = _incremental_partitions(table, settings, earliest, [sp.instant for sp in savepoints])
    if isinstance(chosen, str):
        partitions, how = view.all_partition_paths(), f"all partitions ({chosen})"
    else:
        partitions, how = chosen
    if not partitions:
        return plan({}, (), how, f"no partition to clean ({how})")

    files = _doomed_files(table, settings, view, partitions, savepoints, earliest)
    count = sum(len(v) for v in files.values())
    if count:
        reason = f"{count} files of older slices in {len(files)} of {len(partitions)} partitions scanned"
    else:
        reason = f"nothing to delete in the {len(partitions)} partitions scanned"
    if earliest is not None:
        reason += f"; retaining the view of {earliest.timestamp} and later"
    return plan(files, tuple(partitions), how, reason)


def _doomed_files(
    table: HoodieTable,
    settings: CleanSettings,
    view: TableView,
    partitions: Iterable[str],
    savepoints: list[SavepointInfo],
    earliest: Instant | None,
) -> dict[str, tuple[str, ...]]:
    """partition → the files the policy may delete there (absolute paths)."""
    guards = _Guards(frozenset(name for sp in savepoints for name in sp.file_names()), pending_compaction_bases(table.timeline))
    boundary = earliest.timestamp if earliest is not None else None
    replaced = _replaced_groups(table, boundary)
    # storage itself, for the files of replaced groups that no committed slice names (which
    # the metadata table and a timeline server's view never hold): only the partitions whose
    # replaced groups this clean deletes are listed
    stored = table.storage_view()
    partitions = list(partitions)
    # listed side by side, or in one lookup of the metadata table, not one after another
    # (a first clean scans every partition of the table)
    view.prefetch_latest(partitions)
    files: dict[str, tuple[str, ...]] = {}
    compacted: dict[str, dict[str, str]] = defaultdict(dict)  # partition → file id → the slice a pending compaction reads
    for (partition, file_id), base in guards.compaction_bases.items():
        compacted[partition][file_id] = base
    for p in partitions:
        if not replaced.get(p) and isinstance(view, FileSystemView) and not view.may_hold_older_slices(p, compacted.get(p)):
            # no file group has a slice but its latest and the one a pending compaction
            # reads (every write scans each partition until the table's first clean
            # deletes something, and any it touched while a compaction is pending): its
            # file groups are not built (nor checked against the commits: a committed file
            # gone from there is found by the next write or read, not by this clean)
            continue
        if settings.policy is CleanPolicy.KEEP_LATEST_FILE_VERSIONS:
            doomed = _by_versions(view, p, settings.file_versions_retained, guards)
        else:
            doomed = _by_commits(view, p, boundary or "", guards)
        doomed += _replaced_files(view, stored, p, replaced.get(p, set()), guards)
        if doomed:
            files[p] = tuple(sorted(set(doomed)))
    return files


def allowed_deletions(table: HoodieTable, partitions: Iterable[str], rules: Iterable[tuple[CleanSettings, Instant | None]]) -> dict[str, frozenset[str]]:
    """partition → the files in ``partitions`` that every one of ``rules`` (settings, and
    the earliest commit they retain) lets a clean delete now: what a saved plan is checked
    against before it runs, so that no plan, whoever wrote it, deletes a file of a latest
    slice, of a savepointed slice, or of a slice still within retention."""
    view = table.view()
    savepoints = list_savepoints(table)
    partitions = sorted(set(partitions))
    out: dict[str, frozenset[str]] | None = None
    for settings, earliest in rules:
        if earliest is None and settings.policy is not CleanPolicy.KEEP_LATEST_FILE_VERSIONS:
            return {}  # the policy retains everything
        files = _doomed_files(table, settings, view, partitions, savepoints, earliest)
        allowed = {p: frozenset(paths) for p, paths in files.items()}
        out = allowed if out is None else {p: out[p] & allowed[p] for p in out.keys() & allowed.keys()}
    return out or {}
