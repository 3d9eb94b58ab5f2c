"""The file-system view: which file groups and slices make up a table as of an instant.

Built from storage listings of the partitions asked for (never the whole table unless the
caller asks for every partition) and from the timeline: only files whose instants are
completed at or before the view's instant count, and file groups replaced by a completed
replace commit are hidden. Partitions are listed lazily and cached. On v6 tables the
log files a writer names after a pending compaction belong to the latest slice before it
until the compaction's base file is committed.

A view lists storage itself unless it is given :class:`PartitionListings`, the listings a
longer-lived owner keeps in step with the timeline (a timeline server's synced view), or a
:class:`PartitionLister` to find partitions and their files with (a table's metadata
table: no partition folder is listed).

The view is the one place that lists partitions: besides its file groups, it hands out a
partition's raw listing (:meth:`FileSystemView.partition_files`: every file storage holds
there, committed or not) to those that must see files no committed slice names (rollback
and undo looking for what a failed write left, markers resolving an APPEND, a timeline
server answering Apache Hudi 1.x's views of files in flight). A local view lists each partition once and keeps the listing for
its file groups and those callers alike; whoever changes a partition through the view's
listing tells it (:meth:`FileSystemView.forget`), so that nothing it wrote is hidden from
a later step.
"""
from __future__ import annotations

import dataclasses
import threading
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Protocol

from hoodie.errors import DamagedTableError
from hoodie.layout import (
    HOODIE_FOLDER,
    PARTITION_METAFILE_PREFIX,
    InstantTime,
    parse_base_file_name,
    parse_log_file_name,
)
from hoodie.storage.base import FileInfo, Storage
from hoodie.storage.paths import relative, relative_to, under
from hoodie.table.committed import CommittedFiles, CommittedSource
from hoodie.table.file_group import BaseFile, FileGroup, FileSlice, LogExtent, LogFile
from hoodie.timeline.active import ActiveTimeline
from hoodie.timeline.commit_metadata import CommitMetadata
from hoodie.timeline.instant import Action, Instant

_PREFETCH_THREADS = 16  # partitions listed at once by prefetch_latest


@dataclass(frozen=True)
class MissingFile:
    """A file the completed ``instant`` wrote that storage no longer has."""

    partition_path: str
    file_name: str
    instant: str
    message: str


class TableView(Protocol):
    """What every file-system view answers (a local :class:`FileSystemView`, or a timeline
    server's through :mod:`hoodie.table.remote_view`); writers, readers, services and the
    CLI ask only this."""

    base_path: str

    @property
    def missing(self) -> list[MissingFile]:
        """Committed files read around (local views with ``ignore_missing_files``)."""
        ...

    @property
    def visible_instants(self) -> list[Instant]: ...

    def all_partition_paths(self) -> list[str]: ...

    def file_groups(self, partition_path: str) -> list[FileGroup]: ...

    def latest_slices(self, partition_path: str) -> list[FileSlice]: ...

    def latest_slices_all(self, partitions: Iterable[str] | None = None) -> list[FileSlice]: ...

    def prefetch_latest(self, partitions: Iterable[str]) -> None:
        """A hint: the latest slices of ``partitions`` are about to be asked for (a remote
        view asks for them in a few requests instead of one each; a local one lists a
        partition only when asked)."""
        ...

    def replaced_file_groups(self, partition_path: str) -> list[FileGroup]:
        """The file groups of the partition that completed replace commits replaced, as
        storage still has them (what the cleaner deletes)."""
        ...


class PartitionLister(Protocol):
    """What a view finds partitions and their files with instead of listing storage (a
    table's metadata table). It knows the files of completed instants only."""

    def all_partition_paths(self) -> list[str]:
        """Every partition of the table ("" for a non-partitioned table's root)."""
        ...

    def files_in_many(self, partitions: Iterable[str]) -> dict[str, dict[str, int]]:
        """The files of each of ``partitions``, name → size (empty for a partition
        without any)."""
        ...


def listed_files(base_path: str, partition_path: str, files: dict[str, int]) -> list[FileInfo]:
    """The files a :class:`PartitionLister` gave for a partition, as a storage listing
    would give them."""
    directory = under(base_path, partition_path)
    return [FileInfo(under(directory, name, source=f"the listing of partition {partition_path!r}"), name, size, False) for name, size in sorted(files.items())]


class PartitionListings(Protocol):
    """Partition listings a view takes instead of listing storage."""

    def partition_paths(self) -> list[str]:
        """Every partition of the table."""
        ...

    def list_partition(self, partition_path: str) -> list[FileInfo]:
        """The files of one partition, as a storage listing would give them."""
        ...

    def prefetch(self, partitions: list[str]) -> bool:
        """Make the listings of ``partitions`` ready at once, where one lookup for all
        costs less than one each (a lister's); False: not done, the view asks for them
        side by side."""
        ...


def walk_partitions(
    storage: Storage, base_path: str, known: Callable[[str], list[FileInfo] | None] = lambda _: None
) -> Iterator[tuple[str, list[FileInfo]]]:
    """Every partition of the table at ``base_path`` with its listing, found by walking the
    directory tree (as Java does without the metadata table): a directory holding partition
    metadata or data files is a partition. One at a time, so that a caller keeping the
    listings elsewhere never holds them all. ``known`` gives the listing (folders
    included) a caller already holds for a relative folder path: it is not listed again."""
    pending = [base_path]
    while pending:
        d = pending.pop()
        held = known(relative_to(d, base_path)) if d != base_path else None
        entries = held if held is not None else storage.list_dir(d)
        if any(
            (not e.is_dir) and (e.name.startswith(PARTITION_METAFILE_PREFIX) or parse_base_file_name(e.name) is not None)
            for e in entries
        ):
            yield relative_to(d, base_path), entries
        for e in entries:
            if e.is_dir and not (d == base_path and e.name == HOODIE_FOLDER):
                pending.append(e.path)


class FileSystemView:
    """File groups of a table as of ``as_of`` (default: the latest completed instant)."""

    def __init__(
        self,
        storage: Storage,
        base_path: str,
        timeline: ActiveTimeline,
        as_of: str | None = None,
        ignore_missing_files: bool = False,
        listings: PartitionListings | None = None,
        archived: Sequence[tuple[Instant, CommitMetadata]] = (),
        committed: CommittedSource | None = None,
        lister: PartitionLister | None = None,
    ) -> None:
        self.storage = storage
        self.listings = listings
        # partitions and their files from the lister when given (committed files only:
        # partition_files still lists storage, for those looking for files of pending writes)
        self.lister = lister if listings is None else None
        self.base_path = base_path
        self.timeline = timeline
        self.as_of = as_of
        # read around a committed file storage no longer has instead of raising
        # DamagedTableError; what was read around is kept in `missing` (readers warn)
        self.ignore_missing_files = ignore_missing_files
        self.missing: list[MissingFile] = []
        self._lock = threading.Lock()
        self._groups: dict[str, list[FileGroup]] = {}
        # partition -> its listing (made by the walk, a prefetch or the first ask), kept
        # for the file groups and partition_files alike: one listing per partition a view
        # (with a lister, its files; storage's for partition_files are in _stored)
        self._listings: dict[str, list[FileInfo]] = {}
        self._stored: dict[str, list[FileInfo]] = {}
        completed = [i for i in timeline.completed(Action.WRITE_ACTIONS) if as_of is None or i.time <= InstantTime(as_of)]
        self._visible: dict[str, Instant] = {i.timestamp: i for i in completed}
        all_on_timeline = {i.timestamp for i in timeline.instants}
        self._on_timeline = all_on_timeline
        self._timeline_start = timeline.commits_start()
        self._undone: frozenset[str] | None = None  # instants rollbacks undid (_rolled_back)
        # the archived timeline's completed writes, when given (hoodie validate): their
        # files are checked too, and the file groups their replace commits replaced hidden
        # (a source of committed files given instead answers for the completed writes of
        # the latest view: a timeline server's, kept in its store)
        archived = [(i, m) for i, m in archived if as_of is None or i.time <= InstantTime(as_of)]
        self.committed: CommittedSource = committed if committed is not None else CommittedFiles(timeline, completed, archived)
        self._layout2 = timeline.layout_version >= 2
        # Pending compactions (a completed one loads as a commit): a v6 writer names the
        # logs it appends meanwhile after the compaction instant, whose base is not there yet.
        self._unfinished_compactions = {
            i.timestamp for i in timeline.instants
            if i.action == Action.COMPACTION and i.timestamp not in self._visible
        }

    # --- instants ---------------------------------------------------------------------------
    @property
    def visible_instants(self) -> list[Instant]:
        return list(self._visible.values())

    def is_committed(self, instant: str) -> bool:
        """Whether the view counts ``instant`` as committed (completed by its instant, or
        archived and not rolled back)."""
        if instant in self._visible:
            return True
        if instant in self._on_timeline:
            return False  # pending, or completed after as_of
        # Older than the active timeline: archived, hence committed, unless a rollback on
        # the timeline undid it (asked only here: rollbacks are read when a file needs it).
        return (
            self._timeline_start is not None and InstantTime(instant) < InstantTime(self._timeline_start)
            and (self.as_of is None or InstantTime(instant) <= InstantTime(self.as_of))
            and instant not in self._rolled_back()
        )

    def _rolled_back(self) -> frozenset[str]:
        if self._undone is None:  # read once per view, and only when a file needs it
            self._undone = self.timeline.rolled_back()
        return self._undone

    # --- partitions -------------------------------------------------------------------------
    def all_partition_paths(self) -> list[str]:
        """Every partition of the table (:func:`walk_partitions`, or the listings the view
        was given). A partition a completed write of the view wrote live files into, and
        that is gone from storage, is damage (see :meth:`_checked`)."""
        if self.listings is not None:
            found = self.listings.partition_paths()
        elif self.lister is not None:
            found = self.lister.all_partition_paths()
        else:
            with self._lock:
                known = dict(self._listings)
            walked = dict(walk_partitions(self.storage, self.base_path, known.get))
            with self._lock:
                for p, entries in walked.items():
                    self._listings.setdefault(p, entries)
            found = list(walked)
        listed = set(found)
        for partition in self.committed.partitions():
            if partition not in listed:
                self._checked(partition, [], self.committed.replaced(partition))
        return sorted(found)

    # --- file groups ------------------------------------------------------------------------
    def file_groups(self, partition_path: str) -> list[FileGroup]:
        with self._lock:
            cached = self._groups.get(partition_path)
        if cached is not None:
            return cached
        groups = self._build_partition(partition_path)
        if self.listings is None:  # a synced view's listings are bounded by their store: no second copy
            with self._lock:
                self._groups[partition_path] = groups
        return groups

    def latest_slices(self, partition_path: str) -> list[FileSlice]:
        return [s for g in self.file_groups(partition_path) if (s := g.latest_slice) is not None]

    def may_hold_older_slices(self, partition_path: str, read_by_compaction: Mapping[str, str] | None = None) -> bool:
        """Whether a file group of the partition may have a slice besides its latest and
        the one a pending compaction reads (``read_by_compaction``: file id → its base
        instant), none of which a clean deletes: read from the names of the partition's
        listing (committed or not), without building its file groups."""
        instants: dict[str, set[str]] = defaultdict(set)
        for info in self._listing(partition_path):
            name = None if info.is_dir else parse_base_file_name(info.name) or parse_log_file_name(info.name)
            if name is not None:
                instants[name.file_id].add(name.instant)
        reading = read_by_compaction or {}
        for file_id, found in instants.items():
            found.discard(max(found, key=InstantTime))
            found.discard(reading.get(file_id, ""))
            if found:
                return True
        return False

    def latest_slices_all(self, partitions: Iterable[str] | None = None) -> list[FileSlice]:
        parts = self.all_partition_paths() if partitions is None else list(partitions)
        self.prefetch_latest(parts)
        return [s for p in parts for s in self.latest_slices(p)]

    def prefetch_latest(self, partitions: Iterable[str]) -> None:
        """List the partitions not listed yet side by side: each listing is a round trip
        to storage (or to a server's store), and one after another they add up on object
        storage. The listings wait in ``_listings`` for :meth:`file_groups`."""
        with self._lock:
            todo = [p for p in dict.fromkeys(partitions) if p not in self._groups and p not in self._listings]
        if self.lister is not None:
            if todo:  # one lookup for all of them
                self._from_lister(todo)
            return
        if len(todo) < 2 or (self.listings is not None and self.listings.prefetch(todo)):
            return

        def fetch(partition: str) -> None:
            self._listing(partition)

        with ThreadPoolExecutor(min(_PREFETCH_THREADS, len(todo)), thread_name_prefix="hoodie-list") as pool:
            for _ in pool.map(fetch, todo):
                pass

    def partition_files(self, partition_path: str) -> list[FileInfo]:
        """Every file storage holds in the partition (folders left out), committed or not:
        for those that must see what no committed slice names (a failed write's files, a
        log version a rollback appends after). The view's own listing, made at most once
        until :meth:`forget`; a view given :class:`PartitionListings` asks them (which
        may lack files of pending instants). A view given a :class:`PartitionLister`
        lists storage here all the same: the lister knows committed files only."""
        if self.lister is not None:
            with self._lock:
                cached = self._stored.get(partition_path)
            if cached is None:
                cached = self._list_storage(partition_path)
                with self._lock:
                    cached = self._stored.setdefault(partition_path, cached)
            return [e for e in cached if not e.is_dir]
        return [e for e in self._listing(partition_path) if not e.is_dir]

    def forget(self, partition_path: str) -> None:
        """The caller changed the partition (wrote or deleted a file): its next listing,
        file groups included, comes from storage again."""
        with self._lock:
            self._listings.pop(partition_path, None)
            self._stored.pop(partition_path, None)
            self._groups.pop(partition_path, None)

    def _listing(self, partition_path: str) -> list[FileInfo]:
        """A partition's entries, listed once: from the view's listings source (which
        keeps them itself), its lister, or storage."""
        if self.listings is not None:
            return self.listings.list_partition(partition_path)
        with self._lock:
            cached = self._listings.get(partition_path)
        if cached is not None:
            return cached
        if self.lister is not None:
            return self._from_lister([partition_path])[partition_path]
        entries = self._list_storage(partition_path)
        with self._lock:
            return self._listings.setdefault(partition_path, entries)

    def _from_lister(self, partitions: list[str]) -> dict[str, list[FileInfo]]:
        assert self.lister is not None
        found = self.lister.files_in_many(partitions)
        with self._lock:
            return {p: self._listings.setdefault(p, listed_files(self.base_path, p, found.get(p, {}))) for p in partitions}

    def _list_storage(self, partition_path: str) -> list[FileInfo]:
        return self.storage.list_dir(under(self.base_path, partition_path))

    def replaced_file_groups(self, partition_path: str) -> list[FileGroup]:
        """The file groups of the partition that the view's completed replace commits
        replaced, as storage still has them (the cleaner deletes their files, and may have
        deleted some already: they are not checked against what their commits wrote)."""
        replaced = self.committed.replaced(partition_path)
        if not replaced:
            return []
        return self._group_listing(partition_path, self._listing(partition_path), replaced.__contains__)

    def _build_partition(self, partition_path: str) -> list[FileGroup]:
        replaced = self.committed.replaced(partition_path)
        groups = self._group_listing(partition_path, self._listing(partition_path), lambda file_id: file_id not in replaced)
        return self._checked(partition_path, groups, replaced)

    def _group_listing(self, partition_path: str, listing: list[FileInfo], keep: Callable[[str], bool]) -> list[FileGroup]:
        """The file groups (whose ids ``keep`` accepts) of a partition's listing, of
        committed files only."""
        bases: dict[str, dict[str, BaseFile]] = defaultdict(dict)
        logs: dict[str, list[LogFile]] = defaultdict(list)
        for info in listing:
            if info.is_dir:
                continue
            bname = parse_base_file_name(info.name)
            if bname is not None:
                if not keep(bname.file_id) or not self.is_committed(bname.instant):
                    continue
                prior = bases[bname.file_id].get(bname.instant)
                # Two committed files for the same slice can only come from a duplicate task
                # attempt that the commit failed to clean; keep one deterministically.
                if prior is None or info.name < prior.file_name:
                    bases[bname.file_id][bname.instant] = BaseFile(info.path, bname, info.size)
                continue
            lname = parse_log_file_name(info.name)
            if lname is not None and keep(lname.file_id) and not lname.cdc:
                logs[lname.file_id].append(LogFile(info.path, lname, info.size))
        groups = []
        for file_id in sorted(set(bases) | set(logs)):
            slices = self._slices(partition_path, file_id, bases.get(file_id, {}), logs.get(file_id, []))
            if slices:
                groups.append(FileGroup(partition_path, file_id, tuple(slices)))
        return groups

    # --- committed files --------------------------------------------------------------------
    def _checked(self, partition_path: str, groups: list[FileGroup], replaced: set[str]) -> list[FileGroup]:
        """``groups`` checked against what the view's completed instants wrote: the latest
        base file each live group's last write produced must be listed (else
        :class:`DamagedTableError`, or, when reading around missing files, the group is left
        out with a warning rather than read at an older version), and log files of latest
        slices learn the byte ranges completed delta commits wrote into them."""
        commits = self.committed.partition(partition_path)
        if not commits.bases and not commits.logs:
            return groups
        by_id = {g.file_id: g for g in groups}
        for file_id, base in sorted(commits.bases.items()):
            if file_id in replaced:
                continue
            latest = by_id[file_id].latest_slice if file_id in by_id else None
            name = parse_base_file_name(base.file_name)
            instant = name.instant if name is not None else base.instant
            if latest is None or InstantTime(latest.base_instant) < InstantTime(instant) or (
                latest.base_instant == instant and latest.base_file is None
            ):
                self._missing(partition_path, base.file_name, base.instant)
                by_id.pop(file_id, None)
        # the committed extents of the latest slices' logs, by file id then log name: each
        # group is rebuilt once, however many logs its slice holds
        extents_of: dict[str, dict[str, tuple[LogExtent, ...]]] = defaultdict(dict)
        listed: dict[str, frozenset[str]] = {}  # the log names of each latest slice
        for log_name, extents in sorted(commits.logs.items()):
            lname = parse_log_file_name(log_name)
            group = by_id.get(lname.file_id) if lname is not None else None
            if lname is None or lname.file_id in replaced:
                continue
            latest = group.latest_slice if group is not None else None
            if group is None or latest is None:
                if lname.file_id not in commits.bases:  # (a missing base was reported above)
                    self._missing(partition_path, log_name, extents[-1].instant)
                continue
            names = listed.get(lname.file_id)
            if names is None:
                names = listed[lname.file_id] = frozenset(lf.file_name for lf in latest.log_files)
            if log_name not in names:
                if InstantTime(lname.instant) >= InstantTime(latest.base_instant):  # the latest slice's
                    self._missing(partition_path, log_name, extents[-1].instant)
                continue
            extents_of[lname.file_id][log_name] = tuple(extents)
        for file_id, committed in extents_of.items():
            group = by_id[file_id]
            latest = group.slices[-1]
            logs = tuple(dataclasses.replace(lf, committed=committed[lf.file_name]) if lf.file_name in committed else lf for lf in latest.log_files)
            by_id[file_id] = dataclasses.replace(group, slices=group.slices[:-1] + (dataclasses.replace(latest, log_files=logs),))
        return [by_id[g.file_id] for g in groups if g.file_id in by_id]

    def _missing(self, partition_path: str, file_name: str, instant: str) -> None:
        rel = relative(partition_path, file_name, source=f"instant {instant}")
        # with a lister, storage was not listed: the file is missing from what the lister gives
        where = "storage" if self.lister is None else "the metadata table's listing (hoodie.metadata.validate=true compares it with storage)"
        message = f"{self.base_path}: {rel}, written by the completed instant {instant}, is missing from {where}"
        if self.as_of is not None:
            message += f" (if a clean removed it, as.of.instant {self.as_of} is older than what the cleaner retains)"
        if not self.ignore_missing_files:
            raise DamagedTableError(f"{message}; `hoodie validate` lists every damaged file, and ignoreMissingFiles=true reads around it")
        self.missing.append(MissingFile(partition_path, file_name, instant, message))

    def _slices(self, partition: str, file_id: str, bases: dict[str, BaseFile], logs: list[LogFile]) -> list[FileSlice]:
        by_instant: dict[str, tuple[BaseFile | None, list[LogFile]]] = {t: (b, []) for t, b in bases.items()}
        for lf in sorted(logs, key=lambda x: x.name.sort_key()):
            if self._layout2:
                inst = self._visible.get(lf.name.instant)
                if inst is None:
                    continue
                done = self.timeline.completion_time(inst)
                owners = [t for t in by_instant if InstantTime(t) <= InstantTime(done)]
                if not owners:
                    # no base file before it (a file group of logs only, as the metadata
                    # table's record index starts): the log opens a slice, as in Java
                    by_instant[lf.name.instant] = (None, [lf])
                    continue
                by_instant[max(owners, key=InstantTime)][1].append(lf)
            else:
                # v6: the log names its slice's base instant. Logs named after a pending
                # compaction extend the slice the compaction reads, as Java's merged file
                # slices do (hudi-rs 0.5.0 leaves them out until the compaction completes);
                # logs of an uncommitted base belong to a failed write.
                owner = lf.name.instant
                if owner in by_instant:
                    by_instant[owner][1].append(lf)
                elif owner in self._unfinished_compactions:
                    earlier = [t for t in by_instant if InstantTime(t) < InstantTime(owner)]
                    if earlier:
                        by_instant[max(earlier, key=InstantTime)][1].append(lf)
                elif self.is_committed(owner) or owner in self._visible:
                    by_instant[owner] = (None, [lf])
        return [
            FileSlice(partition, file_id, t, b, tuple(ls))
            for t, (b, ls) in sorted(by_instant.items(), key=lambda kv: InstantTime(kv[0]))
        ]
