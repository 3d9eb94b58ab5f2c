"""The write pipeline, once for every engine: one batch of records becomes one commit.

:func:`run_write` is the whole of it, on the driver. The steps and every rule about them
(which operations consult the index, when a write runs partition-aligned, which file
groups an overwrite replaces, what the inflight instant records) are written here once.
Where the records are and how they move is a :class:`RecordFlow`'s business: an Arrow
table and an :class:`~hoodie.engine.Engine` in process (:mod:`hoodie.writer.client`), a
DataFrame on Spark (:mod:`hoodie.spark.write`). A flow runs the steps of
:mod:`hoodie.writer.steps` where its records are and decides nothing else.

1. ``flow.partitions()`` — the touched partitions; a refused key or partition value
   stops the write before its instant exists.
2. ``WriteTransaction.begin``; the latest slices of the touched partitions; how the tasks
   create markers and where views come from (:func:`write_server`: a timeline server, or
   direct markers and listings).
3. Partition-aligned (the index is consulted and there are at least two partitions for
   each of the flow's tasks): the inflight instant names the partitions; every task takes
   whole partitions through dedupe, tagging, planning (Hudi sizes files per partition)
   and the write handles (``flow.write_partitions``).
4. Otherwise: ``flow.tag`` (dedupe and tag), ``flow.profiles`` (records per file group
   and inserts per partition: all the driver sees of the records), the plan, the inflight
   instant with the planned workload, ``flow.write_buckets`` (bucket assignment and the
   write handles).
5. ``txn.commit``, or on any error the flow's tasks are stopped and ``txn.abort`` rolls
   back; after the commit the table services run: a failing service does not undo the
   commit and does not fail the write (the instant is returned, the failure logged as a
   warning naming the service, the instant and the cause), so that a caller never
   retries, and duplicates, a write that committed.
"""
from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from contextlib import AbstractContextManager, suppress
from dataclasses import dataclass, replace
from typing import Generic, Protocol, TypeVar

import pyarrow as pa

from hoodie.config import options as o
from hoodie.config.options import HoodieConfig
from hoodie.engine.base import Engine
from hoodie.errors import ConcurrentWriteError, ConfigError, MetadataOutOfSyncError, TableServiceError
from hoodie.formats.avro_schema import arrow_to_avro_schema, avro_schema_json
from hoodie.index.base import FileRef
from hoodie.markers import TIMELINE_SERVER_BASED, ServerAddress, ServerClient
from hoodie.storage.base import Storage
from hoodie.table.file_group import FileSlice
from hoodie.table.fs_view import TableView
from hoodie.table.kept_listings import keep_listings, take_listings
from hoodie.table.remote_view import REMOTE_FIRST, REMOTE_ONLY, ViewSource
from hoodie.table.synced_listings import SharedListings
from hoodie.table.table import HoodieTable
from hoodie.timeline.commit_metadata import WriteStat
from hoodie.timeline.compaction_plan import file_groups_in_pending_compaction
from hoodie.writer import steps
from hoodie.writer.context import WriteContext
from hoodie.writer.partition_groups import GroupSpec
from hoodie.writer.planner import (
    PartitionProfile,
    SizingSettings,
    WritePlan,
    average_record_size,
    build_plan,
    planned_bucket_counts,
)
from hoodie.writer.settings import PreparedWrite
from hoodie.writer.table_services import RunningService
from hoodie.writer.transaction import REPLACE_OPERATIONS, WriteTransaction

log = logging.getLogger(__name__)

MERGE_ON_READ = "MERGE_ON_READ"
NO_SMALL_FILE_OPERATIONS = ("bulk_insert", "insert_overwrite", "insert_overwrite_table")
# A write runs partition-aligned when every task gets at least this many partitions: with
# two, the tasks' loads even out at the end (tasks end at different times).
PARTITIONS_PER_TASK = 2

Tagged = TypeVar("Tagged")
# Starts or reuses an embedded timeline server serving a table (base path, storage, the
# write's options), None if it cannot: given to a write by the layer that may start servers.
TimelineServerFor = Callable[[str, Storage, HoodieConfig], ServerAddress | None]


class RecordFlow(Protocol, Generic[Tagged]):
    """Where one batch's records are and how they move: the engine side of the pipeline.
    ``Tagged`` is the flow's handle on its deduped and tagged records."""

    @property
    def engine(self) -> Engine:
        """The engine the table services run on after the commit."""
        ...

    @property
    def default_markers(self) -> str:
        """The marker type when ``hoodie.write.markers.type`` is unset."""
        ...

    @property
    def views_from_server(self) -> bool:
        """Whether the write's views come from its timeline server whatever its markers
        (while ``hoodie.embed.timeline.server`` is on), not only with timeline-server
        markers or remote views asked for."""
        ...

    def timeline_server(self, prepared: PreparedWrite) -> ServerAddress | None:
        """The embedded timeline server serving the table (started or reused), or None
        when the flow has none."""
        ...

    def partitions(self) -> list[str]:
        """The partition paths the batch touches, sorted; raises for a record whose key or
        partition value is refused (before anything is written)."""
        ...

    def tasks(self) -> int:
        """How many tasks the flow spreads the records over."""
        ...

    def running(self, instant: str) -> AbstractContextManager[None]:
        """The scope of the write's tasks: on an error inside it, no task of the write is
        still running when it exits (so the rollback that follows misses no file)."""
        ...

    def write_partitions(self, spec: GroupSpec, latest: Mapping[str, list[FileSlice]]) -> list[WriteStat]:
        """Dedupe, tag, plan and write whole partitions in the tasks that hold them
        (:func:`hoodie.writer.partition_groups.plan_partitions`); the stats in the order of
        (partition, bucket)."""
        ...

    def tag(self, refs: Mapping[str, list[FileRef]]) -> Tagged:
        """The records deduped and tagged (:func:`hoodie.writer.steps.dedupe_and_tag`) with
        the latest base files ``refs`` of every touched partition (empty: no tagging)."""
        ...

    def profiles(self, tagged: Tagged) -> dict[str, PartitionProfile]:
        """Records per existing file group and inserts, per partition."""
        ...

    def write_buckets(self, tagged: Tagged, plan: WritePlan, wctx: WriteContext) -> list[WriteStat]:
        """Assign every record its bucket in ``plan`` and run the write handle of each
        bucket; the stats in bucket order."""
        ...

    def storage_calls_elsewhere(self) -> Mapping[str, int]:
        """Storage calls the flow's tasks made through storages other than the driver's
        (a Spark executor's copy), by kind; empty when they share the driver's."""
        ...


def run_write(prepared: PreparedWrite, data_schema: pa.Schema, flow: RecordFlow[Tagged]) -> str:
    """Write ``flow``'s records as one commit (see the module docstring); returns its
    instant time."""
    partitions = flow.partitions()  # a refused batch leaves no trace, not even an instant
    calls_before = prepared.table.storage.counters.snapshot()
    address = write_server(prepared, flow)
    # the write's client of its server (connections, down state, background calls) is
    # the write's: closed once the write and the services after it are done
    server = ServerClient(address) if address is not None else None
    try:
        return _write_through(prepared, data_schema, flow, partitions, calls_before, server)
    finally:
        if server is not None:
            server.close()


def _write_through(
    prepared: PreparedWrite,
    data_schema: pa.Schema,
    flow: RecordFlow[Tagged],
    partitions: list[str],
    calls_before: Counter[str],
    server: ServerClient | None,
) -> str:
    s = prepared.settings
    # the views of the write and of the services after it come from its server, or from
    # listings they share (the clean after the write does not list its partitions again)
    source = view_source(prepared, server)
    prepared = replace(prepared, table=prepared.table.served_by(source))
    txn = WriteTransaction.begin(prepared.table, s.operation, prepared.services, by_bucket=s.index.bucket is not None)
    beside: RunningService | None = None
    try:
        # (inside: a clean that cannot start fails the write, whose instant is aborted)
        beside = prepared.services.beside_write(prepared.table, prepared.config, flow.engine, txn.instant_time)
        with flow.running(txn.instant_time):
            markers = server if (prepared.config.get(o.MARKERS_TYPE) or flow.default_markers) == TIMELINE_SERVER_BASED else None
            stats, replaced = _execute(prepared, data_schema, flow, partitions, txn, markers)

            def storage_calls() -> dict[str, int]:
                # the driver's (and, in process, its tasks') calls, and those of tasks elsewhere
                driver, tasks = prepared.table.storage.counters.since(calls_before), flow.storage_calls_elsewhere()
                return {kind: n + tasks.get(kind, 0) for kind, n in driver.items()}

            txn.commit(stats, data_schema, replaced, prepared.extra_metadata, storage_calls=storage_calls)
    except BaseException as e:
        # whatever broke (a file or the instant gone from under the write), say so plainly
        # when another writer rolled it back; asked before abort removes the instant itself
        lost = None
        if isinstance(e, Exception) and not isinstance(e, ConcurrentWriteError):
            with suppress(Exception):  # a storage that fails here: the original error stands
                lost = txn.lost_to_another_writer()
        try:
            txn.abort()
        finally:
            if beside is not None:  # never left running behind a failed write
                _wait_beside_failed_write(beside, txn.instant_time)
        if lost is not None:
            raise lost from e
        raise
    _run_services_after(prepared, flow.engine, txn.instant_time, beside)
    if isinstance(source, SharedListings) and _keeps_listings(prepared):  # (a failed write's are not)
        keep_listings(prepared.table.storage, prepared.table.base_path, source)
    return txn.instant_time


def _run_services_after(prepared: PreparedWrite, engine: Engine, instant: str, beside: RunningService | None) -> None:
    """The services beside the write of ``instant`` waited for, then the inline table
    services after its commit (not after a failed one: archiving commits whose old files
    a failed clean left would leave those files to no clean)."""

    def services() -> None:
        if beside is not None:
            beside.wait()
        prepared.services.after_commit(prepared.table, prepared.config, engine, instant)

    _report_service_failure(instant, services)


def _wait_beside_failed_write(beside: RunningService, instant: str) -> None:
    """Wait for the services beside write ``instant``, which failed: their own failure is
    a warning (the write's error is the one raised), which says no commit stands."""
    try:
        beside.wait()
    except Exception as e:
        service = e.service if isinstance(e, TableServiceError) else "table services"
        cause = e.__cause__ if isinstance(e, TableServiceError) and e.__cause__ is not None else e
        log.warning("write %s failed, and the %s beside it failed too: %s: %s (the next write runs it again)", instant, service, type(cause).__name__, cause)


def _report_service_failure(instant: str, services: Callable[[], None]) -> None:
    """Run ``services`` of write ``instant``. The commit stands whatever they do: a failure
    is a warning, never the write's error, since a caller that took the write for failed
    would retry it (an insert twice is duplicate rows). The next write runs them again."""
    try:
        services()
    except Exception as e:
        error = e if isinstance(e, TableServiceError) else TableServiceError("table services", instant, e)
        log.warning("%s (the commit stands and the write succeeded; the next write runs the %s again)", error, error.service)
        log.debug("the failure of the %s after write %s", error.service, instant, exc_info=True)


def _execute(
    prepared: PreparedWrite,
    data_schema: pa.Schema,
    flow: RecordFlow[Tagged],
    partitions: list[str],
    txn: WriteTransaction,
    marker_server: ServerClient | None,
) -> tuple[list[WriteStat], dict[str, list[str]] | None]:
    s = prepared.settings
    view = prepared.table.view()
    replaced = replaced_file_groups(s.operation, view, partitions)
    planner = planner_for(prepared)
    wctx = write_context(prepared, txn.instant_time, data_schema, marker_server)
    if runs_partition_aligned(prepared, len(partitions), flow.tasks()):
        # No plan exists before the tasks make theirs: the inflight instant names the
        # touched partitions (a rollback lists them) without file groups, as Hudi's
        # bulk_insert leaves it empty.
        txn.mark_inflight({p: [] for p in partitions})
        # with a timeline server, each task asks it for the latest slices of its own partitions
        aligned: Mapping[str, list[FileSlice]] = (
            ServedLatestSlices(prepared.table, tuple(partitions)) if isinstance(prepared.table.view_source, ViewSource) and replaced is None
            else _latest(view, partitions, replaced)
        )
        return flow.write_partitions(GroupSpec(prepared.table.storage, s, planner, wctx), aligned), replaced
    latest = _latest(view, partitions, replaced)
    # a global index finds keys in any partition by itself: no base files to hand it
    refs = {p: steps.index_refs(latest[p], s.index) for p in partitions} if s.tags_records and not s.index.is_global else {}
    tagged = flow.tag(refs)
    profiles = flow.profiles(tagged)
    if s.index.is_global:
        latest = _with_located_partitions(view, latest, profiles, prepared.table.base_path)
    plan = planner.plan(profiles, latest)
    # planned counts: on an engine that keeps the records elsewhere, exact ones cost a pass
    txn.mark_inflight(workload_stats(plan, planned_bucket_counts(plan, profiles)))
    return flow.write_buckets(tagged, plan, wctx), replaced


def _with_located_partitions(
    view: TableView, latest: dict[str, list[FileSlice]], profiles: Mapping[str, PartitionProfile], base_path: str
) -> dict[str, list[FileSlice]]:
    """``latest`` plus the latest slices of the partitions a global index found keys in
    (besides those the records name), each file group it named checked to be live there:
    a record index out of step with the table is an error, never a lost update."""
    others = sorted(set(profiles) - set(latest))
    latest = {**latest, **_latest(view, others, None)} if others else latest
    for partition, profile in sorted(profiles.items()):
        live = {s.file_id for s in latest[partition]}
        missing = sorted(set(profile.updates) - live)
        if missing:
            raise MetadataOutOfSyncError(
                f"{base_path}: the record index places {sum(profile.updates[f] for f in missing)} key(s) of this write in file group(s) "
                f"{', '.join(missing)} of partition {partition!r}, which the table does not hold; rebuild the metadata table "
                "(hoodie metadata init)"
            )
    return latest


def _latest(view: TableView, partitions: list[str], replaced: dict[str, list[str]] | None) -> dict[str, list[FileSlice]]:
    # an overwrite's new file groups replace the old ones: nothing is merged into them
    if replaced is not None:
        return {p: [] for p in partitions}
    view.prefetch_latest(partitions)
    return {p: view.latest_slices(p) for p in partitions}


class ServedLatestSlices(Mapping[str, list[FileSlice]]):
    """The latest slices of ``partitions``, asked of the table's view where they are
    needed: a task asks the timeline server for its own partitions only (and builds a
    local view of just those if the server fails)."""

    def __init__(self, table: HoodieTable, partitions: tuple[str, ...]) -> None:
        self.table = table
        self.partitions = partitions
        self._view: TableView | None = None

    def __getstate__(self) -> dict[str, object]:
        return {"table": self.table, "partitions": self.partitions, "_view": None}

    def close(self) -> None:
        """End the connections of the client of the server that answers (a task's copy):
        the helper running the task calls it when the task is done."""
        source = self.table.view_source
        if isinstance(source, ViewSource):
            source.server.close()

    def __getitem__(self, partition: str) -> list[FileSlice]:
        if partition not in self.partitions:
            raise KeyError(partition)
        if self._view is None:
            self._view = self.table.view()
            # one request for all of them: far cheaper than one each, even where a task
            # writes only some (the worker keeps them for its later tasks of the write)
            self._view.prefetch_latest(self.partitions)
        return self._view.latest_slices(partition)

    def __iter__(self) -> Iterator[str]:
        return iter(self.partitions)

    def __len__(self) -> int:
        return len(self.partitions)


def write_server(prepared: PreparedWrite, flow: RecordFlow[Tagged]) -> ServerAddress | None:
    """The timeline server of the write, when its markers are timeline-server-based (asked
    for, or the flow's default) or its views remote (``hoodie.filesystem.view.type``
    REMOTE_FIRST or REMOTE_ONLY, or the flow's way): the standalone server ``hoodie.filesystem.view.remote.host``
    names, else the embedded one while ``hoodie.embed.timeline.server`` is on (as in Hudi);
    None: direct markers and local views."""
    config = prepared.config
    remote_views = config.get(o.VIEW_TYPE) in (REMOTE_FIRST, REMOTE_ONLY) or flow.views_from_server
    if (config.get(o.MARKERS_TYPE) or flow.default_markers) != TIMELINE_SERVER_BASED and not remote_views:
        return None
    if config.has(o.VIEW_REMOTE_HOST):
        host, port, token = config.get(o.VIEW_REMOTE_HOST), config.get(o.VIEW_REMOTE_PORT), config.get(o.VIEW_REMOTE_TOKEN)
        return ServerAddress.configured(host, port, token, config)
    server = flow.timeline_server(prepared) if config.get(o.EMBED_TIMELINE_SERVER) else None
    if server is None and config.get(o.VIEW_TYPE) == REMOTE_ONLY:
        raise ConfigError(f"{o.VIEW_TYPE.key}=REMOTE_ONLY needs a timeline server ({o.VIEW_REMOTE_HOST.key}, or {o.EMBED_TIMELINE_SERVER.key}=true)")
    return server


def view_source(prepared: PreparedWrite, server: ServerClient | None) -> ViewSource | SharedListings:
    """Where the write's views (and those of the services after it) come from: its
    timeline server (REMOTE_ONLY if asked for, else REMOTE_FIRST with a local view on
    failure), or without one listings the write and its services share in process: for a
    table listed through its metadata table, those the process kept from its last write
    of the table, if any (:mod:`~hoodie.table.kept_listings`)."""
    if server is None:
        if _keeps_listings(prepared):
            return take_listings(prepared.table.storage, prepared.table.base_path)
        return SharedListings(prepared.table.storage, prepared.table.base_path)
    return ViewSource(server, REMOTE_ONLY if prepared.config.get(o.VIEW_TYPE) == REMOTE_ONLY else REMOTE_FIRST)


def _keeps_listings(prepared: PreparedWrite) -> bool:
    """Whether the write's listings are kept for the process's next write of the table:
    only where its views find files in the metadata table, unchecked (listed through it,
    without ``hoodie.metadata.validate``), which kept listings synced from the commits
    replace. A table listed from storage is listed again each write, so that a write's
    view still finds a committed file gone from storage outside any commit."""
    return prepared.table.listing is not None and not prepared.config.get(o.METADATA_VALIDATE)


def runs_partition_aligned(prepared: PreparedWrite, partitions: int, tasks: int) -> bool:
    """Whether every task can take whole partitions through the pipeline: the index is
    consulted (so tagging, the costly step, runs in the tasks too) and there are at least
    :data:`PARTITIONS_PER_TASK` partitions for each task (and two in all)."""
    s = prepared.settings
    # a global index's records may belong to other partitions than they name: not aligned
    return s.tags_records and not s.index.is_global and partitions >= max(2, PARTITIONS_PER_TASK * tasks)


def replaced_file_groups(op: str, view: TableView, partitions: list[str]) -> dict[str, list[str]] | None:
    """File groups an insert_overwrite replaces: those of the written partitions, or all."""
    if op not in REPLACE_OPERATIONS:
        return None
    targets = view.all_partition_paths() if op == "insert_overwrite_table" else partitions
    return {p: ids for p in targets if (ids := [g.file_id for g in view.file_groups(p)])}


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


def write_context(prepared: PreparedWrite, instant: str, data_schema: pa.Schema, marker_server: ServerClient | None = None) -> WriteContext:
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
        marker_server=marker_server,
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
