"""``hoodie timeline``: the instants of a table's active timeline, one row each.

By default only completed write instants (commit, deltacommit, replacecommit) are listed,
as Hudi's ``commits show`` does, and a caption counts what was left out; ``--all`` lists
every instant in every state (requested, inflight, completed) and every action (clean,
rollback, compaction, ...). Rows are oldest first; ``--limit N`` keeps the newest N.
Write statistics come from each completed write's commit metadata.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

from rich.table import Table
from rich.text import Text

from hoodie.cli.output import (
    human_size,
    print_json,
    print_table,
    progress,
    stdout_console,
)
from hoodie.errors import HoodieError
from hoodie.table import HoodieTable

if TYPE_CHECKING:
    from hoodie.timeline import Instant

WRITE_ACTIONS = ("commit", "deltacommit", "replacecommit")
COMPLETED = "COMPLETED"
STATE_STYLES = {"COMPLETED": "green", "INFLIGHT": "yellow", "REQUESTED": "cyan"}


@dataclass(frozen=True)
class TimelineRow:
    """One instant; the statistics are None unless it is a completed write."""

    instant: str
    action: str
    state: str
    completion_time: str | None = None
    operation: str | None = None
    files: int | None = None
    writes: int | None = None
    inserts: int | None = None
    updates: int | None = None
    deletes: int | None = None
    bytes: int | None = None
    storage_calls: dict[str, int] | None = None  # what the write cost in storage calls, when recorded
    error: str | None = None

    @property
    def is_completed_write(self) -> bool:
        return self.state == COMPLETED and self.action in WRITE_ACTIONS

    def to_json(self) -> dict[str, Any]:
        out = asdict(self)
        if out["error"] is None:
            del out["error"]
        return out


@dataclass(frozen=True)
class TimelineListing:
    """The rows to show, and what the filters left out."""

    rows: list[TimelineRow]
    total_instants: int
    hidden: dict[str, int]  # "<state> <action>" → count, for instants filtered out by default
    limited: int  # rows dropped by --limit


def list_timeline(table: HoodieTable, include_all: bool = False, limit: int | None = None) -> TimelineListing:
    """Rows for the instants of ``table``'s active timeline, oldest first."""
    instants = list(table.timeline.instants)
    hidden: Counter[str] = Counter()
    chosen = []
    for inst in instants:
        if include_all or (inst.state.value == COMPLETED and inst.action in WRITE_ACTIONS):
            chosen.append(inst)
        else:
            hidden[f"{inst.state.value.lower()} {inst.action}"] += 1
    limited = 0
    if limit is not None and limit > 0 and len(chosen) > limit:
        limited = len(chosen) - limit
        chosen = chosen[-limit:]
    rows = []
    with progress(f"Reading the timeline of {table.name}") as display:
        task = display.add_task("commit metadata", total=len(chosen))
        for inst in chosen:
            rows.append(_row(table, inst))
            display.advance(task)
    return TimelineListing(rows, len(instants), dict(sorted(hidden.items())), limited)


def _row(table: HoodieTable, inst: Instant) -> TimelineRow:
    base = TimelineRow(inst.timestamp, inst.action, inst.state.value, inst.completion_time)
    if not (inst.state.value == COMPLETED and inst.action in WRITE_ACTIONS):
        return base
    try:
        meta = table.timeline.commit_metadata(inst)
    except HoodieError as e:
        # One unreadable instant should not hide the rest of the timeline.
        return TimelineRow(**{**asdict(base), "error": " ".join(str(e).split())})
    totals = meta.totals()
    return TimelineRow(
        inst.timestamp,
        inst.action,
        inst.state.value,
        inst.completion_time,
        meta.operation_type,
        totals["files"],
        totals["writes"],
        totals["inserts"],
        totals["updates"],
        totals["deletes"],
        totals["bytes"],
        meta.storage_calls(),
    )


# --- rendering ----------------------------------------------------------------------------------


def print_timeline(table: HoodieTable, listing: TimelineListing, as_json: bool, calls: bool = False) -> None:
    if as_json:
        print_json([r.to_json() for r in listing.rows])
        return
    console = stdout_console()
    if listing.rows:
        print_table(_table(table, listing, calls))
    else:
        console.print(Text(f"No instants to show on the timeline of {table.base_path}.", style="bold"), soft_wrap=True)
    caption = _caption(listing)
    if caption:
        console.print(Text(caption), soft_wrap=True)
    if calls and listing.rows:
        console.print(Text(calls_caption(listing)), soft_wrap=True)


CALL_KINDS = ("list", "read", "write", "exists", "delete")


def _table(table: HoodieTable, listing: TimelineListing, calls: bool = False) -> Table:
    rows = listing.rows
    with_completion = any(r.completion_time for r in rows)
    out = Table(title=f"Timeline of {table.name} ({table.table_type}, v{table.config.version})", title_justify="left")
    out.add_column("Instant", overflow="fold")
    out.add_column("Action", overflow="fold")
    out.add_column("State", overflow="fold")
    if with_completion:
        out.add_column("Completed", overflow="fold")
    out.add_column("Operation", overflow="fold")
    for header in ("Written", "Inserted", "Updated", "Deleted", "Files", "Bytes"):
        out.add_column(header, justify="right", overflow="fold")
    if calls:  # storage calls of the write up to its commit
        for kind in CALL_KINDS:
            out.add_column(kind.capitalize() + "s" if kind != "exists" else "Exists", justify="right", overflow="fold")
    for r in rows:
        cells: list[str | Text] = [r.instant, r.action, Text(r.state, style=STATE_STYLES.get(r.state, ""))]
        if with_completion:
            cells.append(r.completion_time or "-")
        if r.error:
            cells.append(Text(f"unreadable: {r.error}", style="red"))
            cells.extend([""] * (6 + (len(CALL_KINDS) if calls else 0)))
        else:
            cells.append(r.operation or "")
            cells.extend(_count(v) for v in (r.writes, r.inserts, r.updates, r.deletes, r.files))
            cells.append(human_size(r.bytes) if r.bytes is not None else "")
            if calls:
                recorded = r.storage_calls
                cells.extend(_count(recorded.get(kind, 0)) if recorded is not None else "-" for kind in CALL_KINDS)
        out.add_row(*cells)
    return out


def _count(value: int | None) -> str:
    return "" if value is None else f"{value:,}"


def _caption(listing: TimelineListing) -> str:
    parts = []
    if listing.limited:
        parts.append(f"{listing.limited} older row(s) left out by --limit")
    if listing.hidden:
        what = ", ".join(f"{n} {kind}" for kind, n in listing.hidden.items())
        parts.append(f"not shown: {what} (use --all)")
    return "; ".join(parts)


def calls_caption(listing: TimelineListing) -> str:
    """What the storage-call columns count, and which writes did not record them."""
    missing = sum(1 for r in listing.rows if r.is_completed_write and r.storage_calls is None)
    note = "storage calls of each write up to its commit, by the driver and its tasks (a Parquet file opened is a read; its bytes go through Arrow)"
    return note + (f"; {missing} write(s) without a record (-): not written by hoodie" if missing else "")

