"""Partition-aligned writes: a task takes whole partitions through dedupe, tagging,
planning and the write handles (:func:`plan_partitions`, which Spark's partition-aligned
tasks run too); in process, the partitions are dealt into groups, one per engine task.

Hudi sizes files per partition, so the plan a task makes for its partitions is the plan
the driver would make for them. The write steps (:mod:`hoodie.writer.steps`) run
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
from hoodie.storage.base import Storage
from hoodie.table.file_group import FileSlice
from hoodie.timeline.commit_metadata import WriteStat
from hoodie.writer import steps
from hoodie.writer.context import WriteContext
from hoodie.writer.handles import BucketGroup, BucketTask, run_bucket_group
from hoodie.writer.planner import PartitionProfile, WritePlan
from hoodie.writer.schema import DELETE_COLUMN, consecutive_slices
from hoodie.writer.settings import WriteSettings


class PartitionPlanner(Protocol):
    def plan(self, profiles: Mapping[str, PartitionProfile], latest: Mapping[str, list[FileSlice]]) -> WritePlan: ...


@dataclass(frozen=True)
class GroupSpec:
    """What a task holding whole partitions does with their records, resolved on the
    driver: dedupe and tag them as ``settings`` say, plan them with ``planner`` and write
    them with ``wctx``."""

    storage: Storage
    settings: WriteSettings
    planner: PartitionPlanner
    wctx: WriteContext


def plan_partitions(
    records: pa.Table, partitions: Sequence[str], latest: Mapping[str, list[FileSlice]], spec: GroupSpec
) -> tuple[WritePlan | None, list[tuple[int, pa.Table]]]:
    """Dedupe, tag and plan the records of whole ``partitions`` (keyed, in input order):
    the plan and each bucket's records by id in it, or (None, []) when nothing is left to
    write. Spark's partition-aligned tasks run it one partition at a time."""
    refs = {p: steps.index_refs(latest[p], spec.settings.index) for p in partitions}
    records = steps.dedupe_and_tag(records, refs, spec.storage, spec.settings)
    if records.num_rows == 0:
        return None, []
    plan = spec.planner.plan(steps.profile(records), {p: latest[p] for p in partitions})
    return plan, steps.split_by_bucket(steps.assign_buckets(records, plan))


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
        source, rows = group.records, np.arange(group.records.num_rows)
    elif batch is not None:
        source, rows = batch, group.rows
    else:
        raise ValueError(f"partition group {group.number} has neither its records nor a batch to take them from")
    # Dedupe, tagging and planning read a few columns: they run on those alone, and the
    # whole rows are taken once, in bucket order (one copy of the data instead of two).
    plan, narrow_buckets = plan_partitions(_narrow(source, rows, spec.settings.ordering_field), group.partitions, latest, spec)
    if plan is None:
        return []
    buckets = _with_whole_rows(narrow_buckets, source)
    tasks = tuple(BucketTask(plan.bucket(local_id), rows) for local_id, rows in buckets)
    ids = tuple(local_id * groups + group.number for local_id, _ in buckets)
    stats = run_bucket_group(BucketGroup(tasks, ids), ctx, spec.wctx)
    return [((group.number, local_id), stat) for (local_id, _), stat in zip(buckets, stats)]


# The position of each row of a narrow table in the table it was taken from.
_SOURCE_ROW = "__hoodie_source_row"


def _narrow(source: pa.Table, rows: np.ndarray, ordering_field: str | None) -> pa.Table:
    """The ``rows`` of ``source`` with only the columns dedupe, tagging and planning read
    (key, partition path, delete flag, ordering field), and each row's position in
    ``source``."""
    names = ["_hoodie_record_key", "_hoodie_partition_path", DELETE_COLUMN]
    if ordering_field is not None and ordering_field in source.column_names:
        names.append(ordering_field)
    at = pa.array(rows)
    return source.select(names).take(at).append_column(_SOURCE_ROW, at)


def _with_whole_rows(buckets: list[tuple[int, pa.Table]], source: pa.Table) -> list[tuple[int, pa.Table]]:
    """The buckets of narrow rows as whole rows of ``source`` (one take, in bucket order)
    followed by the columns planning added (file id and base instant): what
    :func:`plan_partitions` would have returned for the whole rows."""
    ordered = pa.concat_tables([rows for _, rows in buckets])
    whole = source.take(ordered.column(_SOURCE_ROW).combine_chunks())  # flat indices: twice as fast as chunked
    for name in ordered.column_names:
        if name not in source.column_names and name != _SOURCE_ROW:
            whole = whole.append_column(name, ordered.column(name))
    return list(zip([b for b, _ in buckets], consecutive_slices(whole, [rows.num_rows for _, rows in buckets])))


def in_group_order(results: Sequence[list[tuple[tuple[int, int], WriteStat]]]) -> list[WriteStat]:
    """The stats of every task, by group, then bucket id."""
    return [stat for _, stat in sorted((entry for r in results for entry in r), key=lambda e: e[0])]
