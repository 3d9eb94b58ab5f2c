"""Workload profile and partitioner: turn tagged records into a :class:`WritePlan`.

Updates (and deletes) go to the file group that holds their key (with the bucket index,
to their bucket's group, which the plan creates for a bucket that has none). Inserts first fill the
partition's small files (base files below ``hoodie.parquet.small.file.limit``) up to
``hoodie.parquet.max.file.size``, then new file groups sized from the average record
size of past commits. Which insert goes to which bucket is a pure function of its key
(:func:`assign_insert_buckets`), so every engine task can compute it on its own.
"""
from __future__ import annotations

import math
import zlib
from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa

from hoodie.index.bucket import bucket_file_id, placeholder_bucket
from hoodie.layout import new_file_id
from hoodie.table.file_group import FileSlice
from hoodie.timeline.active import ActiveTimeline
from hoodie.timeline.commit_metadata import CommitMetadata

CREATE, MERGE, APPEND = "create", "merge", "append"


@dataclass(frozen=True)
class Bucket:
    """One unit of write work: a file group to create, merge into (a new base file) or
    append to (a new log file on its latest slice, merge-on-read)."""

    bucket_id: int
    partition_path: str
    file_id: str
    base_instant: str | None  # None: a new file group
    base_path: str | None  # the latest base file to merge with
    handle: str = CREATE
    next_log_version: int = 1  # for APPEND: the version of the log file to create

    @property
    def is_new(self) -> bool:
        return self.base_instant is None


@dataclass(frozen=True)
class InsertTargets:
    """Where a partition's inserts go: bucket ids with cumulative weights in (0, 1]."""

    bucket_ids: tuple[int, ...]
    cumulative: tuple[float, ...]


@dataclass(frozen=True)
class PartitionProfile:
    """What a batch does to one partition."""

    updates: Mapping[str, int] = field(default_factory=dict)  # file id -> records
    inserts: int = 0


@dataclass(frozen=True)
class SizingSettings:
    small_file_limit: int = 104857600
    max_file_size: int = 125829120
    record_size_estimate: int = 1024
    auto_split: bool = True
    insert_split_size: int = 500000
    estimation_threshold: float = 1.0


@dataclass(frozen=True)
class WritePlan:
    buckets: tuple[Bucket, ...]
    update_bucket: Mapping[tuple[str, str], int]  # (partition, file id) -> bucket id
    insert_targets: Mapping[str, InsertTargets]  # partition -> targets
    avg_record_size: int

    def bucket(self, bucket_id: int) -> Bucket:
        return self.buckets[bucket_id]


def average_record_size(timeline: ActiveTimeline, settings: SizingSettings, max_commits: int = 10) -> int:
    """Average bytes per record of the latest big-enough commit (Hudi's estimate)."""
    threshold = settings.small_file_limit * settings.estimation_threshold
    for inst in list(reversed(timeline.completed_writes()))[:max_commits]:
        meta: CommitMetadata = timeline.commit_metadata(inst)
        totals = meta.totals()
        if totals["writes"] > 0 and totals["bytes"] > threshold:
            return max(1, math.ceil(totals["bytes"] / totals["writes"]))
    return max(1, settings.record_size_estimate)


def build_plan(
    profiles: Mapping[str, PartitionProfile],
    latest_slices: Mapping[str, list[FileSlice]],
    settings: SizingSettings,
    avg_record_size: int,
    use_small_files: bool = True,
    merge_on_read: bool = False,
    pending_compactions: Mapping[tuple[str, str], str] | None = None,
) -> WritePlan:
    """Assign updates to their file groups and inserts to small files, then new groups.

    Merge-on-read: updates and deletes append a log file to their group's latest slice;
    only slices without log files count as small files (the bloom index sees base files
    only, so an insert must land in a base file), and a small file that receives inserts
    is merged into a new base file, as Hudi does. A file group with a pending compaction
    at instant T takes its updates as logs of the slice T starts (``.<fileId>_T.log.N``),
    and never takes inserts: its base file is being rewritten.
    """
    pending = pending_compactions or {}
    buckets: list[Bucket] = []
    update_bucket: dict[tuple[str, str], int] = {}
    insert_targets: dict[str, InsertTargets] = {}
    for partition in sorted(profiles):
        profile = profiles[partition]
        slices = {s.file_id: s for s in latest_slices.get(partition, [])}
        for file_id in sorted(profile.updates):
            update_bucket[(partition, file_id)] = len(buckets)
            new_bucket = placeholder_bucket(file_id) if file_id not in slices else None
            if new_bucket is not None:  # the bucket index's records of a bucket without a file group
                buckets.append(Bucket(len(buckets), partition, bucket_file_id(new_bucket), None, None))
                continue
            s = slices[file_id]
            buckets.append(_existing_bucket(len(buckets), s, APPEND if merge_on_read else MERGE, pending.get((partition, file_id))))
        remaining = profile.inserts
        if remaining <= 0:
            continue
        ids: list[int] = []
        counts: list[int] = []
        if use_small_files and settings.small_file_limit > 0:
            for s in sorted(slices.values(), key=lambda x: x.total_size):
                if remaining <= 0:
                    break
                if s.base_file is None or s.total_size >= settings.small_file_limit or (merge_on_read and s.log_files):
                    continue
                if (partition, s.file_id) in pending:
                    continue
                capacity = (settings.max_file_size - s.total_size) // avg_record_size
                if capacity <= 0:
                    continue
                take = min(capacity, remaining)
                key = (partition, s.file_id)
                if key not in update_bucket:
                    update_bucket[key] = len(buckets)
                    buckets.append(_existing_bucket(len(buckets), s, MERGE))
                elif buckets[update_bucket[key]].handle == APPEND:  # inserts go to a new base file
                    buckets[update_bucket[key]] = _existing_bucket(update_bucket[key], s, MERGE)
                ids.append(update_bucket[key])
                counts.append(take)
                remaining -= take
        if remaining > 0:
            per_bucket = max(1, settings.max_file_size // avg_record_size) if settings.auto_split else max(1, settings.insert_split_size)
            n_new = math.ceil(remaining / per_bucket)
            for k in range(n_new):
                take = min(per_bucket, remaining - k * per_bucket)
                ids.append(len(buckets))
                counts.append(take)
                buckets.append(Bucket(len(buckets), partition, new_file_id(), None, None))
        total = sum(counts)
        cumulative = tuple(float(c) for c in np.cumsum(counts) / total)
        insert_targets[partition] = InsertTargets(tuple(ids), cumulative[:-1] + (1.0,))
    return WritePlan(tuple(buckets), update_bucket, insert_targets, avg_record_size)


def _existing_bucket(bucket_id: int, s: FileSlice, handle: str, compaction_instant: str | None = None) -> Bucket:
    """A bucket on an existing file group; logs go to the slice a pending compaction opens."""
    log_base = compaction_instant or s.base_instant
    next_version = max((lf.name.version for lf in s.log_files if lf.name.instant == log_base), default=0) + 1
    base_path = s.base_file.path if s.base_file else None
    return Bucket(bucket_id, s.partition_path, s.file_id, log_base, base_path, handle, next_version)


def key_fractions(keys: pa.Array) -> np.ndarray:
    """A stable, uniform number in [0, 1) per key (CRC-32 of its UTF-8 bytes)."""
    return np.fromiter((zlib.crc32(k.encode("utf-8")) for k in keys.to_pylist()), dtype=np.float64, count=len(keys)) / 4294967296.0


def assign_insert_buckets(keys: pa.Array, targets: InsertTargets) -> np.ndarray:
    """Bucket id for each insert key of one partition, spread by the targets' weights."""
    if len(targets.bucket_ids) == 1:
        return np.full(len(keys), targets.bucket_ids[0], dtype=np.int32)
    slot = np.searchsorted(np.asarray(targets.cumulative), key_fractions(keys), side="right")
    slot = np.minimum(slot, len(targets.bucket_ids) - 1)
    return np.asarray(targets.bucket_ids, dtype=np.int32)[slot]


def planned_bucket_counts(plan: WritePlan, profiles: Mapping[str, PartitionProfile]) -> dict[int, int]:
    """Records each bucket is expected to get: exact for file groups taking updates, the
    planned share of the partition's inserts for insert targets."""
    counts: dict[int, int] = {}
    for (partition, file_id), bucket_id in plan.update_bucket.items():
        counts[bucket_id] = profiles.get(partition, PartitionProfile()).updates.get(file_id, 0)
    for partition, targets in plan.insert_targets.items():
        inserts = profiles.get(partition, PartitionProfile()).inserts
        previous = 0.0
        for bucket_id, upto in zip(targets.bucket_ids, targets.cumulative):
            counts[bucket_id] = counts.get(bucket_id, 0) + round(inserts * (upto - previous))
            previous = upto
    return counts
