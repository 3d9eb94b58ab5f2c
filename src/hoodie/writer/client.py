"""The write client: one call writes one Arrow batch as one atomic commit, from this process.

``WriteClient(path, options, services=...).write(batch)`` prepares the write and runs the
pipeline (:func:`hoodie.writer.pipeline.run_write`) with an :class:`ArrowRecordFlow`: the
batch stays an Arrow table in this process and the steps run as tasks of an
:class:`~hoodie.engine.Engine` (threads by default). ``hoodie.write`` is this client with
hoodie's own table services. What runs where is decided here; what is done is the
pipeline's.
"""
from __future__ import annotations

import functools
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from hoodie.config import options as o
from hoodie.engine.base import Engine
from hoodie.engine.local import LocalEngine
from hoodie.formats.meta_columns import META_COLUMNS
from hoodie.formats.meta_columns import PARTITION_PATH as PARTITION_PATH_COLUMN
from hoodie.index.base import FileRef
from hoodie.markers import DIRECT, ServerAddress
from hoodie.storage.base import Storage
from hoodie.storage.factory import normalize_path, storage_for
from hoodie.table.file_group import FileSlice
from hoodie.timeline.commit_metadata import WriteStat
from hoodie.writer import steps
from hoodie.writer.context import WriteContext
from hoodie.writer.handles import BucketTask, group_buckets, run_bucket_group
from hoodie.writer.partition_groups import GroupSpec, in_group_order, partition_groups, with_own_records, write_partition_group
from hoodie.writer.pipeline import PARTITIONS_PER_TASK, TimelineServerFor, run_write
from hoodie.writer.planner import PartitionProfile, WritePlan
from hoodie.writer.prepare import add_keys, check_ordering_field
from hoodie.writer.schema import normalize_batch
from hoodie.writer.settings import PreparedWrite
from hoodie.writer.table_services import TableServices
from hoodie.writer.table_setup import prepare_write, table_schema_after


class WriteClient:
    """Writes Arrow batches to a table at ``path`` with Hudi options, running the given
    table ``services`` around each write (``hoodie.write`` passes hoodie's own)."""

    def __init__(
        self,
        path: str,
        options: Mapping[str, Any] | None = None,
        *,
        services: TableServices,
        engine: Engine | None = None,
        storage: Storage | None = None,
        timeline_server: TimelineServerFor | None = None,
    ) -> None:
        self.path = normalize_path(path)
        self.options = dict(options or {})
        self.services = services
        self.engine = engine or LocalEngine()
        self.storage = storage or storage_for(self.path)
        self.timeline_server = timeline_server

    def write(self, data: pa.Table | pa.RecordBatch, operation: str | None = None, *, extra_metadata: Mapping[str, str] | None = None) -> str:
        """Write one batch as one commit; returns its instant time. ``extra_metadata`` goes
        into the commit's extraMetadata, with the options prefixed by
        ``hoodie.datasource.write.commitmeta.key.prefix``."""
        batch = data if isinstance(data, pa.Table) else pa.Table.from_batches([data])
        batch = normalize_batch(batch.drop_columns([c for c in META_COLUMNS if c in batch.column_names]))
        # a new table is created only for a batch whose keys and partition paths are good
        prepared = prepare_write(
            self.path, self.options, operation, batch.schema, self.storage, self.services, lambda keygen: add_keys(batch, keygen, False), extra_metadata
        )
        s = prepared.settings
        check_ordering_field(batch, s.ordering_field, required=s.operation == "upsert" and prepared.config.has(o.PRECOMBINE_FIELD))
        data_schema = table_schema_after(prepared, batch.schema)
        return run_write(prepared, data_schema, ArrowRecordFlow(prepared, batch, self.engine, self.timeline_server))


class ArrowRecordFlow:
    """The pipeline's records as one Arrow table in this process, its steps run as tasks
    of ``engine`` (:class:`~hoodie.writer.pipeline.RecordFlow`)."""

    default_markers = DIRECT
    views_from_server = False  # one process: a server would only add requests

    def __init__(self, prepared: PreparedWrite, batch: pa.Table, engine: Engine, timeline_server: TimelineServerFor | None = None) -> None:
        self.prepared = prepared
        self.batch = batch
        self._engine = engine
        self._timeline_server = timeline_server
        self._records: pa.Table | None = None

    @property
    def engine(self) -> Engine:
        return self._engine

    def timeline_server(self, prepared: PreparedWrite) -> ServerAddress | None:
        if self._timeline_server is None:
            return None
        return self._timeline_server(prepared.table.base_path, prepared.table.storage, prepared.config)

    @property
    def records(self) -> pa.Table:
        """The batch with its keys, partition paths and delete flags (computed once)."""
        if self._records is None:
            # One chunk a column: the steps take rows from the batch many times, and a take
            # from a column of several chunks concatenates them first, every time.
            is_delete = self.prepared.settings.operation == "delete"
            self._records = add_keys(self.batch, self.prepared.keygen, is_delete=is_delete).combine_chunks()
        return self._records

    def partitions(self) -> list[str]:
        return sorted(pc.unique(self.records.column(PARTITION_PATH_COLUMN)).to_pylist())

    def tasks(self) -> int:
        return self._engine.parallelism

    @contextmanager
    def running(self, instant: str) -> Iterator[None]:
        yield  # the engine's map returns only once all of its tasks have ended

    def write_partitions(self, spec: GroupSpec, latest: Mapping[str, list[FileSlice]]) -> list[WriteStat]:
        """Partition groups (:mod:`hoodie.writer.partition_groups`): the stages of
        different groups overlap, and nothing between tagging and writing runs on the
        driver."""
        records = self.records
        rows_by_partition = steps.group_indices(records.column(PARTITION_PATH_COLUMN))
        groups = partition_groups(rows_by_partition, PARTITIONS_PER_TASK * self._engine.parallelism)
        if self._engine.shares_memory:
            # tasks share this process's memory: each takes its rows of the batch itself
            run = functools.partial(write_partition_group, spec=spec, latest=latest, groups=len(groups), batch=records)
        else:
            # tasks run elsewhere: each is sent its own records, never the whole batch
            groups = with_own_records(groups, records)
            run = functools.partial(write_partition_group, spec=spec, latest=latest, groups=len(groups))
        return in_group_order(self._engine.map(run, groups, "write"))

    def tag(self, refs: Mapping[str, list[FileRef]]) -> pa.Table:
        return steps.dedupe_and_tag(self.records, refs, self.prepared.table.storage, self.prepared.settings, self._engine)

    def profiles(self, tagged: pa.Table) -> dict[str, PartitionProfile]:
        return steps.profile(tagged)

    def storage_calls_elsewhere(self) -> Mapping[str, int]:
        return {}  # the engine's tasks are threads using the driver's storage

    def write_buckets(self, tagged: pa.Table, plan: WritePlan, wctx: WriteContext) -> list[WriteStat]:
        buckets = steps.split_by_bucket(steps.assign_buckets(tagged, plan))
        tasks = [BucketTask(plan.bucket(b), rows) for b, rows in buckets]
        # a task writes a group of buckets, sharing its per-call work (run_bucket_group)
        work = group_buckets(tasks, self._engine.parallelism)
        written = self._engine.map(functools.partial(run_bucket_group, wctx=wctx), work, "write")
        by_id = {i: stat for group, stats in zip(work, written) for i, stat in zip(group.ids, stats)}
        return [by_id[i] for i in range(len(tasks))]
