"""A table's snapshot as a lazy Daft DataFrame: a Daft ``DataSource`` over
:func:`hoodie.query.dataset.open_dataset`.

Daft reads Arrow data from Python through its ``DataSource`` interface (``daft.from_arrow``
would load everything first): when a query runs, Daft asks :meth:`HoodieDaftSource.get_tasks`
with its pushdowns — the columns it needs, its filter as a Daft expression, a limit — and
runs each task's ``read``. Here a task is one piece of the dataset (a Parquet fragment, or
a merge-on-read slice with logs, merged when the task runs), scanned by Arrow with the
columns and the filter, which the fragments' partition expressions and Parquet row-group
statistics prune. Daft applies the filter again on what a task returns, so each task
returns the filter's columns too; a filter Arrow cannot express is left to Daft alone.

Only this module imports Daft; ``hoodie.to_daft`` imports it when called.
"""
from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as ds
from daft.io.pushdowns import Pushdowns
from daft.io.source import DataSource, DataSourceTask
from daft.recordbatch import RecordBatch
from daft.schema import Schema

from hoodie.query.dataset import open_dataset, pieces
from hoodie.storage.base import Storage

__all__ = ["HoodieDaftSource"]


class HoodieDaftSource(DataSource):
    """The table at ``path`` (snapshot, read-optimized, time travel or incremental, by ``options``) for
    Daft; ``filters`` as for :func:`hoodie.read` (data skipping, and every row matches)."""

    def __init__(self, path: str, options: Mapping[str, Any] | None = None, storage: Storage | None = None, filters: Sequence[Any] | None = None) -> None:
        self._path = path
        self._dataset = open_dataset(path, options, storage, filters)  # its pieces keep the filter

    @property
    def name(self) -> str:
        return f"HoodieDataSource({self._path})"

    @property
    def schema(self) -> Schema:
        return Schema.from_pyarrow_schema(self._dataset.schema)

    async def get_tasks(self, pushdowns: Pushdowns) -> AsyncIterator[DataSourceTask]:
        arrow_schema = self._dataset.schema
        wanted = set(pushdowns.columns) | pushdowns.filter_required_column_names() if pushdowns.columns is not None else None
        columns = [n for n in arrow_schema.names if wanted is None or n in wanted]
        projected = pa.schema([arrow_schema.field(n) for n in columns])
        arrow_filter = _arrow_filter(pushdowns)
        for piece in pieces(self._dataset, arrow_filter):
            yield PieceTask(piece, columns, arrow_filter, pushdowns.limit, projected)


def _arrow_filter(pushdowns: Pushdowns) -> pc.Expression | None:
    """Daft's filter as Arrow's (``None`` when Arrow cannot express it)."""
    if pushdowns.filters is None:
        return None
    try:
        return pushdowns.filters.to_arrow_expr()
    except (NotImplementedError, ValueError, TypeError, pa.ArrowException):
        return None  # Daft filters what the tasks return anyway


@dataclass
class PieceTask(DataSourceTask):
    """One piece of the dataset, scanned with the query's columns and filter; picklable,
    so Daft's distributed runners can ship it."""

    piece: ds.Dataset
    columns: list[str]
    filter: pc.Expression | None
    limit: int | None
    arrow_schema: pa.Schema

    @property
    def schema(self) -> Schema:
        return Schema.from_pyarrow_schema(self.arrow_schema)

    async def read(self) -> AsyncIterator[RecordBatch]:
        batches = self._batches()
        while (batch := await asyncio.to_thread(next, batches, None)) is not None:
            yield RecordBatch.from_arrow_record_batches([batch], self.arrow_schema)

    def _batches(self) -> Iterator[pa.RecordBatch]:
        left = self.limit
        for batch in self.piece.scanner(columns=self.columns, filter=self.filter).to_batches():
            if left is not None:
                if left <= 0:
                    return
                batch = batch.slice(0, left)
                left -= batch.num_rows
            if batch.num_rows:
                yield batch
