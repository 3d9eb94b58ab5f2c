"""Incremental queries: the records that commits in ``(begin, end]`` inserted or updated.

For every file group a commit in the range touched, the latest slice as of ``end`` is read
and only the rows whose ``_hoodie_commit_time`` falls in the range are kept, so a record
updated several times in the range appears once, in its latest state. Deleted records do
not appear (an incremental pull is not a change log). See :mod:`hoodie.query.planner` for
which instants a range holds on v6 versus v8+ tables. Nothing here writes.

Merge-on-read slices are merged as Apache Hudi (0.15 and 1.x) merges them for an
incremental read: the latest slice as of ``end``, its base-file rows committed in the
range only, with the log blocks of the range's instants. A base row committed before the
range takes no part, even where a compaction in the range rewrote it into a newer base
file, so an update written in the range after that compaction comes back as written even
where the older version (with a higher ordering value) wins the snapshot merge. An
update that a compaction in the range folded into the base file before ``end``, and
lost there, is not in that slice, so neither Apache Hudi nor hoodie pulls it; a range
ending before that compaction does. (hudi-rs 0.5.0 merges a base file written in
the range whole and filters the rows afterwards; Apache Hudi 0.15 drops base rows by
Parquet row group, not one by one: docs/apache-hudi.md.) A base file written at or
before ``begin`` holds no row of the range and is not read at all. Deletes in the range
remove a key's in-range versions only.
"""
from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import pyarrow as pa

from hoodie.engine import Engine
from hoodie.layout import InstantTime
from hoodie.query.planner import INSTANT_TIME, IncrementalPlan, plan_incremental
from hoodie.query.reader import COMMIT_TIME_COLUMN, output_schema, project
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
    fallback: bool = False,
) -> pa.Table:
    """Records committed after ``begin`` and up to ``end`` (default: the latest commit).

    The schema is the table's latest (as for an incremental pull in Hudi), optionally
    projected to ``columns``. Raises :class:`~hoodie.errors.InstantNotFoundError` when
    ``begin`` lies before the active timeline of a table that archived instants. Damaged
    files as for :func:`~hoodie.query.snapshot.read_snapshot`. ``fallback``: a range whose
    commits were archived or cleaned reads the latest snapshot's records of the range
    (:func:`~hoodie.query.planner.plan_incremental`).
    """
    plan = plan_incremental(table, begin, end, ignore_missing_files, fallback)
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
    rows = plan.rows_in_range
    # merged slices keep their base rows of the range only (module docstring); the rest
    # (base files without logs) are filtered here
    data = read_file_slices(table, slices, full, in_range, read_columns, engine, what, ignore_corrupt_files, base_rows=rows)
    return rows.filter(data).select(wanted.names)


def range_filter(table: HoodieTable, plan: IncrementalPlan) -> InstantFilter:
    """The instants of an incremental range: completed writes in ``(begin, end]`` by
    instant time (layout 1), or exactly the range's commits (layout 2, completion time)."""
    if plan.time_basis == INSTANT_TIME:
        return InstantFilter.of_timeline(table.timeline, after=plan.begin, upto=plan.end)
    return InstantFilter.exactly(plan.commit_times)


def slices_for_range(table: HoodieTable, plan: IncrementalPlan) -> list[FileSlice]:
    """The planned slices, without the base files written at or before ``begin`` (on the
    range's time basis): none of their rows can be in the range, so they are not read."""
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
