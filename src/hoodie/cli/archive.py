"""``hoodie archive``: move the oldest instants off the active timeline.

A thin adapter over :mod:`hoodie.services.archival`: ``--dry-run`` prints
:func:`~hoodie.services.archival.plan_archive` (pure), otherwise
:func:`~hoodie.services.archival.archive` runs and the instants it moved, or why nothing
moved, are printed. Settings come from the ``-o`` options through
:func:`hoodie.services.inline.archive_settings`.
"""
from __future__ import annotations

import posixpath
from collections.abc import Sequence
from typing import Any

from rich.table import Table
from rich.text import Text

from hoodie.cli.options import CommandConfig, note_unused, service_settings
from hoodie.cli.output import print_json, print_table, progress, report_not_run, stdout_console
from hoodie.services import ArchiveResult, archive, archive_settings, plan_archive
from hoodie.table import HoodieTable
from hoodie.timeline import Instant


def _instants_json(instants: Sequence[Instant]) -> list[dict[str, Any]]:
    return [{"instant": i.timestamp, "action": i.action, "state": i.state.value} for i in instants]


def dry_run(table: HoodieTable, config: CommandConfig, as_json: bool) -> None:
    settings = service_settings(archive_settings, config)
    with progress(f"Planning the archival of {table.name}"):
        plan = plan_archive(table, settings)
    note_unused(config, "archive")
    if as_json:
        print_json({"dry_run": True, "would_run": plan.should_run, "reason": plan.reason, "instants": _instants_json(plan.instants)})
        return
    console = stdout_console()
    if not plan.should_run:
        console.print(Text(f"Nothing to archive in {table.name}: {plan.reason}"), soft_wrap=True)
        return
    console.print(Text(f"Would archive {len(plan.instants)} instant(s) of {table.name}: {plan.reason}", style="bold"), soft_wrap=True)
    print_table(_instants_table(plan.instants))


def run(table: HoodieTable, config: CommandConfig, as_json: bool) -> None:
    settings = service_settings(archive_settings, config)
    with progress(f"Archiving the timeline of {table.name}"):
        result = archive(table, settings)
    note_unused(config, "archive")
    if not isinstance(result, ArchiveResult):
        report_not_run(f"Nothing archived in {table.name}", result.reason, as_json)
        return
    archive_file = posixpath.basename(result.archive_file) if result.archive_file else None
    if as_json:
        print_json({"ran": True, "reason": result.reason, "archive_file": archive_file, "records": result.records, "instants": _instants_json(result.archived)})
        return
    console = stdout_console()
    where = f" into {archive_file} ({result.records} record(s))" if archive_file else " (their records were already archived by an interrupted run)"
    console.print(Text(f"Archived {len(result.archived)} instant(s) of {table.name}{where}: {result.reason}", style="bold"), soft_wrap=True)
    print_table(_instants_table(result.archived))


def _instants_table(instants: Sequence[Instant]) -> Table:
    out = Table()
    out.add_column("Instant", overflow="fold")
    out.add_column("Action", overflow="fold")
    out.add_column("State", overflow="fold")
    for i in instants:
        out.add_row(i.timestamp, i.action, i.state.value)
    return out
