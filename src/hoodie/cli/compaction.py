"""``hoodie compaction schedule|run|show``: compaction of merge-on-read tables.

A thin adapter over :mod:`hoodie.services.compaction`: ``schedule`` calls
:func:`~hoodie.services.compaction.schedule_compaction` (``--force``: without the
delta-commit threshold), ``run`` calls :func:`~hoodie.services.compaction.run_compaction`
with a progress engine (on a copy-on-write table it says why there is nothing to run),
``show`` lists :func:`~hoodie.services.compaction.pending_compactions` with their
operations. Settings come from the ``-o`` options through
:func:`hoodie.services.inline.compaction_settings`.
"""
from __future__ import annotations

import posixpath
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

from rich.table import Table
from rich.text import Text

from hoodie.cli.options import CommandConfig, note_unused, service_settings
from hoodie.cli.output import (
    ProgressEngine,
    human_size,
    note,
    print_json,
    print_table,
    progress,
    report_not_run,
    stdout_console,
)
from hoodie.services import (
    compaction_settings,
    pending_compactions,
    plan_compaction,
    run_compaction,
    schedule_compaction,
)
from hoodie.table import HoodieTable
from hoodie.timeline import CompactionOperation


@dataclass(frozen=True)
class OperationInfo:
    """One slice a compaction plan rewrites."""

    partition: str
    file_id: str
    base_instant: str
    base_file: str | None
    log_files: list[str]
    log_bytes: int | None  # from the plan's TOTAL_LOG_FILES_SIZE metric; None if absent

    @classmethod
    def of(cls, op: CompactionOperation) -> OperationInfo:
        size = op.metrics.get("TOTAL_LOG_FILES_SIZE")
        return cls(op.partition_path, op.file_id, op.base_instant, op.base_file, list(op.log_files), int(size) if size is not None else None)


@dataclass(frozen=True)
class PendingCompaction:
    instant: str
    state: str
    operations: list[OperationInfo]

    def to_json(self) -> dict[str, Any]:
        return {"instant": self.instant, "state": self.state, "operations": [_operation_json(op) for op in self.operations]}


def _operation_json(op: OperationInfo) -> dict[str, Any]:
    out = asdict(op)
    out["log_file_count"] = len(op.log_files)
    return out


# --- schedule -----------------------------------------------------------------------------------


def schedule(table: HoodieTable, config: CommandConfig, force: bool, as_json: bool) -> None:
    settings = service_settings(compaction_settings, config)
    with progress(f"Planning a compaction of {table.name}"):
        instant, decision = schedule_compaction(table, settings, require_threshold=not force)
        forced = None
        if instant is None and not force:
            # would --force help? (the plan is pure: nothing is written)
            forced = plan_compaction(table, settings, require_threshold=False)
    note_unused(config, "compaction schedule")
    operations = [OperationInfo.of(op) for op in decision.operations]
    if as_json:
        print_json({"scheduled": instant is not None, "instant": instant, "reason": decision.reason, "operations": [_operation_json(op) for op in operations]})
        return
    console = stdout_console()
    if instant is None:
        console.print(Text(f"No compaction scheduled: {decision.reason}"), soft_wrap=True)
        if forced is not None and forced.should_run:
            note(f"note: --force would schedule {len(forced.operations)} file slice(s) regardless of the threshold")
        return
    console.print(Text(f"Scheduled compaction {instant} of {len(operations)} file slice(s): {decision.reason}", style="bold"), soft_wrap=True)
    print_table(_operations_table(operations, title=None))
    console.print(Text(f"Run it with: hoodie compaction run {table.base_path} --instant {instant}"), soft_wrap=True)


# --- run ----------------------------------------------------------------------------------------


def run(table: HoodieTable, config: CommandConfig, instant: str | None, as_json: bool) -> None:
    settings = service_settings(compaction_settings, config)
    if table.table_type != "MERGE_ON_READ":
        # nothing to run, and not an error: the service's own reason, as schedule says it
        report_not_run("No compaction run", plan_compaction(table, settings).reason, as_json)
        note_unused(config, "compaction run")
        return
    pending = pending_compactions(table)
    if instant is None and pending:
        instant = pending[0][0].timestamp  # the oldest, as run_compaction picks by default
    with progress(f"Compacting {table.name}" + (f" ({instant})" if instant else "")) as display:
        metadata = run_compaction(table, instant, settings, engine=ProgressEngine(display))
    note_unused(config, "compaction run")
    stats = sorted(metadata.write_stats(), key=lambda s: (s.partitionPath, s.fileId))
    totals = metadata.totals()
    log_files = sum(s.totalLogFilesCompacted for s in stats)
    if as_json:
        print_json({
            "ran": True,
            "instant": instant,
            "files": [
                {
                    "partition": s.partitionPath,
                    "file_id": s.fileId,
                    "base_file": posixpath.basename(s.path),
                    "previous_base_instant": s.prevCommit,
                    "records": s.numWrites,
                    "updated": s.numUpdateWrites,
                    "deleted": s.numDeletes,
                    "log_files_compacted": s.totalLogFilesCompacted,
                    "bytes": s.fileSizeInBytes,
                }
                for s in stats
            ],
            "totals": {**totals, "log_files_compacted": log_files},
        })
        return
    console = stdout_console()
    console.print(
        Text(
            f"Compaction {instant} completed: {len(stats)} file slice(s) compacted, {log_files} log file(s) merged; "
            f"{totals['writes']:,} records written ({totals['updates']:,} updated, {totals['deletes']:,} deleted), "
            f"{human_size(totals['bytes'])}",
            style="bold",
        ),
        soft_wrap=True,
    )
    out = Table()
    out.add_column("Partition", overflow="fold")
    out.add_column("New base file", overflow="fold")
    out.add_column("Records", justify="right")
    out.add_column("Logs merged", justify="right")
    out.add_column("Size", justify="right")
    for s in stats:
        out.add_row(
            s.partitionPath or "(non-partitioned)", posixpath.basename(s.path), f"{s.numWrites:,}", str(s.totalLogFilesCompacted), human_size(s.fileSizeInBytes)
        )
    if stats:
        print_table(out)


# --- show ---------------------------------------------------------------------------------------


def list_pending(table: HoodieTable) -> list[PendingCompaction]:
    with progress(f"Reading the pending compactions of {table.name}"):
        pending = pending_compactions(table)
    return [PendingCompaction(inst.timestamp, inst.state.value, [OperationInfo.of(op) for op in plan.operations]) for inst, plan in pending]


def show(table: HoodieTable, config: CommandConfig, as_json: bool) -> None:
    pending = list_pending(table)
    note_unused(config, "compaction show")
    if as_json:
        print_json([p.to_json() for p in pending])
        return
    console = stdout_console()
    if not pending:
        what = "" if table.table_type == "MERGE_ON_READ" else f" ({table.table_type} tables are not compacted)"
        console.print(Text(f"No pending compaction on the timeline of {table.name}{what}."), soft_wrap=True)
        return
    for p in pending:
        title = f"Compaction {p.instant} ({p.state}): {len(p.operations)} file slice(s)"
        print_table(_operations_table(p.operations, title))
    console.print(Text(f"{len(pending)} pending compaction(s); hoodie compaction run runs the oldest"), soft_wrap=True)


def _operations_table(operations: Sequence[OperationInfo], title: str | None) -> Table:
    out = Table(title=title, title_justify="left")
    out.add_column("Partition", overflow="fold")
    out.add_column("File id", overflow="fold")
    out.add_column("Base instant", overflow="fold")
    out.add_column("Log files", justify="right")
    out.add_column("Log size", justify="right")
    for op in operations:
        out.add_row(op.partition or "(non-partitioned)", op.file_id, op.base_instant, str(len(op.log_files)), human_size(op.log_bytes))
    return out
