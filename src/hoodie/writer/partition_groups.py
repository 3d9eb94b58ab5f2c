"""Write-client batches spanning many partitions: each engine task takes a group of whole
partitions through the whole pipeline (dedupe, tag, plan, bucket, write).

Hudi sizes files per partition, so the plan a task makes for its partitions is the plan
the driver would make for them. The pipeline steps (:mod:`hoodie.writer.pipeline`) run
once per group, on all its partitions at once, so their per-call costs are paid a few
times, not once per partition; and nothing waits between tagging and writing for every
partition of the batch to be tagged, or runs on the whole batch on the driver.

Buckets get ids unique across the write, ``<id in the group's plan> * <groups> +
<group>``, for write tokens and sequence numbers. This module plans and buckets; the
write handles (:mod:`hoodie.writer.handles`) write.
"""
from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np
import pyarrow as pa

from hoodie.engine.base import TaskContext
from hoodie.index.base import IndexSettings
from hoodie.storage.base import Storage
from hoodie.table.file_group import FileSlice
from hoodie.timeline.commit_metadata import WriteStat
from hoodie.writer import pipeline
from hoodie.writer.handles import BucketGroup, BucketTask, WriteContext, run_bucket_group
from hoodie.writer.planner import PartitionProfile, WritePlan
from hoodie.writer.prepare import dedupe
from hoodie.writer.schema import BUCKET_COLUMN


class PartitionPlanner(Protocol):
    def plan(self, profiles: Mapping[str, PartitionProfile], latest: Mapping[str, list[FileSlice]]) -> WritePlan: ...


@dataclass(frozen=True)
class GroupSpec:
    """What every group task does, resolved on the driver: dedupe by ``ordering_field``
    (when ``combine``), tag with ``index``, drop what ``operation`` need not write, plan
    with ``planner`` and write with ``wctx``."""

    storage: Storage
    operation: str
    combine: bool
    ordering_field: str | None
    index: IndexSettings
    planner: PartitionPlanner
    wctx: WriteContext


@dataclass(frozen=True)
class PartitionGroup:
    """The partitions one task writes: the batch rows of them all (in input order), and,
    for an engine whose tasks do not share the driver's memory, those rows themselves
    (so a task receives its own records, not the whole batch)."""

    number: int
    partitions: tuple[str, ...]
    rows: np.ndarray
    records: pa.Table | None = None


def partition_groups(rows_by_partition: Mapping[str, np.ndarray], groups: int) -> list[PartitionGroup]:
    """The partitions dealt into at most ``groups`` groups of about as many records each:
    largest partition first, each to the group with the fewest records so far. A group's
    rows keep the batch's order (dedupe keeps the later of two equal records)."""
    n = max(1, min(groups, len(rows_by_partition)))
    members: list[list[str]] = [[] for _ in range(n)]
    loads = [0] * n
    for p in sorted(rows_by_partition, key=lambda p: (-len(rows_by_partition[p]), p)):
        g = loads.index(min(loads))
        members[g].append(p)
        loads[g] += len(rows_by_partition[p])
    out = []
    for g, parts in enumerate(m for m in members if m):
        rows = np.sort(np.concatenate([rows_by_partition[p] for p in parts]))
        out.append(PartitionGroup(g, tuple(sorted(parts)), rows))
    return out


def with_own_records(groups: list[PartitionGroup], records: pa.Table) -> list[PartitionGroup]:
    """The groups carrying their rows of ``records``, for tasks that run elsewhere."""
    return [dataclasses.replace(g, records=records.take(pa.array(g.rows))) for g in groups]


def write_partition_group(
    group: PartitionGroup,
    ctx: TaskContext,
    spec: GroupSpec,
    latest: Mapping[str, list[FileSlice]],
    groups: int,
    batch: pa.Table | None = None,
) -> list[tuple[tuple[int, int], WriteStat]]:
    """Dedupe, tag, plan and write a group's partitions: its own records, or its rows of
    ``batch`` (the whole keyed batch, shared in memory; the rows are taken here, in the
    task). Returns each written bucket's stat keyed by (group, id in the group's plan)."""
    if group.records is not None:
        mine = group.records
    elif batch is not None:
        mine = batch.take(pa.array(group.rows))
    else:
        raise ValueError(f"partition group {group.number} has neither its records nor a batch to take them from")
    if spec.combine:
        mine = dedupe(mine, spec.ordering_field)
    refs = {p: pipeline.file_refs(latest[p]) for p in group.partitions}
    mine = pipeline.after_tagging(pipeline.tag_records(mine, refs, spec.storage, spec.index), spec.operation)
    if mine.num_rows == 0:
        return []
    plan = spec.planner.plan(pipeline.profile(mine), {p: latest[p] for p in group.partitions})
    mine = pipeline.assign_buckets(mine, plan)
    order = sorted(pipeline.group_indices(mine.column(BUCKET_COLUMN)).items())
    # one take in bucket order, then zero-copy slices: cheaper than a take per bucket
    ordered = mine.take(pa.array(np.concatenate([idx for _, idx in order])))
    tasks, ids, offset = [], [], 0
    for local_id, idx in order:
        tasks.append(BucketTask(plan.bucket(int(local_id)), ordered.slice(offset, len(idx))))
        ids.append(int(local_id) * groups + group.number)
        offset += len(idx)
    stats = run_bucket_group(BucketGroup(tuple(tasks), tuple(ids)), ctx, spec.wctx)
    return [((group.number, int(local_id)), stat) for (local_id, _), stat in zip(order, stats)]


def in_group_order(results: Sequence[list[tuple[tuple[int, int], WriteStat]]]) -> list[WriteStat]:
    """The stats of every task, by group, then bucket id."""
    return [stat for _, stat in sorted((entry for r in results for entry in r), key=lambda e: e[0])]
