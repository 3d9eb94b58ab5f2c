"""``hoodie savepoint create|delete|list``: pin a commit's files so the table can be
restored to it.

A thin adapter over :mod:`hoodie.services.savepoint` (:func:`create_savepoint`,
:func:`delete_savepoint`, :func:`list_savepoints`); the service refuses what Hudi refuses
(a commit that is not completed, already savepointed, or older than the last clean kept).
"""
from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from typing import Any

from rich.table import Table
from rich.text import Text

from hoodie.cli.options import CommandConfig, note_unused
from hoodie.cli.output import print_json, print_table, progress, stdout_console
from hoodie.services import (
    SavepointInfo,
    create_savepoint,
    delete_savepoint,
    list_savepoints,
)
from hoodie.table import HoodieTable


def savepoint_json(sp: SavepointInfo) -> dict[str, Any]:
    return {
        "instant": sp.instant,
        "savepointed_by": sp.savepointed_by,
        "savepointed_at": _iso(sp.savepointed_at_ms),
        "savepointed_at_ms": sp.savepointed_at_ms,
        "comments": sp.comments,
        "files": {p: list(names) for p, names in sorted(sp.files.items())},
    }


def _iso(ms: int) -> str | None:
    if not ms:
        return None
    return dt.datetime.fromtimestamp(ms / 1000, dt.timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _when(ms: int) -> str:
    if not ms:
        return "-"
    return dt.datetime.fromtimestamp(ms / 1000, dt.timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")


def _file_count(sp: SavepointInfo) -> int:
    return sum(len(v) for v in sp.files.values())


def create(table: HoodieTable, config: CommandConfig, instant: str | None, user: str, comment: str, as_json: bool) -> None:
    with progress(f"Savepointing {table.name}"):
        sp = create_savepoint(table, instant, user=user, comment=comment)
    note_unused(config, "savepoint create")
    if as_json:
        print_json(savepoint_json(sp))
        return
    stdout_console().print(
        Text(f"Savepoint {sp.instant} created: {_file_count(sp)} file(s) in {len(sp.files)} partition(s) are kept until it is deleted", style="bold"),
        soft_wrap=True,
    )


def delete(table: HoodieTable, config: CommandConfig, instant: str) -> None:
    with progress(f"Deleting savepoint {instant} of {table.name}"):
        delete_savepoint(table, instant)
    note_unused(config, "savepoint delete")
    stdout_console().print(Text(f"Savepoint {instant} deleted; the files it kept can be cleaned again"), soft_wrap=True)


def show_list(table: HoodieTable, config: CommandConfig, as_json: bool) -> None:
    with progress(f"Reading the savepoints of {table.name}"):
        savepoints = list_savepoints(table)
    note_unused(config, "savepoint list")
    if as_json:
        print_json([savepoint_json(sp) for sp in savepoints])
        return
    if not savepoints:
        stdout_console().print(Text(f"No savepoints on the timeline of {table.name}."), soft_wrap=True)
        return
    print_table(_table(table, savepoints))


def _table(table: HoodieTable, savepoints: Sequence[SavepointInfo]) -> Table:
    out = Table(title=f"Savepoints of {table.name}", title_justify="left")
    out.add_column("Instant", overflow="fold")
    out.add_column("Savepointed at", overflow="fold")
    out.add_column("By", overflow="fold")
    out.add_column("Partitions", justify="right")
    out.add_column("Files", justify="right")
    out.add_column("Comment", overflow="fold")
    for sp in savepoints:
        out.add_row(sp.instant, _when(sp.savepointed_at_ms), sp.savepointed_by or "-", str(len(sp.files)), str(_file_count(sp)), sp.comments or "-")
    return out
