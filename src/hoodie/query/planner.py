"""Query planning: which file slices a snapshot, time-travel or incremental query reads.

Planning looks only at the timeline and the file-system view; it never opens a data file
and never writes. Reading the planned slices is :mod:`hoodie.query.reader`'s job.

Time semantics follow hudi-rs (the project's reference reader; checked against it on the
conformance tables):

* **Snapshot / time travel** compare the as-of instant with the *requested* time of each
  completed instant (the instant time in file names), on every table version.
* **Incremental** ranges ``(begin, end]`` are instant times on layout-1 (v6) tables. On
  layout-2 (v8+) tables they are *completion* times: a commit belongs to the range when it
  completed inside it, and the file groups it touched are read as they stood at ``end``
  in completion order. Hudi 1.x defines incremental ranges on completion time too: a
  commit requested before ``begin`` but completed after it is not lost by a pull that
  starts at ``begin``.
"""
from __future__ import annotations

import dataclasses
import logging
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass

from hoodie.config.options import INCR_FALLBACK_FULL_SCAN
from hoodie.errors import DamagedTableError, InstantNotFoundError
from hoodie.layout import InstantTime
from hoodie.table.file_group import FileSlice
from hoodie.table.fs_view import FileSystemView, TableView
from hoodie.table.slice_reader.instants import CommitTimes
from hoodie.table.table import HoodieTable
from hoodie.timeline.active import ActiveTimeline
from hoodie.timeline.instant import Action, Instant, State
from hoodie.timeline.instant_time import InstantRange, parse_instant_time

log = logging.getLogger(__name__)

PartitionFilter = Callable[[str], bool]

# Time bases of an incremental range.
INSTANT_TIME = "instant"
COMPLETION_TIME = "completion"

FALLBACK_OPTION = INCR_FALLBACK_FULL_SCAN.key


def _slice_order(s: FileSlice) -> tuple[str, str]:
    return (s.partition_path, s.file_id)


def as_instant(value: str) -> str:
    """An instant time from ``value``: any string of ASCII digits as is ("0" means the
    beginning), or an ISO timestamp ``yyyy-MM-dd[ HH:mm[:ss[.SSS]]]`` (raises ValueError
    otherwise, for fullwidth or other non-ASCII digits too)."""
    return parse_instant_time(value)


# --- snapshot ---------------------------------------------------------------------------------


def plan_snapshot(
    table: HoodieTable,
    as_of: str | None = None,
    partition_filter: PartitionFilter | None = None,
    ignore_missing_files: bool = False,
) -> list[FileSlice]:
    """Latest file slice of every live file group, as of ``as_of`` (default: now).

    Only slices of instants completed at or before ``as_of`` count; file groups replaced by
    a completed replace commit are gone; ``partition_filter`` (called with each relative
    partition path, "" for a non-partitioned table) prunes partitions before they are
    listed. An ``as_of`` older than the first commit yields no slices. A file a completed
    instant wrote and the view needs, missing from storage, is a
    :class:`~hoodie.errors.DamagedTableError` unless ``ignore_missing_files`` (then its file
    group is left out with a warning).
    """
    view = table.view(as_instant(as_of) if as_of is not None else None, ignore_missing_files)
    partitions = view.all_partition_paths()
    if partition_filter is not None:
        partitions = [p for p in partitions if partition_filter(p)]
    slices = sorted(view.latest_slices_all(partitions), key=_slice_order)
    warn_missing(view)
    if not view.visible_instants:
        log.warning("%s: the read is empty", why_snapshot_is_empty(table, as_of))
    return slices


def _first_and_latest(table: HoodieTable) -> str:
    writes = table.timeline.completed_writes()
    return f"its first commit is {writes[0].timestamp}, its latest {writes[-1].timestamp}"


def why_snapshot_is_empty(table: HoodieTable, as_of: str | None) -> str:
    """Why a snapshot or time-travel view of ``table`` as of ``as_of`` holds no commit."""
    if not table.timeline.completed_writes():
        return f"{table.base_path} has no completed commit yet"
    return f"as.of.instant {as_of} is before the first commit of {table.base_path} ({_first_and_latest(table)})"


def why_incremental_is_empty(table: HoodieTable, begin: str, end: str) -> str:
    """Why an incremental pull over ``(begin, end]`` found no commit in its range."""
    writes = table.timeline.completed_writes()
    if not writes:
        return f"{table.base_path} has no completed commit yet: the incremental pull is empty"
    latest = max(writes, key=lambda i: _range_key(table.timeline, i))
    if InstantTime(begin) >= _range_key(table.timeline, latest):
        return (
            f"incremental pull from {begin} on {table.base_path}: it begins at or after the latest commit, so nothing was committed "
            f"after it ({_first_and_latest(table)}): the read is empty"
        )
    return f"no commit of {table.base_path} completed in ({begin}, {end}] ({_first_and_latest(table)}): the read is empty"


def warn_missing(view: TableView) -> None:
    """One warning per committed file a read goes around (``ignoreMissingFiles``)."""
    for m in view.missing:
        log.warning("%s; reading around it (ignoreMissingFiles)", m.message)


# --- incremental ------------------------------------------------------------------------------


@dataclass(frozen=True)
class IncrementalPlan:
    """What an incremental pull over ``(begin, end]`` reads.

    ``instants`` are the completed commits, delta commits and replace commits in the range
    (oldest first); ``slices`` the latest slice, as of ``end``, of every file group they
    touched. Rows are kept when :meth:`keeps_commit_time` says so: their
    ``_hoodie_commit_time`` is in ``(begin, end]`` (``time_basis == "instant"``), or is
    the instant time of one of ``instants`` (``"completion"``, layout-2 tables).
    ``filter_rows`` is False for tables without meta fields, whose rows carry no commit
    time: then every row of the touched file groups is returned (as hudi-rs does).
    """

    begin: str
    end: str
    time_basis: str
    instants: tuple[Instant, ...]
    slices: tuple[FileSlice, ...]
    filter_rows: bool = True

    @property
    def commit_times(self) -> frozenset[str]:
        return frozenset(i.timestamp for i in self.instants)

    @property
    def range(self) -> InstantRange:
        """``(begin, end]``."""
        return InstantRange(after=self.begin, upto=self.end)

    @property
    def is_empty(self) -> bool:
        return not self.slices

    def keeps_commit_time(self, commit_time: str) -> bool:
        if self.time_basis == INSTANT_TIME:
            return commit_time in self.range
        return commit_time in self.commit_times

    @property
    def rows_in_range(self) -> CommitTimes:
        """The rows :meth:`keeps_commit_time` keeps, as a filter of Arrow rows."""
        if self.time_basis == INSTANT_TIME:
            return CommitTimes(after=self.begin, upto=self.end)
        return CommitTimes(only=self.commit_times)


def _range_key(timeline: ActiveTimeline, instant: Instant) -> InstantTime:
    return InstantTime(timeline.completion_time(instant))


def has_archived_instants(table: HoodieTable) -> bool:
    """Whether any instant was moved off the active timeline into the archive."""
    # The LSM history keeps a `_version_` pointer even when it holds nothing; only instant
    # files (archive logs, manifests, parquet) mean something was archived.
    return any(not e.is_dir and e.name != "_version_" for e in table.storage.list_dir(table.archive_path))


def _check_not_archived(table: HoodieTable, begin: str) -> None:
    start = table.timeline.commits_start()
    if start is None or InstantTime(begin) >= InstantTime(start):
        return
    if has_archived_instants(table):
        raise InstantNotFoundError(
            f"incremental pull from {begin} on {table.base_path}: the active timeline starts at "
            f"{start} and older instants are archived, so the changes after {begin} "
            "can no longer be pulled incrementally; read a snapshot instead, pull from "
            f"{start} or later, or set {FALLBACK_OPTION}=true to read the latest snapshot's "
            "records committed in the range"
        )


def _cleaned_or_archived(table: HoodieTable) -> bool:
    """Whether files of completed commits may have been removed on purpose: the table has
    completed cleans on its active timeline, or archived instants."""
    return bool(table.timeline.completed([Action.CLEAN])) or has_archived_instants(table)


def _full_scan_plan(table: HoodieTable, begin: str, end: str, ignore_missing_files: bool) -> IncrementalPlan:
    """The fallback of ``hoodie.datasource.read.incr.fallback.fulltablescan.enable``, as
    Apache Hudi's: the latest slice of every file group, rows kept by commit time in
    ``(begin, end]`` (on instant times, whatever the layout: the range's commits may be
    archived). A record updated again after ``end`` is left to a pull of a later range;
    what the cleaner removed is not needed."""
    log.warning(
        "incremental pull of (%s, %s] on %s: the range's commits were archived or their files cleaned; "
        "reading the latest snapshot's records committed in the range (%s=true)", begin, end, table.base_path, FALLBACK_OPTION,
    )
    timeline = table.timeline
    in_range = tuple(i for i in timeline.completed_writes() if i.timestamp in InstantRange(after=begin, upto=end))
    slices = plan_snapshot(table, None, None, ignore_missing_files)
    return IncrementalPlan(begin, end, INSTANT_TIME, in_range, tuple(slices), table.config.populate_meta_fields)


def _timeline_as_completed_by(timeline: ActiveTimeline, end: str) -> ActiveTimeline:
    """The timeline as it stood at completion time ``end``: writes that completed later
    are shown inflight, so the view hides their files (but still knows them as pending)."""
    instants = tuple(
        Instant(i.timestamp, i.action, State.INFLIGHT)
        if i.is_completed and i.action in Action.WRITE_ACTIONS and _range_key(timeline, i) > InstantTime(end)
        else i
        for i in timeline.instants
    )
    return dataclasses.replace(timeline, instants=instants)


def plan_incremental(
    table: HoodieTable, begin: str, end: str | None = None, ignore_missing_files: bool = False, fallback: bool = False
) -> IncrementalPlan:
    """Plan an incremental pull of the changes committed in ``(begin, end]``.

    ``end`` defaults to the latest completed commit. ``begin`` older than the start of the
    active timeline is refused when instants have been archived (their changes cannot be
    listed any more); on a table that never archived, it simply means "from the start".
    A range whose files the cleaner removed is refused too (an
    :class:`~hoodie.errors.InstantNotFoundError` naming the range and the missing file).
    With ``fallback`` (``hoodie.datasource.read.incr.fallback.fulltablescan.enable``) both
    read the latest snapshot's records of the range instead (:func:`_full_scan_plan`).
    """
    begin = as_instant(begin)
    end = as_instant(end) if end is not None else None
    timeline = table.timeline
    basis = COMPLETION_TIME if timeline.layout_version >= 2 else INSTANT_TIME
    writes = timeline.completed_writes()
    if end is None:
        end = max((timeline.completion_time(i) for i in writes), key=InstantTime, default=begin)
    filter_rows = table.config.populate_meta_fields
    try:
        _check_not_archived(table, begin)
    except InstantNotFoundError:
        if fallback:
            return _full_scan_plan(table, begin, end, ignore_missing_files)
        raise
    in_range = tuple(
        sorted((i for i in writes if timeline.completion_time(i) in InstantRange(after=begin, upto=end)), key=Instant.sort_key)
    )
    if not in_range:
        log.warning("%s", why_incremental_is_empty(table, begin, end))
        return IncrementalPlan(begin, end, basis, (), (), filter_rows)

    touched: dict[str, set[str]] = defaultdict(set)
    for inst in in_range:
        for stat in table.commit_metadata(inst).write_stats():
            if stat.fileId:
                touched[stat.partitionPath].add(stat.fileId)

    try:
        slices = _touched_slices(table, basis, end, touched, ignore_missing_files)
    except DamagedTableError as e:
        if not _cleaned_or_archived(table):
            raise
        if fallback:
            return _full_scan_plan(table, begin, end, ignore_missing_files)
        raise InstantNotFoundError(
            f"incremental pull of ({begin}, {end}] on {table.base_path}: a file a commit of the range wrote is gone, "
            f"most likely cleaned (the pull is older than what the cleaner retains): {e}. Pull a later range, "
            f"or set {FALLBACK_OPTION}=true to read the latest snapshot's records committed in the range"
        ) from e
    return IncrementalPlan(begin, end, basis, in_range, tuple(sorted(slices, key=_slice_order)), filter_rows)


def _touched_slices(table: HoodieTable, basis: str, end: str, touched: dict[str, set[str]], ignore_missing_files: bool) -> list[FileSlice]:
    """The latest slice as of ``end`` of every ``touched`` file group (by partition)."""
    timeline = table.timeline
    view: TableView
    if basis == COMPLETION_TIME:
        # (listed as the table lists, as of its whole timeline: the view keeps what `end` saw)
        view = FileSystemView(table.storage, table.base_path, _timeline_as_completed_by(timeline, end), None, ignore_missing_files, lister=table.lister())
    else:
        view = table.view(end, ignore_missing_files)
    slices = []
    for partition in sorted(touched):
        ids = touched[partition]
        for group in view.file_groups(partition):
            # A group replaced by `end` is absent from the view: its rows live on in the
            # replacing group, which the replace commit's own write stats point at.
            if group.file_id in ids and (s := group.latest_slice) is not None:
                slices.append(s)
    warn_missing(view)
    return slices
