"""Incremental queries: the records that commits in ``(begin, end]`` inserted or updated.

For every file group a commit in the range touched, the latest slice as of ``end`` is read
and only the rows whose ``_hoodie_commit_time`` falls in the range are kept, so a record
updated several times in the range appears once, in its latest state. Deleted records do
not appear (an incremental pull is not a change log). See :mod:`hoodie.query.planner` for
which instants a range holds on v6 versus v8+ tables. Nothing here writes.

Merge-on-read slices are merged as hudi-rs 0.5.0 merges them for an incremental read,
with only the log blocks of the range's instants: a slice whose base file was written
after ``begin`` merges its whole base file and the rows are then kept by commit time; a
slice whose base file is not newer than ``begin`` cannot hold a row of the range, so its
base file is not read at all and its in-range log records are merged with each other
only. The second case means a record updated in the range comes back in its latest state
*within the range* even where an older base version (with a higher ordering value) wins
the snapshot merge; in the first, that base version wins and the update is filtered out
with it. Deletes in the range remove a key's in-range versions only.
"""
from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import pyarrow as pa

from hoodie.engine import Engine
from hoodie.layout import InstantTime
from hoodie.query.planner import INSTANT_TIME, IncrementalPlan, plan_incremental
from hoodie.query.reader import (
    COMMIT_TIME_COLUMN,
    filter_commit_times,
    output_schema,
    project,
)
from hoodie.query.slices import read_file_slices
from hoodie.table.file_group import FileSlice
from hoodie.table.slice_reader.instants import InstantFilter
from hoodie.table.table import HoodieTable


def read_incremental(
    table: HoodieTable,
    begin: str,
    end: str | None = None,
    columns: Sequence[str] | None = None,
    engine: Engine | None = None,
    ignore_missing_files: bool = False,
    ignore_corrupt_files: bool = False,
) -> pa.Table:
    """Records committed after ``begin`` and up to ``end`` (default: the latest commit).

    The schema is the table's latest (as for an incremental pull in Hudi), optionally
    projected to ``columns``. Raises :class:`~hoodie.errors.InstantNotFoundError` when
    ``begin`` lies before the active timeline of a table that archived instants. Damaged
    files as for :func:`~hoodie.query.snapshot.read_snapshot`.
    """
    plan = plan_incremental(table, begin, end, ignore_missing_files)
    return read_plan(table, plan, columns, engine, ignore_corrupt_files)


def read_plan(
    table: HoodieTable,
    plan: IncrementalPlan,
    columns: Sequence[str] | None = None,
    engine: Engine | None = None,
    ignore_corrupt_files: bool = False,
) -> pa.Table:
    """Read what :func:`~hoodie.query.planner.plan_incremental` planned."""
    full = output_schema(table, None, plan.slices)
    if full is None:
        return pa.table({})
    wanted = project(full, columns)
    in_range = range_filter(table, plan)
    slices = slices_for_range(table, plan)
    what = "incremental: read file slices"
    if not plan.filter_rows:
        return read_file_slices(table, slices, full, in_range, wanted.names, engine, what, ignore_corrupt_files)
    # The commit time is needed to filter even when the caller did not ask for it.
    read_columns = wanted.names if COMMIT_TIME_COLUMN in wanted.names else [COMMIT_TIME_COLUMN, *wanted.names]
    data = read_file_slices(table, slices, full, in_range, read_columns, engine, what, ignore_corrupt_files)
    keep = None if plan.time_basis == INSTANT_TIME else plan.commit_times
    data = filter_commit_times(data, keep, after=plan.begin, upto=plan.end)
    return data.select(wanted.names)


def range_filter(table: HoodieTable, plan: IncrementalPlan) -> InstantFilter:
    """The instants of an incremental range: completed writes in ``(begin, end]`` by
    instant time (layout 1), or exactly the range's commits (layout 2, completion time)."""
    if plan.time_basis == INSTANT_TIME:
        return InstantFilter.of_timeline(table.timeline, after=plan.begin, upto=plan.end)
    return InstantFilter.exactly(plan.commit_times)


def slices_for_range(table: HoodieTable, plan: IncrementalPlan) -> list[FileSlice]:
    """The planned slices, without the base files written at or before ``begin`` (on the
    range's time basis): none of their rows can be in the range, and hudi-rs does not
    merge them with the range's log records."""
    timeline = table.timeline
    completed = {i.timestamp: i for i in timeline.completed_writes()}
    begin = InstantTime(plan.begin)

    def written(instant: str) -> InstantTime:
        inst = completed.get(instant)
        return InstantTime(timeline.completion_time(inst) if inst and plan.time_basis != INSTANT_TIME else instant)

    return [
        dataclasses.replace(s, base_file=None) if s.base_file is not None and written(s.base_instant) <= begin else s
        for s in plan.slices
    ]
