"""What completed writes wrote, per partition, kept in a synced view's store next to its
listings (a timeline server's): the records a view checks its listings against
(:class:`~hoodie.table.committed.CommittedSource`), without decoded commit metadata
kept in memory.

A partition's record lists, for every completed write on the active timeline that wrote
into it, the files its write stats name (``[instant, file name, size, log offset]``) and
the file groups a replace commit replaced there (``[instant, file id]``). Records are built
from the commit metadata of every completed write the first time a view needs one (each
instant's metadata decoded, folded into the store and dropped before the next), then kept
up by each sync with the instants that completed since; entries of instants that left the
timeline (archived) are dropped when their record is next written. A view reads only the
entries of the instants it sees, so a view built before a sync answers as it did.

Keys are paths no partition can have (a partition path is relative), so records share the
listings' store and its bound. This module never lists or writes storage.
"""
from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Callable, Collection
from typing import Any

from hoodie.layout import InstantTime
from hoodie.table.committed import PartitionCommits, add_written
from hoodie.table.view_stores import ViewStore
from hoodie.timeline.active import ActiveTimeline
from hoodie.timeline.commit_metadata import CommitMetadata
from hoodie.timeline.instant import Instant

_RECORD = "/committed/"  # + partition path: the partition's record
_WRITTEN = "/written"  # every partition a completed write wrote into


def _load_json(value: bytes | None) -> list[Any]:
    return json.loads(value) if value is not None else []


def _dump_json(value: list[Any]) -> bytes:
    return json.dumps(value, separators=(",", ":")).encode()


class StoredCommits:
    """The records of one table in ``store``; the caller (the synced listings) holds its
    lock around every call and clears the store when it rebuilds."""

    def __init__(self, store: ViewStore) -> None:
        self.store = store
        self.loaded = False

    def load(self, timeline: ActiveTimeline) -> None:
        """The records of every completed write on ``timeline``, one instant at a time."""
        for instant in timeline.completed_writes():
            self.add(timeline, instant)
        self.loaded = True

    def add(self, timeline: ActiveTimeline, instant: Instant, metadata: CommitMetadata | None = None) -> None:
        """Fold the completed write ``instant`` (its ``metadata``, decoded if not given) into
        the records; ``timeline``, the snapshot it completed on, says which older entries
        are archived."""
        metadata = metadata if metadata is not None else timeline.commit_metadata(instant)
        entries: dict[str, list[list[Any]]] = defaultdict(list)
        for partition, stats in metadata.partition_to_write_stats.items():
            entries[partition].extend([instant.timestamp, s.file_name, s.fileSizeInBytes, s.logOffset] for s in stats if s.file_name)
        for partition, ids in metadata.replaced_file_ids().items():
            entries[partition].extend([instant.timestamp, file_id] for file_id in sorted(ids))
        on_timeline = {i.timestamp for i in timeline.instants}
        for partition, new in entries.items():
            key = _RECORD + partition
            kept = [e for e in _load_json(self.store.get(key)) if e[0] in on_timeline and e[0] != instant.timestamp]
            self.store.put(key, _dump_json(kept + new))
        written = set(_load_json(self.store.get(_WRITTEN)))
        if not written.issuperset(entries):
            self.store.put(_WRITTEN, _dump_json(sorted(written.union(entries))))

    def partitions(self) -> list[str]:
        return list(_load_json(self.store.get(_WRITTEN)))

    def partition(self, partition_path: str, visible: Collection[str]) -> tuple[PartitionCommits, set[str]]:
        """The committed files and replaced file groups of a partition, as the completed
        writes ``visible`` (instant times) made them."""
        entries = [e for e in _load_json(self.store.get(_RECORD + partition_path)) if e[0] in visible]
        entries.sort(key=lambda e: InstantTime(e[0]))  # oldest first (stable within an instant)
        commits, replaced = PartitionCommits(), set()
        for e in entries:
            if len(e) == 2:
                replaced.add(str(e[1]))
            else:
                add_written(commits, str(e[0]), str(e[1]), int(e[2]), e[3])
        return commits, replaced


class ViewCommits:
    """The records as one view (the latest, of ``visible`` completed writes) sees them;
    ``locked`` runs a read under the listings' lock, loading the records first if needed."""

    def __init__(self, visible: Collection[str], locked: Callable[[Callable[[StoredCommits], Any]], Any]) -> None:
        self._visible = frozenset(visible)
        self._locked = locked
        # the partition asked for last: a view checks a partition and asks for its
        # replaced groups in turn, one record decoded for both
        self._last: tuple[str, PartitionCommits, set[str]] | None = None

    def _of(self, partition_path: str) -> tuple[PartitionCommits, set[str]]:
        last = self._last
        if last is not None and last[0] == partition_path:
            return last[1], last[2]
        commits, replaced = self._locked(lambda stored: stored.partition(partition_path, self._visible))
        self._last = (partition_path, commits, replaced)
        return commits, replaced

    def partition(self, partition_path: str) -> PartitionCommits:
        return self._of(partition_path)[0]

    def partitions(self) -> list[str]:
        return sorted(self._locked(lambda stored: stored.partitions()))

    def replaced(self, partition_path: str) -> set[str]:
        return self._of(partition_path)[1]
