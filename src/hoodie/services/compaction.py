"""Compaction of merge-on-read tables: merge a file slice's base file and log files into a
new base file, opening a new slice.

``plan_compaction`` is pure: it says which slices a strategy picks, or why nothing should
run. ``schedule_compaction`` saves the plan as ``<t>.compaction.requested``;
``run_compaction`` executes a pending plan through an Engine (a few slices a task, their
logs decoded together, while every worker keeps several tasks) and completes it as
``<t>.commit``. Writers keep appending meanwhile: logs for a file group
under compaction go to the slice the compaction opens. A compaction that failed midway
is rolled back by a rollback instant (the files its markers name deleted, logs left
alone) to its requested state, and run again under the same instant, as Hudi does.
"""
from __future__ import annotations

import functools
import importlib
import time
from collections.abc import Callable, Mapping
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from typing import Protocol

import pyarrow as pa
import pyarrow.compute as pc

from hoodie.engine.base import Engine, TaskContext
from hoodie.engine.local import LocalEngine
from hoodie.engine.runs import grouped_runs
from hoodie.errors import ConfigError, TimelineError
from hoodie.formats.avro_schema import arrow_to_avro_schema, avro_schema_json
from hoodie.formats.bloom import BloomFilter, new_bloom_filter
from hoodie.formats.bloom_footer import EncodedBloomFilter, FooterIndex, filter_for_rewrite
from hoodie.formats.meta_columns import constant_column
from hoodie.formats.parquet import BloomSettings, ParquetSettings, read_record_keys, write_base_file
from hoodie.layout import InstantTime, base_file_name
from hoodie.markers import DirectMarkers
from hoodie.services.rollback import rollback_compaction_attempt
from hoodie.storage.base import Storage
from hoodie.storage.paths import relative, under
from hoodie.table.committed import paths_completed_writes_name
from hoodie.table.file_group import FileSlice, LogExtent
from hoodie.table.slice_reader.for_compaction import committed_log_extents, compaction_merge_inputs, merge_slices_for_compaction
from hoodie.table.slice_reader.instants import InstantFilter
from hoodie.table.slice_reader.merge import GROUP_LOG_BYTES, GROUP_SLICES, TASKS_PER_WORKER, MergedSlice
from hoodie.table.slice_reader.merge_rules import MergeConfig
from hoodie.table.table import HoodieTable
from hoodie.timeline.commit_metadata import CommitMetadata, RuntimeStats, WriteStat
from hoodie.timeline.compaction_plan import CompactionOperation, CompactionPlan, file_groups_in_pending_compaction, pending_plans
from hoodie.timeline.instant import Action, Instant, State

LOG_SIZE_STRATEGY = "org.apache.hudi.table.action.compact.strategy.LogFileSizeBasedCompactionStrategy"
UNBOUNDED_STRATEGY = "org.apache.hudi.table.action.compact.strategy.UnBoundedCompactionStrategy"


class CompactionStrategy(Protocol):
    """Which of the slices with log files a compaction takes (``hoodie.compaction.strategy``).

    ``select`` gets every candidate (slices with log files and a base file, outside any
    pending compaction) and returns the ones to compact, in plan order, and the reason
    ``hoodie explain`` shows. It runs on the driver while planning and must not write."""

    def select(self, candidates: list[CompactionOperation], settings: CompactionSettings) -> tuple[list[CompactionOperation], str]: ...


class LogFileSizeBasedStrategy:
    """Hudi's default: the slices with the most log data first, until the run's IO
    (``TOTAL_IO_MB``: logs and base read, base written) reaches
    ``hoodie.compaction.target.io``; like Hudi's bounded-IO strategy, the slice that
    reaches the budget is still taken."""

    def select(self, candidates: list[CompactionOperation], settings: CompactionSettings) -> tuple[list[CompactionOperation], str]:
        chosen, io = [], 0.0
        for op in sorted(candidates, key=lambda op: -op.log_bytes):
            chosen.append(op)
            io += op.metrics["TOTAL_IO_MB"]
            if io >= settings.target_io_mb:
                break
        return chosen, f"{len(chosen)} slices with the most log data, {io:.1f} MB of IO (target {settings.target_io_mb} MB)"


class UnboundedStrategy:
    """Every slice with log files."""

    def select(self, candidates: list[CompactionOperation], settings: CompactionSettings) -> tuple[list[CompactionOperation], str]:
        return list(candidates), f"all {len(candidates)} slices with log files"


_STRATEGIES: dict[str, CompactionStrategy] = {LOG_SIZE_STRATEGY: LogFileSizeBasedStrategy(), UNBOUNDED_STRATEGY: UnboundedStrategy()}


def register_compaction_strategy(name: str, strategy: CompactionStrategy) -> None:
    """Make ``strategy`` available as ``hoodie.compaction.strategy=<name>``."""
    if not callable(getattr(strategy, "select", None)):
        raise ConfigError(f"compaction strategy {name!r} has no select(candidates, settings) method")
    _STRATEGIES[name] = strategy


def compaction_strategy(name: str) -> CompactionStrategy:
    """The strategy ``hoodie.compaction.strategy`` names: a registered name (Hudi's two
    class names are built in), or the import path of a class with a ``select`` method
    (``package.module.ClassName``), instantiated without arguments, as Hudi loads its
    strategy class by name."""
    found = _STRATEGIES.get(name)
    if found is not None:
        return found
    module_name, _, attr = name.rpartition(".")
    try:
        loaded = getattr(importlib.import_module(module_name), attr) if module_name else None
    except (ImportError, AttributeError, ValueError):
        loaded = None
    if loaded is None:
        raise ConfigError(f"unknown hoodie.compaction.strategy {name!r} (built in: {', '.join(_STRATEGIES)}; or a class path with select())")
    strategy = loaded() if isinstance(loaded, type) else loaded
    if not callable(getattr(strategy, "select", None)):
        raise ConfigError(f"hoodie.compaction.strategy {name!r} has no select(candidates, settings) method")
    return strategy


@dataclass(frozen=True)
class CompactionSettings:
    """``hoodie.compaction.*`` / ``hoodie.compact.inline.*`` settings."""

    strategy: str = LOG_SIZE_STRATEGY
    target_io_mb: int = 512000
    max_delta_commits: int = 5
    parquet: ParquetSettings = ParquetSettings()
    bloom: BloomSettings = BloomSettings()

    def __post_init__(self) -> None:
        compaction_strategy(self.strategy)  # a ConfigError names an unknown one now
        if self.max_delta_commits < 1:
            raise ConfigError(f"hoodie.compact.inline.max.delta.commits must be at least 1, got {self.max_delta_commits}")
        if self.target_io_mb < 0:
            raise ConfigError(f"hoodie.compaction.target.io must not be negative, got {self.target_io_mb}")


@dataclass(frozen=True)
class CompactionDecision:
    """What a compaction would do now, and why (``operations`` empty: nothing to do)."""

    operations: tuple[CompactionOperation, ...]
    reason: str

    @property
    def should_run(self) -> bool:
        return bool(self.operations)


# --- the timeline's view of compaction ---------------------------------------------------------


def pending_compactions(table: HoodieTable) -> list[tuple[Instant, CompactionPlan]]:
    """Requested or inflight compactions of ``table``, oldest first, with their plans."""
    return pending_plans(table.timeline)


def delta_commits_since_last_compaction(table: HoodieTable) -> int:
    """Completed delta commits after the latest compaction (completed or pending)."""
    timeline = table.timeline
    compactions = [
        i.timestamp
        for i in timeline.instants
        if i.action == Action.COMPACTION or (i.action == Action.COMMIT and i.is_completed and _is_compaction_commit(table, i))
    ]
    last = max(compactions, key=InstantTime, default=None)
    return sum(1 for i in timeline.completed([Action.DELTA_COMMIT]) if last is None or i.time > InstantTime(last))


def _is_compaction_commit(table: HoodieTable, inst: Instant) -> bool:
    # a completed compaction shows as a commit on a merge-on-read table
    return table.table_type == "MERGE_ON_READ" and table.commit_metadata(inst).compacted


# --- planning ----------------------------------------------------------------------------------


def plan_compaction(table: HoodieTable, settings: CompactionSettings, require_threshold: bool = True) -> CompactionDecision:
    """The slices the strategy would compact now; never writes."""
    if table.table_type != "MERGE_ON_READ":
        return CompactionDecision((), f"{table.name} is a {table.table_type} table: nothing to compact")
    deltas = delta_commits_since_last_compaction(table)
    if require_threshold and deltas < settings.max_delta_commits:
        return CompactionDecision((), f"{deltas} delta commits since the last compaction, threshold {settings.max_delta_commits}")
    pending_writes = table.timeline.pending(Action.WRITE_ACTIONS)
    if pending_writes:
        return CompactionDecision((), f"write {pending_writes[0].timestamp} is still pending; compaction must start after it")
    busy = file_groups_in_pending_compaction(table.timeline)
    view = table.view()
    candidates = [
        _operation(s) for s in view.latest_slices_all()
        if s.log_files and s.base_file is not None and (s.partition_path, s.file_id) not in busy
    ]
    if not candidates:
        return CompactionDecision((), "no file slice has log files outside a pending compaction")
    chosen, reason = compaction_strategy(settings.strategy).select(list(candidates), settings)
    offered = {(op.partition_path, op.file_id) for op in candidates}
    picked = [(op.partition_path, op.file_id) for op in chosen]
    if len(set(picked)) != len(picked) or not offered.issuperset(picked):
        raise ConfigError(f"compaction strategy {settings.strategy} chose slices it was not offered, or one twice: {picked}")
    if not chosen:
        return CompactionDecision((), f"the strategy {settings.strategy} chose none of {len(candidates)} slices with log files: {reason}")
    return CompactionDecision(tuple(chosen), reason)


def _operation(s: FileSlice) -> CompactionOperation:
    log_bytes = float(sum(lf.size for lf in s.log_files))
    base_bytes = float(s.base_file.size if s.base_file else 0)
    mb = 1024.0 * 1024.0
    return CompactionOperation(
        partition_path=s.partition_path,
        file_id=s.file_id,
        base_instant=s.base_instant,
        base_file=s.base_file.file_name if s.base_file else None,
        log_files=tuple(lf.file_name for lf in s.log_files),
        metrics={
            "TOTAL_LOG_FILES": float(len(s.log_files)),
            "TOTAL_LOG_FILES_SIZE": log_bytes,
            "TOTAL_IO_READ_MB": (log_bytes + base_bytes) / mb,
            "TOTAL_IO_WRITE_MB": base_bytes / mb,
            "TOTAL_IO_MB": (log_bytes + 2 * base_bytes) / mb,
        },
    )


def schedule_compaction(table: HoodieTable, settings: CompactionSettings, require_threshold: bool = True) -> tuple[str | None, CompactionDecision]:
    """Save a compaction plan as ``<t>.compaction.requested``; (instant or None, decision)."""
    table.require_writable("compact")
    decision = plan_compaction(table, settings, require_threshold)
    if not decision.should_run:
        return None, decision
    timeline = table.timeline.reload()
    instant = timeline.request_new(Action.COMPACTION, CompactionPlan(decision.operations).encode())
    return instant.timestamp, decision


# --- execution ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class CompactionTask:
    operation: CompactionOperation
    base_path: str
    instant: str
    schema: pa.Schema
    merge: MergeConfig
    visible: InstantFilter
    storage: Storage
    parquet: ParquetSettings
    bloom: BloomSettings
    # what completed delta commits wrote into the operation's logs (a damaged log is an error)
    committed_logs: Mapping[str, tuple[LogExtent, ...]] = field(default_factory=dict)


def run_compaction(
    table: HoodieTable,
    instant: str | None = None,
    settings: CompactionSettings = CompactionSettings(),
    engine: Engine | None = None,
    completing: Callable[[], AbstractContextManager[object]] = nullcontext,
) -> CommitMetadata:
    """Execute a pending compaction (the oldest one by default) and complete it.
    ``completing`` is held while it completes (the metadata table's records and the
    completed instant written): a writer running alongside, as the streaming sink
    does, keeps its own commits out of that step."""
    table.require_writable("compact")
    pending = pending_compactions(table)
    if instant is not None:
        pending = [p for p in pending if p[0].timestamp == instant]
        if not pending:
            raise TimelineError(f"no pending compaction at {instant} in {table.base_path}")
    if not pending:
        raise TimelineError(f"no pending compaction in {table.base_path}")
    inst, plan = pending[0]
    timeline = table.timeline
    if inst.is_inflight:
        # a failed attempt: rolled back (its files deleted, back to requested), run again
        rollback_compaction_attempt(table, inst, {op.partition_path for op in plan.operations})
        timeline = table.timeline.reload()
    timeline.transition_to_inflight(inst.with_state(State.REQUESTED), b"")
    schema = table.data_schema()
    if schema is None:
        raise TimelineError(f"{table.base_path} has no schema to compact with")
    merge, visible = compaction_merge_inputs(table, inst.timestamp, table.config.precombine_field)
    committed = committed_log_extents(table, plan.operations)
    tasks = [
        CompactionTask(op, table.base_path, inst.timestamp, schema, merge, visible, table.storage, settings.parquet, settings.bloom, logs)
        for op, logs in zip(plan.operations, committed)
    ]
    engine = engine or LocalEngine()
    runs = grouped_runs(
        list(range(len(tasks))), lambda i: int(tasks[i].operation.log_bytes), GROUP_LOG_BYTES, GROUP_SLICES, engine.parallelism, TASKS_PER_WORKER
    )
    groups = [CompactionGroup(tuple(tasks[i] for i in run), tuple(run)) for run in runs]
    stats = [stat for group_stats in engine.map(compact_group, groups, "compact") for stat in group_stats]
    by_partition: dict[str, list[WriteStat]] = {}
    for s in stats:
        by_partition.setdefault(s.partitionPath, []).append(s)
    # a compaction's markers are CREATE markers: no partition is listed for them (one view
    # of storage, made only if a marker ever asks, as the commit of a write does)
    local = functools.cache(table.storage_view)
    DirectMarkers(table.storage, table.base_path, inst.timestamp).delete_unaccepted(
        stats, lambda p: local().partition_files(p), lambda: paths_completed_writes_name(timeline.reload())
    )
    metadata = CommitMetadata(
        partition_to_write_stats=by_partition,
        operation_type="COMPACT",
        extra_metadata={"schema": avro_schema_json(arrow_to_avro_schema(schema, table.name))},
        compacted=True,
    )
    with completing():
        timeline.reload().transition_to_completed(Instant(inst.timestamp, Action.COMPACTION, State.INFLIGHT), metadata.to_json_bytes())
    DirectMarkers(table.storage, table.base_path, inst.timestamp).delete_all()
    return metadata


@dataclass(frozen=True)
class CompactionGroup:
    """Slices of one compaction merged in one engine task, their log blocks decoded
    together (as a snapshot read groups its merges, :func:`~hoodie.query.slices.group_merges`);
    ``ids`` number them as one-slice tasks would be, so write tokens stay unique."""

    tasks: tuple[CompactionTask, ...]
    ids: tuple[int, ...]


def compact_group(group: CompactionGroup, ctx: TaskContext) -> list[WriteStat]:
    """Compact a group's slices one after another (their log blocks decoded together);
    their write stats in order."""
    first = group.tasks[0]
    merged = merge_slices_for_compaction(
        first.storage, first.base_path, [t.operation for t in group.tasks], first.schema, first.merge, first.visible, [t.committed_logs for t in group.tasks]
    )
    stats = []
    started = time.monotonic()
    # each slice is merged when zip takes it from the generator, after its clock started
    for task, i, result in zip(group.tasks, group.ids, merged):
        stats.append(_write_compacted(task, TaskContext(i, ctx.stage_id, ctx.attempt_id), result, started))
        started = time.monotonic()
    return stats


def _write_compacted(task: CompactionTask, ctx: TaskContext, result: MergedSlice, started: float) -> WriteStat:
    """Write a merged slice as the new base file (its marker first); its write stat."""
    op = task.operation
    name = base_file_name(op.file_id, ctx.write_token, task.instant)
    DirectMarkers(task.storage, task.base_path, task.instant).create(op.partition_path, name, "CREATE")
    counters = result.stats.counters()
    merged = result.records
    merged = merged.set_column(merged.schema.get_field_index("_hoodie_file_name"), "_hoodie_file_name", constant_column(name, merged.num_rows))
    path = under(task.base_path, op.partition_path, name)
    size = write_base_file(task.storage, path, merged, task.parquet, task.bloom, _bloom_filter(task, result.base_footer, merged, counters))
    return WriteStat(
        fileId=op.file_id,
        path=relative(op.partition_path, name),
        partitionPath=op.partition_path,
        prevCommit=op.base_instant,
        numWrites=merged.num_rows,
        numUpdateWrites=counters.get("updated", 0),
        numDeletes=counters.get("deleted", 0),
        totalWriteBytes=size,
        fileSizeInBytes=size,
        totalLogRecords=counters.get("log_records", 0),
        totalLogFilesCompacted=len(op.log_files),
        totalLogSizeCompacted=int(op.log_bytes),
        totalUpdatedRecordsCompacted=counters.get("updated", 0),
        totalLogBlocks=counters.get("log_blocks", 0),
        totalCorruptLogBlock=counters.get("corrupt_blocks", 0),
        totalRollbackBlocks=counters.get("rollback_blocks", 0),
        runtimeStats=RuntimeStats(totalScanTime=0, totalCreateTime=int((time.monotonic() - started) * 1000)),
    )


def _bloom_filter(task: CompactionTask, footer: FooterIndex | None, merged: pa.Table, counters: Mapping[str, int]) -> BloomFilter | EncodedBloomFilter | None:
    """The old base file's filter (``footer``, read with its records) plus the keys it
    lacked (the merge lists those records last), so that only they are hashed; None to
    build one from every key.

    Either way the filter keeps every key the merge removed from the old base file: a
    write while this compaction was pending found such a key in the old base file and may
    have written it again into a log of the new slice, where the index looks for keys
    the new base file lacks only when its filter lets them through (hoodie.index.log_keys)."""
    if task.bloom is None:
        return None
    keys = merged.column("_hoodie_record_key")
    b = task.bloom
    if footer is not None:
        added = keys.slice(merged.num_rows - counters.get("inserted", 0))
        carried = filter_for_rewrite(footer.bloom, added, merged.num_rows, b.num_entries, b.fpp, b.filter_type, b.max_entries)
        if carried is not None:
            return carried  # it holds every key of the old base file already
    op = task.operation
    if not counters.get("deleted", 0) or op.base_file is None:
        return None  # nothing removed: a filter of every key the file holds
    old_keys = read_record_keys(task.storage, under(task.base_path, op.partition_path, op.base_file))
    removed = old_keys.filter(pc.invert(pc.is_in(old_keys, value_set=keys)))
    fresh = new_bloom_filter(b.num_entries, b.fpp, b.filter_type, b.max_entries)
    for part in (keys, removed):
        if len(part):
            fresh.add_many(part)
    return fresh


def compact(
    table: HoodieTable, settings: CompactionSettings, engine: Engine | None = None, require_threshold: bool = True
) -> tuple[CommitMetadata | None, CompactionDecision]:
    """Schedule and run a compaction now (inline compaction); (metadata or None, decision)."""
    instant, decision = schedule_compaction(table, settings, require_threshold)
    if instant is None:
        return None, decision
    return run_compaction(table.reload(), instant, settings, engine), decision
