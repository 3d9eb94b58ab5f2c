"""The write client: one call writes one batch as one atomic commit, in this process.

``WriteClient(path, options, services=...).write(batch)`` runs the whole upsert pipeline
(prepare, tag, plan, execute, commit) through an :class:`~hoodie.engine.Engine`; the
Spark pipeline reuses the same steps with Spark doing the shuffles. ``hoodie.write`` is
this client with hoodie's own table services.
"""
from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from hoodie.config import options as o
from hoodie.config.options import HoodieConfig
from hoodie.engine.base import Engine
from hoodie.engine.local import LocalEngine
from hoodie.errors import ConfigError
from hoodie.formats.avro_schema import arrow_to_avro_schema, avro_schema_json
from hoodie.formats.meta_columns import META_COLUMNS, data_fields
from hoodie.storage.base import Storage
from hoodie.storage.factory import normalize_path, storage_for
from hoodie.table.file_group import FileSlice
from hoodie.timeline.commit_metadata import WriteStat
from hoodie.timeline.compaction_plan import file_groups_in_pending_compaction
from hoodie.writer import pipeline
from hoodie.writer.context import WriteContext
from hoodie.writer.handles import BucketTask, group_buckets, run_bucket_group
from hoodie.writer.keygen import KeyGenerator
from hoodie.writer.partition_groups import GroupSpec, in_group_order, partition_groups, with_own_records, write_partition_group
from hoodie.writer.planner import (
    PartitionProfile,
    SizingSettings,
    WritePlan,
    average_record_size,
    build_plan,
)
from hoodie.writer.prepare import add_keys, check_ordering_field, dedupe
from hoodie.writer.schema import INTERNAL_PREFIX, normalize_batch, reconcile
from hoodie.writer.settings import PreparedWrite, WriteSettings
from hoodie.writer.table_services import TableServices
from hoodie.writer.table_setup import disable_metadata_table, open_or_create
from hoodie.writer.transaction import REPLACE_OPERATIONS, WriteTransaction

TAGGING_OPERATIONS = ("upsert", "delete")
PARTITION_PATH_COLUMN = "_hoodie_partition_path"
# Tasks a worker gets in a partition-grouped write: two, so that the workers' loads even
# out at the end (tasks end at different times) while each still holds many partitions.
_GROUPS_PER_WORKER = 2
MERGE_ON_READ = "MERGE_ON_READ"
NO_SMALL_FILE_OPERATIONS = ("bulk_insert", "insert_overwrite", "insert_overwrite_table")


def resolve_operation(config: HoodieConfig, operation: str | None) -> str:
    op = (operation or config.get(o.OPERATION) or "upsert").lower()
    o.OPERATION.convert(op)
    return op


def validate_options(config: HoodieConfig) -> None:
    if config.get(o.METADATA_ENABLE):
        raise ConfigError(f"{o.METADATA_ENABLE.key}=true is not supported yet: hoodie does not maintain the metadata table")
    if config.get(o.MARKERS_TYPE) != "DIRECT":
        raise ConfigError(f"{o.MARKERS_TYPE.key}={config.get(o.MARKERS_TYPE)} is not supported yet; use DIRECT")


def prepare_write(
    path: str,
    options: Mapping[str, Any] | None,
    operation: str | None,
    batch_schema: pa.Schema,
    storage: Storage,
    services: TableServices,
    check_new_table_batch: Callable[[KeyGenerator], None] | None = None,
) -> PreparedWrite:
    """Driver-side setup shared by every engine: table, effective config, recovery (an
    interrupted restore finished, failed writes rolled back by ``services``).

    ``check_new_table_batch`` is called with the key generator before a table that does
    not exist yet is created, so that a batch refused for its keys or partition values
    leaves no table behind (on an existing table the engine checks them before it writes).
    """
    config = HoodieConfig.of(options)
    validate_options(config)
    services.check_settings(config)
    op = resolve_operation(config, operation)
    create_schema = (
        avro_schema_json(arrow_to_avro_schema(pa.schema(data_fields(batch_schema)), config.get(o.TABLE_NAME) or "table")) if op != "delete" else None
    )

    def keygen_for_create(create_config: HoodieConfig) -> KeyGenerator:
        keygen = KeyGenerator.from_config(create_config)
        if check_new_table_batch is not None:
            check_new_table_batch(keygen)
        return keygen

    table, config = open_or_create(path, storage, config, keygen_for_create, create_schema)
    validate_options(config)
    keygen = KeyGenerator.from_config(config)
    table = services.recover(disable_metadata_table(table))
    return PreparedWrite(table, config, keygen, WriteSettings.of(config, op), services)


def table_schema_after(prepared: PreparedWrite, batch_schema: pa.Schema) -> pa.Schema:
    """The data schema the commit will record (a delete batch never changes it)."""
    current = prepared.table.data_schema()
    if prepared.settings.operation == "delete":
        if current is None:
            return pa.schema(data_fields(batch_schema))
        return current
    incoming = pa.schema([f for f in data_fields(batch_schema) if not f.name.startswith(INTERNAL_PREFIX)])
    return reconcile(current, incoming, prepared.settings.allow_column_drop)


def replaced_file_groups(prepared: PreparedWrite, partitions: list[str]) -> dict[str, list[str]] | None:
    """File groups an insert_overwrite replaces: those of the written partitions, or all."""
    op = prepared.settings.operation
    if op not in REPLACE_OPERATIONS:
        return None
    view = prepared.table.view()
    targets = view.all_partition_paths() if op == "insert_overwrite_table" else partitions
    return {p: ids for p in targets if (ids := [g.file_id for g in view.file_groups(p)])}


def uses_index(settings: WriteSettings) -> bool:
    """Whether the write looks its keys up: upsert and delete always; insert only to drop
    keys that already exist (``hoodie.datasource.write.insert.drop.duplicates``)."""
    return settings.operation in TAGGING_OPERATIONS or (settings.operation == "insert" and settings.drop_duplicates)


@dataclass(frozen=True)
class Planner:
    """Everything :func:`~hoodie.writer.planner.build_plan` needs besides the profiles and
    the latest slices, resolved once on the driver. Picklable, so that an engine task
    holding whole partitions can plan them itself (Hudi's file sizing is per partition)."""

    sizing: SizingSettings
    avg_record_size: int
    use_small_files: bool
    merge_on_read: bool
    pending_compactions: Mapping[tuple[str, str], str] | None

    def plan(self, profiles: Mapping[str, PartitionProfile], latest: Mapping[str, list[FileSlice]]) -> WritePlan:
        return build_plan(
            profiles,
            latest,
            self.sizing,
            self.avg_record_size,
            use_small_files=self.use_small_files,
            merge_on_read=self.merge_on_read,
            pending_compactions=self.pending_compactions,
        )


def planner_for(prepared: PreparedWrite) -> Planner:
    """Sizing from past commits, small files unless the operation writes new file groups
    only, merge-on-read handles and pending compactions."""
    table, s = prepared.table, prepared.settings
    merge_on_read = table.table_type == MERGE_ON_READ
    return Planner(
        s.sizing,
        average_record_size(table.timeline, s.sizing),
        use_small_files=s.operation not in NO_SMALL_FILE_OPERATIONS,
        merge_on_read=merge_on_read,
        pending_compactions=file_groups_in_pending_compaction(table.timeline) if merge_on_read else None,
    )


def make_plan(prepared: PreparedWrite, profiles: Mapping[str, PartitionProfile], latest: Mapping[str, list[FileSlice]]) -> WritePlan:
    """The write plan of all partitions (see :func:`planner_for`)."""
    return planner_for(prepared).plan(profiles, latest)


def write_context(prepared: PreparedWrite, instant: str, data_schema: pa.Schema) -> WriteContext:
    """What every write task needs, shipped once per task."""
    table, s = prepared.table, prepared.settings
    return WriteContext(
        storage=table.storage,
        base_path=table.base_path,
        instant=instant,
        data_schema=data_schema,
        ordering_field=s.ordering_field,
        parquet=s.parquet,
        bloom=s.bloom,
        avro_schema_with_meta=avro_schema_json(arrow_to_avro_schema(data_schema, table.name, include_meta_fields=True)),
        deletes_carry_ordering=s.operation != "delete",
        log_block_format=prepared.config.get(o.LOG_BLOCK_FORMAT),
    )


def workload_stats(plan: WritePlan, records_per_bucket: Mapping[int, int]) -> dict[str, list[WriteStat]]:
    """The planned workload, recorded in the inflight instant (used by rollback)."""
    out: dict[str, list[WriteStat]] = {}
    for b in plan.buckets:
        out.setdefault(b.partition_path, []).append(
            WriteStat(
                fileId=b.file_id, path="", partitionPath=b.partition_path, prevCommit=b.base_instant or "null", numWrites=records_per_bucket.get(b.bucket_id, 0)
            )
        )
    return out


class WriteClient:
    """Writes Arrow batches to a table at ``path`` with Hudi options, running the given
    table ``services`` around each write (``hoodie.write`` passes hoodie's own)."""

    def __init__(
        self, path: str, options: Mapping[str, Any] | None = None, *, services: TableServices, engine: Engine | None = None, storage: Storage | None = None
    ) -> None:
        self.path = normalize_path(path)
        self.options = dict(options or {})
        self.services = services
        self.engine = engine or LocalEngine()
        self.storage = storage or storage_for(self.path)

    def write(self, data: pa.Table | pa.RecordBatch, operation: str | None = None) -> str:
        """Write one batch as one commit; returns its instant time."""
        batch = data if isinstance(data, pa.Table) else pa.Table.from_batches([data])
        batch = normalize_batch(batch.drop_columns([c for c in META_COLUMNS if c in batch.column_names]))
        # a new table is created only for a batch whose keys and partition paths are good
        prepared = prepare_write(self.path, self.options, operation, batch.schema, self.storage, self.services, lambda keygen: add_keys(batch, keygen, False))
        s = prepared.settings
        check_ordering_field(batch, s.ordering_field, required=s.operation == "upsert" and prepared.config.has(o.PRECOMBINE_FIELD))
        data_schema = table_schema_after(prepared, batch.schema)
        # One chunk a column: the pipeline takes rows from the batch many times, and a take
        # from a column of several chunks concatenates them first, every time.
        records = add_keys(batch, prepared.keygen, is_delete=s.operation == "delete").combine_chunks()
        partitions = sorted(pc.unique(records.column(PARTITION_PATH_COLUMN)).to_pylist())
        # enough partitions for every worker to take a few whole ones through the pipeline?
        grouped = uses_index(s) and len(partitions) >= max(2, _GROUPS_PER_WORKER * self.engine.parallelism)
        if s.combine and not grouped:
            records = dedupe(records, s.ordering_field)
        txn = WriteTransaction.begin(prepared.table, s.operation, self.services)
        try:
            if grouped:
                stats, replaced = self._execute_grouped(prepared, records, partitions, txn, data_schema), None
            else:
                stats, replaced = self._execute(prepared, records, partitions, txn, data_schema)
            txn.commit(stats, data_schema, replaced)
        except BaseException:
            txn.abort()
            raise
        # the commit stands even if a service fails: the next write retries the service
        self.services.after_commit(prepared.table, prepared.config, self.engine)
        return txn.instant_time

    def _execute_grouped(
        self, prepared: PreparedWrite, records: pa.Table, partitions: list[str], txn: WriteTransaction, data_schema: pa.Schema
    ) -> list[WriteStat]:
        """A batch spanning many partitions, written by tasks that each take a group of
        whole partitions through dedupe, tagging, planning and the write handles
        (:mod:`hoodie.writer.partition_groups`). The stages of different groups overlap,
        and the steps between tagging and writing run in the tasks, not on the driver."""
        view = prepared.table.view()
        latest = {p: view.latest_slices(p) for p in partitions}
        # no plan exists before the tasks make theirs: the inflight instant names the
        # touched partitions (a rollback lists them), as Spark's partition-aligned write does
        txn.mark_inflight({p: [] for p in partitions})
        wctx = write_context(prepared, txn.instant_time, data_schema)
        spec = GroupSpec(prepared.table.storage, prepared.settings, planner_for(prepared), wctx)
        rows_by_partition = pipeline.group_indices(records.column(PARTITION_PATH_COLUMN))
        groups = partition_groups(rows_by_partition, _GROUPS_PER_WORKER * self.engine.parallelism)
        if self.engine.shares_memory:
            # tasks share this process's memory: each takes its rows of the batch itself
            run = functools.partial(write_partition_group, spec=spec, latest=latest, groups=len(groups), batch=records)
        else:
            # tasks run elsewhere: each is sent its own records, never the whole batch
            groups = with_own_records(groups, records)
            run = functools.partial(write_partition_group, spec=spec, latest=latest, groups=len(groups))
        return in_group_order(self.engine.map(run, groups, "write"))

    def _execute(
        self, prepared: PreparedWrite, records: pa.Table, partitions: list[str], txn: WriteTransaction, data_schema: pa.Schema
    ) -> tuple[list[WriteStat], dict[str, list[str]] | None]:
        s = prepared.settings
        table = prepared.table
        view = table.view()
        replaced = replaced_file_groups(prepared, partitions)
        latest = {p: ([] if replaced is not None else view.latest_slices(p)) for p in partitions}
        if uses_index(s):
            refs = {p: pipeline.file_refs(latest[p]) for p in partitions}
            records = pipeline.after_tagging(pipeline.tag_records(records, refs, table.storage, s.index, self.engine), s.operation)
        else:
            records = pipeline.tag_records(records, {}, table.storage, s.index)
        plan = make_plan(prepared, pipeline.profile(records), latest)
        buckets = pipeline.split_by_bucket(pipeline.assign_buckets(records, plan))
        txn.mark_inflight(workload_stats(plan, {b: rows.num_rows for b, rows in buckets}))
        tasks = [BucketTask(plan.bucket(b), rows) for b, rows in buckets]
        wctx = write_context(prepared, txn.instant_time, data_schema)
        # a task writes a group of buckets, sharing its per-call work (run_bucket_group)
        work = group_buckets(tasks, self.engine.parallelism)
        written = self.engine.map(functools.partial(run_bucket_group, wctx=wctx), work, "write")
        by_id = {i: stat for group, stats in zip(work, written) for i, stat in zip(group.ids, stats)}
        return [by_id[i] for i in range(len(tasks))], replaced
