"""``hoodie show``: a table's configuration and its file groups, partition by partition.

:func:`describe_table` gathers plain data (``TableReport``) from :class:`HoodieTable`
and its file-system view as of an optional instant; :func:`print_report` renders it as
rich tables or JSON. Every slice of every file group is listed (oldest first), with
totals per partition and for the table; "latest" sizes count only each group's newest
slice, i.e. what a snapshot query reads.
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

from rich.table import Table
from rich.text import Text

from hoodie.cli.errors import UsageError
from hoodie.cli.output import (
    human_size,
    note,
    print_json,
    print_table,
    progress,
    stdout_console,
)
from hoodie.errors import HoodieError
from hoodie.query import why_snapshot_is_empty
from hoodie.table import HoodieTable

if TYPE_CHECKING:
    from hoodie.table import FileGroup, FileSlice, TableView

# hoodie.properties keys rendered in the configuration block; the rest are "other".
CONFIG_KEYS = (
    "hoodie.table.name",
    "hoodie.table.type",
    "hoodie.table.version",
    "hoodie.table.recordkey.fields",
    "hoodie.table.partition.fields",
    "hoodie.table.precombine.field",
    "hoodie.table.keygenerator.class",
    "hoodie.table.base.file.format",
)
LONG_VALUE = 60  # property values longer than this are shortened in human output
NON_PARTITIONED_LABEL = "(non-partitioned)"


@dataclass(frozen=True)
class SliceInfo:
    base_instant: str
    base_file: str | None
    base_file_size: int | None
    log_files: list[str]
    total_size: int


@dataclass(frozen=True)
class FileGroupInfo:
    file_id: str
    slices: list[SliceInfo]


@dataclass
class Totals:
    """Counts over file groups; ``latest_bytes`` sums only each group's newest slice."""

    file_groups: int = 0
    slices: int = 0
    base_files: int = 0
    log_files: int = 0
    bytes: int = 0
    latest_bytes: int = 0

    def add(self, other: Totals) -> None:
        for k, v in asdict(other).items():
            setattr(self, k, getattr(self, k) + v)


@dataclass(frozen=True)
class PartitionInfo:
    partition: str
    file_groups: list[FileGroupInfo]
    totals: Totals


@dataclass
class TableReport:
    path: str
    as_of: str | None
    config: dict[str, Any]
    properties: dict[str, str]
    schema: list[dict[str, Any]] | None
    partitions: list[PartitionInfo] = field(default_factory=list)
    totals: Totals = field(default_factory=Totals)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


# --- gathering ----------------------------------------------------------------------------------


def describe_table(table: HoodieTable, partition: str | None = None, as_of: str | None = None) -> TableReport:
    """The configuration of ``table`` and its file groups as of ``as_of`` (default: latest),
    in every partition or only in ``partition``."""
    report = TableReport(table.base_path, as_of, table_config(table), dict(table.config.props), _schema(table, as_of))
    view = table.view(as_of)
    with progress(f"Listing the file groups of {table.name}") as display:
        partitions = [_check_partition(table, view, partition)] if partition is not None else view.all_partition_paths()
        task = display.add_task("partitions", total=len(partitions))
        for p in partitions:
            info = partition_info(p, view.file_groups(p))
            report.partitions.append(info)
            report.totals.add(info.totals)
            display.advance(task)
    if as_of is not None and table.timeline.completed_writes() and not view.visible_instants:
        note(f"note: {why_snapshot_is_empty(table, as_of)}: the table as of then holds no file group")
    return report


def table_config(table: HoodieTable) -> dict[str, Any]:
    c = table.config
    return {
        "name": c.name,
        "type": c.table_type,
        "version": c.version,
        "record_key_fields": list(c.record_key_fields),
        "partition_fields": list(c.partition_fields),
        "precombine_field": c.precombine_field,
        "key_generator": c.keygen_class,
        "base_file_format": c.base_file_format,
    }


def partition_info(partition: str, groups: Iterable[FileGroup]) -> PartitionInfo:
    infos: list[FileGroupInfo] = []
    totals = Totals()
    for g in groups:
        slices = [_slice_info(s) for s in g.slices]
        infos.append(FileGroupInfo(g.file_id, slices))
        totals.file_groups += 1
        totals.slices += len(slices)
        totals.base_files += sum(1 for s in slices if s.base_file is not None)
        totals.log_files += sum(len(s.log_files) for s in slices)
        totals.bytes += sum(s.total_size for s in slices)
        totals.latest_bytes += slices[-1].total_size if slices else 0
    return PartitionInfo(partition, infos, totals)


def _slice_info(s: FileSlice) -> SliceInfo:
    base = s.base_file
    return SliceInfo(
        s.base_instant,
        base.file_name if base else None,
        base.size if base else None,
        [lf.file_name for lf in s.log_files],
        s.total_size,
    )


def _check_partition(table: HoodieTable, view: TableView, partition: str) -> str:
    wanted = partition.strip("/")
    if view.file_groups(wanted):
        return wanted
    known = view.all_partition_paths()
    if wanted in known:
        return wanted
    shown = ", ".join(repr(p) for p in known[:10]) + (", ..." if len(known) > 10 else "")
    raise UsageError(f"no partition {partition!r} in table {table.name} at {table.base_path} (partitions: {shown or 'none'})")


def _schema(table: HoodieTable, as_of: str | None) -> list[dict[str, Any]] | None:
    try:
        schema = table.data_schema(as_of)
    except HoodieError as e:
        note(f"note: the table schema cannot be decoded: {e}")
        return None
    if schema is None:
        return None
    return [{"name": f.name, "type": str(f.type), "nullable": f.nullable} for f in schema]


# --- rendering ----------------------------------------------------------------------------------


def print_report(report: TableReport, as_json: bool) -> None:
    if as_json:
        print_json(report.to_json())
        return
    console = stdout_console()
    print_table(_config_table(report))
    if report.schema:
        print_table(_schema_table(report.schema))
    other = {k: v for k, v in report.properties.items() if k not in CONFIG_KEYS}
    if other:
        print_table(_properties_table(other))
    for p in report.partitions:
        print_table(_partition_table(p))
        console.print(Text(_partition_totals(p.totals)), soft_wrap=True)
    console.print(_totals_line(report), soft_wrap=True)


def _config_table(report: TableReport) -> Table:
    c = report.config
    title = f"Table {c['name']}" + (f" as of {report.as_of}" if report.as_of else "")
    out = Table(title=title, show_header=False, title_justify="left")
    out.add_column("Setting", style="bold", no_wrap=True)
    out.add_column("Value", overflow="fold")
    rows = [
        ("Path", report.path),
        ("Name", c["name"]),
        ("Type", c["type"]),
        ("Version", str(c["version"])),
        ("Record key", ", ".join(c["record_key_fields"]) or "-"),
        ("Partition fields", ", ".join(c["partition_fields"]) or "- (non-partitioned)"),
        ("Precombine field", c["precombine_field"] or "-"),
        ("Key generator", c["key_generator"] or "-"),
        ("Base file format", c["base_file_format"]),
    ]
    for k, v in rows:
        out.add_row(k, v)
    return out


def _schema_table(schema: list[dict[str, Any]]) -> Table:
    out = Table(title="Schema", title_justify="left")
    out.add_column("Column", overflow="fold")
    out.add_column("Type", overflow="fold")
    out.add_column("Nullable")
    for f in schema:
        out.add_row(f["name"], f["type"], "yes" if f["nullable"] else "no")
    return out


def _properties_table(props: Mapping[str, str]) -> Table:
    out = Table(title="Other properties", title_justify="left")
    out.add_column("Property", no_wrap=True)
    out.add_column("Value", overflow="fold")
    for k in sorted(props):
        v = props[k]
        if len(v) > LONG_VALUE:
            v = f"{v[:LONG_VALUE]}… ({len(v)} characters; see --json)"
        out.add_row(k, v)
    return out


def _partition_table(p: PartitionInfo) -> Table:
    """One header row per file group (its id), then one row per slice, oldest first."""
    label = p.partition or NON_PARTITIONED_LABEL
    out = Table(title=f"Partition {label}", title_justify="left")
    out.add_column("Base instant", overflow="fold")
    out.add_column("File group / base file", overflow="fold")
    out.add_column("Base size", justify="right", overflow="fold")
    out.add_column("Logs", justify="right")
    out.add_column("Slice size", justify="right", overflow="fold")
    for g in p.file_groups:
        out.add_row("", Text(f"{g.file_id} ({len(g.slices)} slice{'s' if len(g.slices) != 1 else ''})", style="bold"), "", "", "")
        for s in g.slices:
            out.add_row(
                s.base_instant,
                s.base_file or Text("- (no base file)", style="dim"),
                human_size(s.base_file_size) if s.base_file_size is not None else "-",
                str(len(s.log_files)),
                human_size(s.total_size),
            )
    return out


def _partition_totals(t: Totals) -> str:
    return (
        f"{t.file_groups} file group(s), {t.slices} slice(s), {t.log_files} log file(s); "
        f"{human_size(t.bytes)} in all, {human_size(t.latest_bytes)} in latest slices"
    )


def _totals_line(report: TableReport) -> Text:
    t = report.totals
    return Text(
        f"Total: {len(report.partitions)} partition(s), {t.file_groups} file group(s), {t.slices} slice(s), "
        f"{t.base_files} base file(s), {t.log_files} log file(s); {human_size(t.bytes)} in all, "
        f"{human_size(t.latest_bytes)} in latest slices",
        style="bold",
    )
