"""Incremental queries: the records that commits in ``(begin, end]`` inserted or updated.

For every file group a commit in the range touched, the latest slice as of ``end`` is read
and only the rows whose ``_hoodie_commit_time`` falls in the range are kept, so a record
updated several times in the range appears once, in its latest state. Deleted records do
not appear (an incremental pull is not a change log). See :mod:`hoodie.query.planner` for
which instants a range holds on v6 versus v8+ tables. Nothing here writes.
"""
from __future__ import annotations

from collections.abc import Sequence

import pyarrow as pa

from hoodie.engine import Engine
from hoodie.layout import compare_key
from hoodie.query.planner import INSTANT_TIME, IncrementalPlan, plan_incremental
from hoodie.query.reader import (
    COMMIT_TIME_COLUMN,
    filter_commit_times,
    output_schema,
    project,
    read_slices,
    require_base_files_only,
)
from hoodie.table.table import HoodieTable


def read_incremental(
    table: HoodieTable,
    begin: str,
    end: str | None = None,
    columns: Sequence[str] | None = None,
    engine: Engine | None = None,
) -> pa.Table:
    """Records committed after ``begin`` and up to ``end`` (default: the latest commit).

    The schema is the table's latest (as for an incremental pull in Hudi), optionally
    projected to ``columns``. Raises :class:`~hoodie.errors.InstantNotFoundError` when
    ``begin`` lies before the active timeline of a table that archived instants.
    """
    plan = plan_incremental(table, begin, end)
    return read_plan(table, plan, columns, engine)


def read_plan(
    table: HoodieTable,
    plan: IncrementalPlan,
    columns: Sequence[str] | None = None,
    engine: Engine | None = None,
) -> pa.Table:
    """Read what :func:`~hoodie.query.planner.plan_incremental` planned."""
    require_base_files_only(table, plan.slices)
    full = output_schema(table, None, plan.slices)
    if full is None:
        return pa.table({})
    wanted = project(full, columns)
    if not plan.filter_rows:
        return read_slices(table, plan.slices, wanted, engine, "incremental: read base files")
    # The commit time is needed to filter even when the caller did not ask for it.
    read_schema = wanted if COMMIT_TIME_COLUMN in wanted.names else pa.schema([full.field(COMMIT_TIME_COLUMN), *wanted])
    data = read_slices(table, plan.slices, read_schema, engine, "incremental: read base files")
    if plan.time_basis == INSTANT_TIME:
        data = filter_commit_times(data, after=compare_key(plan.begin), upto=compare_key(plan.end))
    else:
        data = filter_commit_times(data, keep=plan.commit_times)
    return data.select(wanted.names)
