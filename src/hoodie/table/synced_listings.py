"""Partition listings kept in step with the timeline, for a view that outlives one
operation (a timeline server's): each partition is listed once, and every instant that
completes afterwards is applied from its metadata instead of listing again.

:meth:`SyncedListings.sync` takes a newer timeline snapshot and applies what completed
since the last one (Hudi's incremental timeline sync):

* a commit, delta commit, replace commit or compaction: the files its write stats name
  are added to (or grown in) the listings of their partitions; a partition it creates
  joins the partition set;
* a clean: the files it deleted leave the listings;
* a rollback: the partitions it touched are listed again on next use (it deletes files
  and may append a rollback block);
* a restore, a completed write that disappeared from the timeline, an instant pending at
  the last sync that is gone (completed and archived unseen, or rolled back), an archived
  gap (the active timeline now starts after everything the listings saw) or metadata
  that cannot be decoded: everything is listed again (a rebuild).

Files of pending instants may or may not be in a listing; views ignore them until their
instant completes, when its write stats bring them in. Given a lister for the synced
timeline (:meth:`SyncedListings.use_lister`: the table's metadata table), partitions and
their files come from it instead of storage, and no partition folder is listed. Listings, the set of partitions
and what completed writes wrote (:mod:`hoodie.table.synced_commits`, what a server's
views check the listings against) all live in one
:class:`~hoodie.table.view_stores.ViewStore`: what the owner keeps besides is a fixed
overhead, whatever the size of the table. This module never writes to storage.

:class:`SharedListings` gives one operation in process (a write and the inline services
after it) such listings in memory when no timeline server serves its views: the clean
after a write reuses the partitions the write listed, brought up to date by the write's
commit metadata, instead of listing them again.
"""
from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TypeVar

from hoodie.errors import HoodieError
from hoodie.layout import InstantTime, parse_log_file_name
from hoodie.storage.base import FileInfo, Storage
from hoodie.storage.paths import check_name, under
from hoodie.table.fs_view import FileSystemView, PartitionLister, listed_files, walk_partitions
from hoodie.table.synced_commits import StoredCommits, ViewCommits
from hoodie.table.view_stores import MemoryStore, ViewStore
from hoodie.timeline.active import ActiveTimeline
from hoodie.timeline.instant import Action, Instant

INCREMENTAL = "incremental"
REBUILD = "rebuild"
_PARTITIONS = "/partitions"  # the partition set, once the table was walked (no partition path starts with "/")
T = TypeVar("T")


_FOLDER = -1  # the size a listing keeps for a folder (a partition may hold deeper ones)


def _encode(entries: Iterable[tuple[str, int]]) -> bytes:
    return json.dumps(sorted(entries), separators=(",", ":")).encode()


def _decode(value: bytes) -> dict[str, int]:
    return {name: size for name, size in json.loads(value)}


@dataclass
class _Underway:
    """A partition being listed for a request, which others asking meanwhile wait for."""

    generation: int
    done: threading.Event = field(default_factory=threading.Event)
    entries: list[FileInfo] | None = None  # what the listing found, once taken as current


class SyncedListings:
    """The listings of one table's partitions in ``store``, synced from the timeline."""

    def __init__(self, storage: Storage, base_path: str, store: ViewStore, incremental: bool = True, keep_empty: bool = False) -> None:
        self.storage = storage
        self.base_path = base_path
        self.store = store
        self.incremental = incremental
        # keep the listing of a partition with no files (yet): one operation's own listings
        # do (a write's new partition, grown by its commit); a server's, asked for any
        # partition name, keep a partition once it has files
        self.keep_empty = keep_empty
        self.timeline: ActiveTimeline | None = None
        self.commits = StoredCommits(store)
        self._generation = 0  # bumped by every change a sync or rebuild makes
        self._underway: dict[str, _Underway] = {}  # partitions being listed, by whom first asked
        self._lock = threading.RLock()
        # what the synced timeline's partitions and files are found with instead of storage
        # (made on first need, once per timeline: a metadata table's reader sees the
        # instants of the timeline it was made for)
        self._make_lister: Callable[[], PartitionLister | None] | None = None
        self._lister: PartitionLister | None = None

    def use_lister(self, make: Callable[[], PartitionLister | None] | None) -> None:
        """Find partitions and files not kept yet with what ``make`` makes, a lister of
        the timeline last synced (None: list storage)."""
        with self._lock:
            self._make_lister, self._lister = make, None

    def _current_lister(self) -> PartitionLister | None:
        with self._lock:
            if self._lister is None and self._make_lister is not None:
                self._lister = self._make_lister()
                self._make_lister = None
            return self._lister

    # --- what views ask -----------------------------------------------------------------------
    def partition_paths(self) -> list[str]:
        with self._lock:
            known = self._partitions()
            lister = self._current_lister() if known is None else None
            if lister is not None:
                known = set(lister.all_partition_paths())
                self.store.put(_PARTITIONS, json.dumps(sorted(known)).encode())
            elif known is None:
                found = set()
                # a partition listed already (a write's) is not listed again by the walk
                for partition, entries in walk_partitions(self.storage, self.base_path, self._kept):
                    self._store(partition, entries)
                    found.add(partition)
                self.store.put(_PARTITIONS, json.dumps(sorted(found)).encode())
                known = found
            return sorted(known)

    def committed_files(self, timeline: ActiveTimeline) -> ViewCommits:
        """What the completed writes of ``timeline`` (the latest synced) wrote, for its view."""
        return ViewCommits([i.timestamp for i in timeline.completed_writes()], self._with_commits)

    def _with_commits(self, read: Callable[[StoredCommits], T]) -> T:
        with self._lock:
            if not self.commits.loaded:
                assert self.timeline is not None, "synced with a timeline before a view asks"
                self.commits.load(self.timeline)
            return read(self.commits)

    def _partitions(self) -> set[str] | None:
        """The partition set (None until the table is walked once)."""
        value = self.store.get(_PARTITIONS)
        return set(json.loads(value)) if value is not None else None

    def _add_partitions(self, partitions: Iterable[str]) -> None:
        known = self._partitions()
        if known is not None and not known.issuperset(partitions):
            self.store.put(_PARTITIONS, json.dumps(sorted(known.union(partitions))).encode())

    def list_partition(self, partition_path: str) -> list[FileInfo]:
        directory = under(self.base_path, partition_path)
        while True:
            with self._lock:
                value, generation = self.store.get(partition_path), self._generation
                underway = self._underway.get(partition_path) if value is None else None
                mine = value is None and underway is None
                if mine:
                    underway = self._underway[partition_path] = _Underway(generation)
            if value is not None:
                return _entries(directory, value)
            assert underway is not None
            if not mine:
                # another request lists it now (the tasks of a write ask for the same
                # partitions at once): its listing serves this one too
                underway.done.wait()
                with self._lock:
                    if underway.entries == [] and underway.generation == self._generation:
                        return []
                continue
            try:
                # listed outside the lock: the partitions of a write are asked for at once
                lister = self._current_lister()
                if lister is not None:
                    entries = listed_files(self.base_path, partition_path, lister.files_in_many([partition_path]).get(partition_path, {}))
                else:
                    entries = self.storage.list_dir(directory)
                with self._lock:
                    if self._generation != generation:
                        continue  # a sync ran meanwhile: this listing may predate what it applied
                    underway.entries = entries
                    if not entries and not self.keep_empty:
                        return []
                    value = self._store(partition_path, entries)
                    if entries:
                        self._add_partitions([partition_path])
                    return _entries(directory, value)
            finally:
                with self._lock:
                    self._underway.pop(partition_path, None)
                underway.done.set()

    def prefetch(self, partitions: list[str]) -> bool:
        """With a lister, the partitions not kept yet in one lookup (their listings are
        kept as :meth:`list_partition` keeps one); without, nothing (False)."""
        with self._lock:
            todo = [p for p in dict.fromkeys(partitions) if self.store.get(p) is None and p not in self._underway]
            generation = self._generation
            has_lister = self._lister is not None or self._make_lister is not None
        if not has_lister:
            return False
        if not todo:
            return True  # (the lister, a metadata table's reader, is not even made)
        lister = self._current_lister()
        if lister is None:
            return False
        found = lister.files_in_many(todo)  # outside the lock, as a listing
        with self._lock:
            if self._generation != generation:
                return True  # a sync ran meanwhile: what is asked for is looked up again then
            for partition in todo:
                files = found.get(partition, {})
                if self.store.get(partition) is None and (files or self.keep_empty):
                    self._store(partition, listed_files(self.base_path, partition, files))
                    if files:
                        self._add_partitions([partition])
        return True

    def _kept(self, partition_path: str) -> list[FileInfo] | None:
        """The listing kept for a folder, if any (folders included)."""
        value = self.store.get(partition_path)
        return None if value is None else _entries(under(self.base_path, partition_path), value)

    def _store(self, partition: str, entries: list[FileInfo]) -> bytes:
        value = _encode((e.name, _FOLDER if e.is_dir else e.size) for e in entries)
        self.store.put(partition, value)
        return value

    # --- keeping up with the timeline ------------------------------------------------------------
    def sync(self, timeline: ActiveTimeline) -> str | None:
        """Bring the listings up to ``timeline`` (a newer snapshot of the same table);
        returns :data:`INCREMENTAL`, :data:`REBUILD`, or None when nothing was to do."""
        with self._lock:
            old, self.timeline = self.timeline, timeline
            if old is None:
                return None
            done_before = {i.timestamp for i in old.instants if i.is_completed}
            fresh = [i for i in timeline.completed() if i.timestamp not in done_before]
            if not self.incremental or self._must_rebuild(old, timeline, fresh):
                self.rebuild()
                return REBUILD
            if fresh:
                # a listing made meanwhile may predate what is applied now (a sync that
                # applies nothing leaves the listings, and a listing under way, as they are)
                self._generation += 1
            try:
                for instant in fresh:
                    self._apply(timeline, instant)
            except (HoodieError, ValueError, KeyError, TypeError, OSError):
                self.rebuild()  # never serve listings that could not be brought up to date
                return REBUILD
            return INCREMENTAL if fresh else None

    def rebuild(self) -> None:
        """Forget every listing (each partition is listed again on next use) and what
        completed writes wrote (read again from the timeline on next use)."""
        with self._lock:
            self.store.clear()
            self.commits.loaded = False
            self._generation += 1

    def _must_rebuild(self, old: ActiveTimeline, new: ActiveTimeline, fresh: list[Instant]) -> bool:
        start = new.commits_start()
        now_on = {i.timestamp for i in new.instants}
        for gone in old.instants:
            # a completed write may leave the timeline by archival only (older than its start)
            if (
                gone.is_completed and gone.action in Action.WRITE_ACTIONS and gone.timestamp not in now_on
                and (start is None or gone.time >= InstantTime(start))
            ):
                return True
        seen = [i.timestamp for i in old.instants]
        if seen and start is not None and InstantTime(start) > InstantTime(max(seen, key=InstantTime)):
            return True  # instants may have completed and been archived unseen
        if any(not i.is_completed and i.timestamp not in now_on for i in old.instants):
            # pending then, gone now: completed and archived since (what it wrote or
            # deleted was never applied), or rolled back
            return True
        return any(i.action == Action.RESTORE for i in fresh)

    def _apply(self, timeline: ActiveTimeline, instant: Instant) -> None:
        if instant.action in Action.WRITE_ACTIONS:
            metadata = timeline.commit_metadata(instant)  # decoded for this sync only
            written = metadata.partition_to_write_stats
            self._add_partitions(written)
            for partition, stats in written.items():
                self._grow(partition, [(s.file_name, _size_after(s.file_name, s.logOffset, s.fileSizeInBytes)) for s in stats if s.file_name])
            if self.commits.loaded:  # (else loaded from the whole timeline on first use)
                self.commits.add(timeline, instant, metadata)
        elif instant.action == Action.CLEAN:
            for partition, pm in timeline.clean_metadata(instant).partition_metadata.items():
                self._shrink(partition, [f.rsplit("/", 1)[-1] for f in pm.success_delete_files])
        elif instant.action == Action.ROLLBACK:
            for partition in timeline.rollback_metadata(instant).partition_metadata:
                self.store.delete(partition)

    def _grow(self, partition: str, files: list[tuple[str, int]]) -> None:
        value = self.store.get(partition)
        if value is None:
            return  # listed when first asked for
        entries = _decode(value)
        for name, size in files:
            check_name(name, f"write stat in partition {partition!r}")
            entries[name] = max(entries.get(name, 0), size)
        self.store.put(partition, _encode(entries.items()))

    def _shrink(self, partition: str, names: list[str]) -> None:
        value = self.store.get(partition)
        if value is None:
            return
        entries = _decode(value)
        for name in names:
            entries.pop(name, None)
        self.store.put(partition, _encode(entries.items()))


class SharedListings:
    """The latest views of one operation in process, from listings it keeps in memory and
    in step with the timeline (a write, then its inline compaction and clean: each view is
    made from a newer timeline, whose completed instants are applied before it answers).
    Only committed data comes from here: rollback and undo, which look for files of
    pending instants, list storage
    (:meth:`~hoodie.table.table.HoodieTable.storage_view`)."""

    def __init__(self, storage: Storage, base_path: str) -> None:
        self.listings = SyncedListings(storage, base_path, MemoryStore(), keep_empty=True)

    def __reduce__(self) -> tuple[type[SharedListings], tuple[Storage, str]]:
        # a copy elsewhere (another process) starts empty: it lists what it is asked for
        return SharedListings, (self.listings.storage, self.listings.base_path)

    def view(
        self, base_path: str, timeline: ActiveTimeline, local: Callable[[], FileSystemView], lister: Callable[[], PartitionLister | None] | None = None
    ) -> FileSystemView:
        """The latest view of ``timeline`` (``local``, the view listing storage, is not
        needed: nothing here can fail over); what is not kept yet is found with the
        table's ``lister`` of ``timeline``, or listed."""
        self.listings.sync(timeline)
        self.listings.use_lister(lister)
        return FileSystemView(self.listings.storage, base_path, timeline, listings=self.listings)


def _entries(directory: str, value: bytes) -> list[FileInfo]:
    return [FileInfo(under(directory, name), name, max(size, 0), size == _FOLDER) for name, size in sorted(_decode(value).items())]


def _size_after(name: str, log_offset: int | None, written: int) -> int:
    """A file's size once the write stat's bytes are in: a log file ends where the
    append ended."""
    return (log_offset or 0) + written if parse_log_file_name(name) is not None else written
