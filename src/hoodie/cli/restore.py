"""``hoodie restore PATH --to T``: bring the table back to its savepoint ``T``.

A thin adapter over :func:`hoodie.services.restore.restore_to`. Before anything is
changed the command checks that ``T`` is a savepoint, shows the instants the restore
would undo (:func:`~hoodie.services.restore.instants_to_restore`) and asks for
confirmation unless ``--yes`` is given; then it restores and prints the instants undone.
A restore left unfinished by an earlier run is finished by the service.
"""
from __future__ import annotations

import sys
from typing import Any

import typer
from rich.table import Table
from rich.text import Text

from hoodie.cli.errors import UsageError
from hoodie.cli.options import CommandConfig, note_unused
from hoodie.cli.output import (
    print_json,
    print_table,
    progress,
    stderr_console,
    stdout_console,
)
from hoodie.services import (
    RestoreResult,
    instants_to_restore,
    pending_restore,
    restore_to,
    savepoint_instants,
)
from hoodie.table import HoodieTable
from hoodie.timeline import Instant


class Cancelled(UsageError):
    """The user did not confirm."""


def restore(table: HoodieTable, config: CommandConfig, savepoint: str, yes: bool, as_json: bool) -> None:
    note_unused(config, "restore")
    pending = pending_restore(table)
    savepoints = [i.timestamp for i in savepoint_instants(table)]
    if pending is None and savepoint not in savepoints:
        have = ", ".join(savepoints) or "none (create one with hoodie savepoint create)"
        raise UsageError(f"{savepoint} is not a savepoint of {table.base_path} (savepoints: {have})")
    undo = instants_to_restore(table, savepoint)
    if pending is None and not undo:
        result = restore_to(table, savepoint)  # says that there is nothing to undo
        _print_nothing(result, as_json)
        return
    if not yes:
        _confirm(table, savepoint, undo, pending)
    with progress(f"Restoring {table.name} to {savepoint}"):
        result = restore_to(table, savepoint)
    if not isinstance(result, RestoreResult):
        _print_nothing(result, as_json)
        return
    actions = {i.timestamp: i.action for i in undo}
    if as_json:
        print_json({
            "restore_instant": result.restore_instant,
            "savepoint": result.savepoint,
            "resumed": result.resumed,
            "rolled_back": [{"instant": t, "action": actions.get(t)} for t in result.rolled_back],
            "deleted_files": list(result.deleted_files),
            "rollback_log_files": list(result.rollback_log_files),
        })
        return
    console = stdout_console()
    how = "Finished restore" if result.resumed else "Restored"
    console.print(
        Text(
            f"{how} {table.name} to savepoint {result.savepoint} (restore {result.restore_instant}): "
            f"{len(result.rolled_back)} instant(s) undone, {len(result.deleted_files)} file(s) deleted, "
            f"{len(result.rollback_log_files)} rollback log file(s) written",
            style="bold",
        ),
        soft_wrap=True,
    )
    if result.rolled_back:
        out = Table(title="Undone, newest first", title_justify="left")
        out.add_column("Instant", overflow="fold")
        out.add_column("Action", overflow="fold")
        for t in result.rolled_back:
            out.add_row(t, actions.get(t) or "-")
        print_table(out)


def _confirm(table: HoodieTable, savepoint: str, undo: list[Instant], pending: Instant | None) -> None:
    err = stderr_console()
    if pending is not None:
        err.print(Text(f"restore {pending.timestamp} of {table.name} is unfinished; it will be finished first."), soft_wrap=True)
    if undo:
        listed = ", ".join(f"{i.timestamp} ({i.action}{'' if i.is_completed else ', ' + i.state.value.lower()})" for i in undo)
        err.print(Text(f"Restoring {table.name} to savepoint {savepoint} undoes {len(undo)} instant(s): {listed}"), soft_wrap=True)
    try:
        confirmed = typer.confirm(f"Restore {table.base_path} to {savepoint}?", default=False, err=True)
        if not sys.stdin.isatty():
            err.print()  # the answer was not echoed: end the prompt's line
    except typer.Abort:  # end of input (or ^C) at the prompt
        err.print()
        confirmed = False
    if not confirmed:
        raise Cancelled("restore cancelled; nothing was changed (use --yes to restore without asking)")


def _print_nothing(result: Any, as_json: bool) -> None:
    if as_json:
        print_json({"restore_instant": None, "reason": result.reason, "rolled_back": []})
    else:
        stdout_console().print(Text(f"Nothing to restore: {result.reason}"), soft_wrap=True)
