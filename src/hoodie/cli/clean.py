"""``hoodie clean``: delete file slices no retained view of the table needs any more.

A thin adapter over :mod:`hoodie.services.cleaning`: ``--dry-run`` prints
:func:`~hoodie.services.cleaning.plan_clean` (pure: the files per partition and the reason),
otherwise :func:`~hoodie.services.cleaning.clean` runs (finishing a pending clean first, as
the service does) and what it deleted, or why nothing ran, is printed. Settings come from
the ``-o`` options through :func:`hoodie.services.inline.clean_settings`.
"""
from __future__ import annotations

import posixpath
from collections.abc import Mapping, Sequence

from rich.table import Table
from rich.text import Text

from hoodie.cli.options import CommandConfig, note_unused, service_settings
from hoodie.cli.output import (
    ProgressEngine,
    note,
    print_json,
    print_table,
    progress,
    report_not_run,
    stdout_console,
)
from hoodie.services import (
    CleanPlan,
    CleanResult,
    clean,
    clean_settings,
    pending_cleans,
    plan_clean,
)
from hoodie.storage import relative
from hoodie.table import HoodieTable


def plan_reason(plan: CleanPlan) -> str:
    """The plan's reason, followed by how its partitions were chosen unless it says so
    already (as :func:`hoodie.services.cleaning.clean` reports it)."""
    how = plan.partition_selection
    return plan.reason + (f" ({how})" if how and how not in plan.reason else "")


def dry_run(table: HoodieTable, config: CommandConfig, as_json: bool) -> None:
    settings = service_settings(clean_settings, config)
    with progress(f"Planning a clean of {table.name}"):
        plan = plan_clean(table, settings)
        pending = [i.timestamp for i in pending_cleans(table)]
    note_unused(config, "clean")
    files = {p: [posixpath.basename(f) for f in paths] for p, paths in sorted(plan.files_to_delete.items()) if paths}
    if as_json:
        print_json({
            "dry_run": True,
            "would_run": plan.should_run,
            "reason": plan.reason,
            "policy": plan.policy.value,
            "earliest_instant_to_retain": plan.earliest_instant_to_retain.timestamp if plan.earliest_instant_to_retain else None,
            "partition_selection": plan.partition_selection,
            "partitions_scanned": list(plan.partitions_scanned),
            "files": files,
            "pending_cleans": pending,
        })
        return
    console = stdout_console()
    if plan.should_run:
        console.print(
            Text(f"Clean plan for {table.name} ({plan.policy.value}): would delete {plan.file_count} file(s): {plan.reason}", style="bold"), soft_wrap=True
        )
    else:
        console.print(Text(f"Nothing to clean in {table.name} ({plan.policy.value}): {plan.reason}"), soft_wrap=True)
    if plan.partition_selection:
        console.print(Text(f"Partitions: {plan.partition_selection}"), soft_wrap=True)
    if files:
        print_table(_files_table(files, "File to delete"))
    for instant in pending:
        note(f"note: clean {instant} is pending; hoodie clean finishes it before planning a new one")


def run(table: HoodieTable, config: CommandConfig, as_json: bool) -> None:
    settings = service_settings(clean_settings, config)
    with progress(f"Cleaning {table.name}") as display:
        result = clean(table, settings, engine=ProgressEngine(display))
    note_unused(config, "clean")
    if not isinstance(result, CleanResult):
        report_not_run(f"Nothing cleaned in {table.name}", result.reason, as_json)
        return
    deleted = {p: list(names) for p, names in sorted(result.deleted.items()) if names}
    failed = {p: list(names) for p, names in sorted(result.failed.items()) if names}
    if as_json:
        print_json({
            "ran": True,
            "instant": result.instant,
            "resumed": result.resumed,
            "policy": result.policy,
            "earliest_commit_to_retain": result.earliest_commit_to_retain or None,
            "deleted": deleted,
            "failed": failed,
        })
        return
    console = stdout_console()
    what = f"Finished the pending clean {result.instant}" if result.resumed else f"Clean {result.instant}"
    retained = f"; retaining the view of {result.earliest_commit_to_retain} and later" if result.earliest_commit_to_retain else ""
    console.print(
        Text(f"{what} of {table.name} deleted {result.total_deleted} file(s) in {len(deleted)} partition(s) ({result.policy}{retained})", style="bold"),
        soft_wrap=True,
    )
    if deleted:
        print_table(_files_table(deleted, "Deleted file"))
    if failed:
        count = sum(len(v) for v in failed.values())
        note(f"note: {count} file(s) could not be deleted: " + ", ".join(relative(p, n) for p, names in failed.items() for n in names))


def _files_table(files: Mapping[str, Sequence[str]], header: str) -> Table:
    out = Table()
    out.add_column("Partition", overflow="fold")
    out.add_column(header, overflow="fold")
    for partition, names in files.items():
        for name in names:
            out.add_row(partition or "(non-partitioned)", name)
    return out

