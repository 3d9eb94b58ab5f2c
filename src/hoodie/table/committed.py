"""What the completed instants of a view say its partitions hold.

A listing alone cannot tell a file that was never there from one that storage lost: with
the latest base file of a file group deleted, the listing still shows the slice before it,
and a reader would return that older version without a word. The write stats of the
completed commits, delta commits and replace commits the view sees name every file they
wrote, so the view checks its listing against them (:class:`CommittedFiles`):

* per file group, the base file of its latest committed write (a copy-on-write merge, an
  insert into a new or small file, a compaction);
* per log file, the byte ranges completed delta commits appended to it (``logOffset`` and
  ``fileSizeInBytes`` of their write stats, as Java's append handle records them), so
  that a log shorter than what was committed, or a corrupt block inside a committed range,
  is told apart from the torn tail of a failed writer.

Instants archived off the active timeline are not read unless their commit metadata is
given (``hoodie validate`` reads the archive for it, :mod:`hoodie.table.archived`; reads
do not, so a file only archived commits name is not checked by a read). Everything here
is read-only and never lists storage.

A view asks a :class:`CommittedSource`: :class:`CommittedFiles` decodes the commit
metadata itself; a timeline server's views ask the records its store keeps instead
(:mod:`hoodie.table.synced_commits`), so that no decoded metadata outlives a sync.
"""
from __future__ import annotations

from collections import defaultdict
from collections.abc import Collection, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from hoodie.layout import InstantTime, parse_base_file_name, parse_log_file_name
from hoodie.table.file_group import LogExtent
from hoodie.timeline.active import ActiveTimeline
from hoodie.timeline.commit_metadata import CommitMetadata
from hoodie.timeline.instant import Instant


@dataclass(frozen=True)
class CommittedBase:
    """The base file the latest committed write of a file group produced."""

    instant: str  # the instant whose write stats name it
    file_name: str
    size: int  # fileSizeInBytes of its write stat (0: not recorded)


@dataclass
class PartitionCommits:
    """Committed files of one partition: base files by file id, log extents by log name."""

    bases: dict[str, CommittedBase] = field(default_factory=dict)
    logs: dict[str, list[LogExtent]] = field(default_factory=lambda: defaultdict(list))


def add_written(commits: PartitionCommits, timestamp: str, name: str, size: int, log_offset: int | None) -> None:
    """Fold one write stat of the completed instant ``timestamp`` (applied oldest first)
    into ``commits``: a base file becomes its group's latest committed base, a log file
    gains the byte range the write appended."""
    base = parse_base_file_name(name)
    if base is not None:
        prior = commits.bases.get(base.file_id)
        if prior is None or InstantTime(prior.instant) <= InstantTime(timestamp):
            commits.bases[base.file_id] = CommittedBase(timestamp, name, size)
    elif parse_log_file_name(name) is not None and size > 0:
        start = log_offset or 0
        commits.logs[name].append(LogExtent(start, start + size, timestamp))


class CommittedSource(Protocol):
    """What the completed writes a view sees wrote, per partition."""

    def partition(self, partition_path: str) -> PartitionCommits: ...

    def partitions(self) -> list[str]:
        """Every partition a completed write of the view wrote into."""
        ...

    def replaced(self, partition_path: str) -> set[str]:
        """Ids of the partition's file groups the view's completed replace commits replaced."""
        ...


class CommittedFiles:
    """Committed files of every partition, from the write stats of ``instants`` (completed
    writes) and of ``archived`` (completed writes of the archived timeline, with their
    metadata, all older than ``instants``). Commit metadata is decoded once, on first use
    (that of replace commits at once, for the file groups they replaced)."""

    def __init__(self, timeline: ActiveTimeline, instants: list[Instant], archived: Sequence[tuple[Instant, CommitMetadata]] = ()) -> None:
        self._timeline = timeline
        self._instants = sorted(instants, key=lambda i: i.time)
        self._archived = sorted(archived, key=lambda pair: pair[0].time)
        self._by_partition: dict[str, PartitionCommits] | None = None
        self._replaced = timeline.replaced_file_groups(instants)
        for _, metadata in archived:
            for partition, ids in metadata.replaced_file_ids().items():
                self._replaced.setdefault(partition, set()).update(ids)

    def partition(self, partition_path: str) -> PartitionCommits:
        return self._all().get(partition_path) or PartitionCommits()

    def partitions(self) -> list[str]:
        """Every partition a completed write of the view wrote into."""
        return sorted(self._all())

    def replaced(self, partition_path: str) -> set[str]:
        return self._replaced.get(partition_path, set())

    def _all(self) -> dict[str, PartitionCommits]:
        if self._by_partition is None:
            self._by_partition = self._load()
        return self._by_partition

    def _load(self) -> dict[str, PartitionCommits]:
        out: dict[str, PartitionCommits] = defaultdict(PartitionCommits)
        for inst, metadata in self._oldest_first():
            for partition, stats in metadata.partition_to_write_stats.items():
                commits = out[partition]
                for stat in stats:
                    if stat.file_name:
                        add_written(commits, inst.timestamp, stat.file_name, stat.fileSizeInBytes, stat.logOffset)
        return dict(out)

    def _oldest_first(self) -> Iterator[tuple[Instant, CommitMetadata]]:
        yield from self._archived
        yield from self._timeline.commit_metadata_of(self._instants)


def paths_completed_writes_name(timeline: ActiveTimeline, excluding: Collection[str] = ()) -> frozenset[str]:
    """Relative paths of every file the write stats of the completed writes on
    ``timeline`` name (but those of the instants ``excluding``): files that nothing
    undoing another instant may delete, whatever its markers or plan say."""
    return frozenset(
        stat.path
        for inst in timeline.completed_writes()
        if inst.timestamp not in excluding
        for stat in timeline.commit_metadata(inst).write_stats()
        if stat.path
    )
