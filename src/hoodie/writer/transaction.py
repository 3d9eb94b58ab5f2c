"""The commit protocol of one write, run on the driver.

``begin`` creates ``<t>.<action>.requested``; ``mark_inflight`` writes the planned
workload as ``<t>.inflight``; data files are written (each after its marker); ``commit``
deletes files of failed or duplicate task attempts (markers without a write stat),
writes the completed instant atomically and exactly once, then drops the markers. If
anything fails before the completed instant exists, ``abort`` rolls the write back; a
writer killed outright is rolled back by the next writer.
"""
from __future__ import annotations

import functools
import json
import logging
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import NoReturn

import pyarrow as pa

from hoodie.config.options import CONCURRENCY_MODE, SINGLE_WRITER
from hoodie.errors import ConcurrentWriteError
from hoodie.formats.avro_schema import arrow_to_avro_schema, avro_schema_json
from hoodie.index.bucket import shared_buckets
from hoodie.markers import DirectMarkers
from hoodie.storage.paths import relative
from hoodie.table.committed import paths_completed_writes_name
from hoodie.table.table import HoodieTable
from hoodie.timeline import write_claims
from hoodie.timeline.action_metadata import RequestedReplaceMetadata
from hoodie.timeline.commit_metadata import STORAGE_CALLS, CommitMetadata, WriteStat
from hoodie.timeline.instant import Action, Instant, State
from hoodie.writer.table_services import TableServices

log = logging.getLogger(__name__)

REPLACE_OPERATIONS = ("insert_overwrite", "insert_overwrite_table")


def operation_type_name(operation: str) -> str:
    return operation.upper()


def action_for(operation: str, table_type: str) -> str:
    if operation in REPLACE_OPERATIONS:
        return Action.REPLACE_COMMIT
    return Action.DELTA_COMMIT if table_type == "MERGE_ON_READ" else Action.COMMIT


@dataclass
class WriteTransaction:
    table: HoodieTable
    operation: str
    instant: Instant
    services: TableServices  # rolls the instant back if the write fails
    partitions: tuple[str, ...] = ()  # those the write planned to touch
    by_bucket: bool = False  # the bucket index's: writes conflict on a bucket, not only a file group

    @property
    def instant_time(self) -> str:
        return self.instant.timestamp

    @property
    def markers(self) -> DirectMarkers:
        return DirectMarkers(self.table.storage, self.table.base_path, self.instant_time)

    @classmethod
    def begin(cls, table: HoodieTable, operation: str, services: TableServices, by_bucket: bool = False) -> WriteTransaction:
        timeline = table.timeline.reload()
        action = action_for(operation, table.table_type)
        content = b""
        if action == Action.REPLACE_COMMIT:
            content = RequestedReplaceMetadata(operation_type_name(operation)).encode()
        return cls(table, operation, timeline.request_new(action, content), services, by_bucket=by_bucket)

    def mark_inflight(self, workload: Mapping[str, Iterable[WriteStat]] | None = None) -> None:
        """Write ``<t>.inflight`` with the planned workload (partitions and file groups)."""
        planned = CommitMetadata(
            partition_to_write_stats={p: list(stats) for p, stats in (workload or {}).items()},
            operation_type=operation_type_name(self.operation),
        )
        self.partitions = tuple(planned.partition_to_write_stats)
        self.table.timeline.transition_to_inflight(self.instant, planned.to_json_bytes())
        self.instant = self.instant.with_state(State.INFLIGHT)

    def commit(
        self,
        stats: list[WriteStat],
        data_schema: pa.Schema,
        replaced_file_ids: Mapping[str, list[str]] | None = None,
        extra_metadata: Mapping[str, str] | None = None,
        storage_calls: Callable[[], Mapping[str, int]] | None = None,
    ) -> CommitMetadata:
        """Make the write visible. Files written by tasks whose stats were not accepted
        (failed or duplicate attempts) are deleted first, so they never become visible.
        ``storage_calls`` says what the write cost in storage calls up to this point; the
        commit metadata records it (extra metadata :data:`STORAGE_CALLS`)."""
        self._claim_commit()
        # a view of storage, made only if an APPEND marker's partition must be listed (the
        # task's log file is no committed file yet: neither a timeline server's view nor the
        # metadata table would have it)
        local = functools.cache(self.table.storage_view)
        self.markers.delete_unaccepted(stats, lambda p: local().partition_files(p), lambda: paths_completed_writes_name(self.table.timeline.reload()))
        if storage_calls is not None:
            extra_metadata = {**(extra_metadata or {}), STORAGE_CALLS: json.dumps(dict(storage_calls()), sort_keys=True)}
        by_partition: dict[str, list[WriteStat]] = {}
        for s in stats:
            by_partition.setdefault(s.partitionPath, []).append(s)
        schema_json = avro_schema_json(arrow_to_avro_schema(data_schema, self.table.name))
        metadata = CommitMetadata(
            partition_to_write_stats=by_partition,
            operation_type=operation_type_name(self.operation),
            extra_metadata={"schema": schema_json, **(extra_metadata or {})},
            compacted=False,
            partition_to_replace_file_ids={p: list(ids) for p, ids in replaced_file_ids.items()} if replaced_file_ids is not None else None,
        )
        with write_claims.commit_lock(self.table.storage, self.table.base_path, self.instant_time):
            self._refuse_conflicting_writes(metadata)
            self.table.timeline.transition_to_completed(self.instant, metadata.to_json_bytes())
        self.instant = self.instant.with_state(State.COMPLETED)
        try:
            self.markers.delete_all()
            write_claims.release(self.table.storage, self.table.base_path, self.instant_time)
        except Exception as e:
            # committed: a caller told otherwise would retry, and duplicate, the write; a
            # completed instant's markers and claim are never read again
            log.warning("write %s committed, but its markers or claim were not removed: %s: %s", self.instant_time, type(e).__name__, e)
        return metadata

    def _claim_commit(self) -> None:
        """Take the instant for its commit, so that no other writer can roll it back from
        here on; :class:`ConcurrentWriteError` if one already is, or did."""
        storage, base = self.table.storage, self.table.base_path
        if not write_claims.claim(storage, base, self.instant_time, write_claims.COMMIT).ours:
            raise ConcurrentWriteError(self._lost_message())  # a live writer's rollback holds it
        if not self._requested_exists():
            write_claims.release(storage, base, self.instant_time)  # rolled back before our claim
            raise ConcurrentWriteError(self._lost_message())

    def _requested_exists(self) -> bool:
        return self.table.storage.exists(self.table.timeline.instant_path(self.instant.with_state(State.REQUESTED)))

    def _refuse_conflicting_writes(self, mine: CommitMetadata) -> None:
        """:class:`ConcurrentWriteError` if a write this one did not see (completed after
        the table was loaded for it) changed a file group this one changes, or, for an
        overwrite, anything in a partition it overwrites: completing both would hide the
        other's rows behind this write's slices. With the bucket index, a bucket this one
        writes to is enough (:func:`~hoodie.index.bucket.shared_buckets`): two writes that
        each created the bucket's first file group would leave it with two, a key in each.
        A compaction this write saw pending is none: the write appended its logs to the
        slices after it (as Apache Hudi's conflict resolution lets a compaction scheduled
        before the write through)."""
        loaded = self.table.timeline
        seen = {i.timestamp for i in loaded.completed()} | {i.timestamp for i in loaded.pending([Action.COMPACTION])}
        timeline = self.table.timeline.reload()
        touched = _file_groups(mine)
        overwritten = set(mine.replaced_file_ids()) if mine.partition_to_replace_file_ids is not None else set()
        for other in timeline.completed(Action.WRITE_ACTIONS):
            if other.timestamp in seen:
                continue
            theirs = _file_groups(timeline.commit_metadata(other))
            if self.by_bucket and (buckets := shared_buckets(touched, theirs)):
                self._refuse(other, "wrote to the same buckets", [_bucket_named(p, b, ids) for p, b, ids in buckets])
            clash = sorted(touched & theirs) or sorted(g for g in theirs if g[0] in overwritten)
            if clash:
                self._refuse(other, "changed the same file groups", [relative(p, fid) for p, fid in clash])

    def _refuse(self, other: Instant, what: str, where: list[str]) -> NoReturn:
        shown = ", ".join(where[:3]) + (f" and {len(where) - 3} more" if len(where) > 3 else "")
        raise ConcurrentWriteError(
            f"write {self.instant_time} ({self.operation}) to {self.table.base_path} was not committed: write {other.timestamp} "
            f"of another writer completed while it ran and {what} ({shown}); {_ONE_WRITER}"
        )

    def lost_to_another_writer(self) -> ConcurrentWriteError | None:
        """The error to raise if another writer rolled this write back as failed (it holds
        the instant's claim, or removed the instant), else ``None``."""
        if self.instant.is_completed:
            return None
        rolled_back = write_claims.held(self.table.storage, self.table.base_path, self.instant_time) == write_claims.ROLLBACK
        return ConcurrentWriteError(self._lost_message()) if rolled_back or not self._requested_exists() else None

    def _lost_message(self) -> str:
        return (
            f"write {self.instant_time} ({self.operation}) to {self.table.base_path} was rolled back by another writer, "
            f"which found it unfinished and treated it as failed; {_ONE_WRITER}"
        )

    def abort(self) -> None:
        """Roll back a write that failed before completing (best effort; the next writer
        retries if this fails too)."""
        if self.instant.is_completed:
            return
        try:
            # the partitions it planned are listed: its inflight workload may be gone already
            self.services.roll_back(self.table.reload(), self.instant, self.partitions)
        except Exception:  # the original error matters more; the next writer rolls back
            log.exception("rollback of failed write %s did not finish", self.instant_time)
        if write_claims.held(self.table.storage, self.table.base_path, self.instant_time) == write_claims.COMMIT:
            write_claims.release(self.table.storage, self.table.base_path, self.instant_time)


# the end of every ConcurrentWriteError: why, and what became of the write
_ONE_WRITER = (
    f"a table takes one writer at a time ({CONCURRENCY_MODE.key}={SINGLE_WRITER}, the only mode hoodie supports). "
    "Nothing of this write was committed and its files were removed; run it again once the other writer is done"
)


def _bucket_named(partition: str, bucket: int | None, file_ids: tuple[str, ...]) -> str:
    groups = f"file groups {' and '.join(file_ids)}" if len(file_ids) > 1 else f"file group {file_ids[0]}"
    return f"bucket {bucket} of partition {partition!r}: {groups}" if bucket is not None else f"partition {partition!r}: {groups}"


def _file_groups(metadata: CommitMetadata) -> set[tuple[str, str]]:
    """(partition, file id) of every file group a commit wrote to or replaced."""
    groups = {(p, st.fileId) for p, stats in metadata.partition_to_write_stats.items() for st in stats}
    return groups | {(p, fid) for p, ids in metadata.replaced_file_ids().items() for fid in ids}
