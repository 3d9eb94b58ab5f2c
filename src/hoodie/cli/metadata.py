"""``hoodie metadata list-partitions | list-files | stats | validate``: a table's metadata table.

``list-partitions`` and ``list-files`` ask :class:`hoodie.metadata_table.MetadataTableReader`
what the merged ``files`` partition says (the answer a reader using the metadata table
gets, no listing of storage); ``list-partitions --compare`` lists storage beside it and
fails (exit code 1) when the two differ. ``stats`` renders
:func:`hoodie.metadata_table.metadata_table_stats` and the data partitions the ``files``
partition lists, then the metrics of that work
(:class:`hoodie.metadata_table.metrics.MetadataMetrics`) and the figures the metadata
timeline recorded of its own work. ``validate`` runs
:func:`hoodie.metadata_table.validate_metadata_table` with a progress bar per check (on
stderr), prints a table of the differences and fails (exit code 1) when there is any;
with ``--repair`` it then has the metadata table built again from one listing (the
``rebuild`` it is given: :func:`hoodie.cli.metadata_admin.rebuild_as_it_was`) and
validates it again.
Each command prints how long it took (``duration_s`` in JSON): opening the table and the
metadata table, and the lookup.
"""
from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import asdict
from typing import Any, TypeVar

import typer
from rich.table import Table
from rich.text import Text

from hoodie.cli.errors import EXIT_FAILURE, UsageError
from hoodie.cli.output import human_size, note, print_json, print_table, progress, stdout_console
from hoodie.errors import MetadataOutOfSyncError
from hoodie.metadata_table import (
    FILES,
    ActionFigures,
    MetadataMetrics,
    MetadataTableReader,
    MetadataTableStats,
    MetadataValidation,
    SliceStats,
    metadata_table_stats,
    validate_metadata_table,
)
from hoodie.metadata_table.validate import committed_file_sizes
from hoodie.table import HoodieTable

T = TypeVar("T")
NON_PARTITIONED_LABEL = "(non-partitioned)"
ROOT_NAMES = ("", ".")  # how users name a non-partitioned table's only partition


def _timed(work: Callable[[], T]) -> tuple[T, float]:
    start = time.perf_counter()
    result = work()
    return result, time.perf_counter() - start


def _took(seconds: float) -> str:
    return f"{seconds:.3f} s"


def _label(partition: str) -> str:
    return partition or NON_PARTITIONED_LABEL


def _say(line: str) -> None:
    stdout_console().print(Text(line), soft_wrap=True)


# --- list-partitions ------------------------------------------------------------------------------


class _Lister:
    """What ``list-partitions`` and ``list-files`` read: the metadata table, or, when it is
    out of sync with the table (a stale answer), storage through the local view, with a
    note saying so."""

    def __init__(self, path: str) -> None:
        table = HoodieTable.open(path)
        self.out_of_sync: tuple[str, ...] = ()
        try:
            self.reader: MetadataTableReader | None = MetadataTableReader(table)
        except MetadataOutOfSyncError as exc:
            note(f"note: {exc}; listing storage instead")
            self.reader, self.out_of_sync, self.view = None, exc.instants, table.local_view()

    @property
    def where(self) -> str:
        return "in the metadata table" if self.reader is not None else "on storage (the metadata table is out of sync)"

    def json(self) -> dict[str, Any]:
        return {"source": "metadata_table" if self.reader is not None else "storage", "out_of_sync": list(self.out_of_sync)}

    def partitions(self) -> list[str]:
        return self.reader.all_partition_paths() if self.reader is not None else self.view.all_partition_paths()

    def files_in(self, partition: str) -> dict[str, int]:
        return self.reader.files_in(partition) if self.reader is not None else committed_file_sizes(self.view, partition)


def list_partitions(path: str, compare: bool, as_json: bool) -> None:
    """The data partitions the metadata table lists (and storage's, with ``compare``)."""

    def lookup() -> tuple[_Lister, list[str]]:
        lister = _Lister(path)
        return lister, lister.partitions()

    (lister, partitions), seconds = _timed(lookup)
    # what storage holds, even where committed files are gone (that is a difference to show)
    on_storage = HoodieTable.open(path).local_view(ignore_missing_files=True).all_partition_paths() if compare else None
    only_mdt = sorted(set(partitions) - set(on_storage)) if on_storage is not None else []
    only_storage = sorted(set(on_storage) - set(partitions)) if on_storage is not None else []
    if as_json:
        out: dict[str, Any] = {"path": path, "partitions": partitions, **lister.json(), "duration_s": seconds}
        if on_storage is not None:
            out.update(storage_partitions=on_storage, only_in_metadata_table=only_mdt, only_on_storage=only_storage)
        print_json(out)
    else:
        listing = Table(title=f"Partitions {lister.where} of {path}", title_justify="left")
        listing.add_column("Partition", overflow="fold")
        if on_storage is not None:
            listing.add_column("Metadata table")
            listing.add_column("Storage")
        for p in sorted(set(partitions) | set(on_storage or [])):
            cells = [_label(p)]
            if on_storage is not None:
                cells += ["yes" if p in partitions else "no", "yes" if p in on_storage else "no"]
            listing.add_row(*cells)
        print_table(listing)
        _say(f"{len(partitions)} partition(s) {lister.where}, listed in {_took(seconds)}")
        if on_storage is not None:
            verdict = "the same" if not (only_mdt or only_storage) else f"{len(only_mdt)} only in the metadata table, {len(only_storage)} only on storage"
            _say(f"{len(on_storage)} partition(s) on storage: {verdict}")
    # (compared with an out-of-sync metadata table, storage differs from it)
    if only_mdt or only_storage or (compare and lister.out_of_sync):
        raise typer.Exit(EXIT_FAILURE)


# --- list-files -----------------------------------------------------------------------------------


def list_files(path: str, partition: str | None, as_json: bool) -> None:
    """The files (and sizes) the metadata table lists in one data partition."""

    def lookup() -> tuple[_Lister, str, dict[str, int]]:
        lister = _Lister(path)
        wanted = _partition(path, partition, lister.partitions())
        return lister, wanted, lister.files_in(wanted)

    (lister, wanted, files), seconds = _timed(lookup)
    total = sum(files.values())
    if as_json:
        print_json({"path": path, "partition": wanted, "files": [{"name": n, "size": files[n]} for n in sorted(files)],
                    "total_bytes": total, **lister.json(), "duration_s": seconds})
        return
    listing = Table(title=f"Files of partition {_label(wanted)} {lister.where} of {path}", title_justify="left")
    listing.add_column("File", overflow="fold")
    listing.add_column("Size", justify="right")
    listing.add_column("Bytes", justify="right")
    for name in sorted(files):
        listing.add_row(name, human_size(files[name]), str(files[name]))
    print_table(listing)
    _say(f"{len(files)} file(s), {human_size(total)}, listed in {_took(seconds)}")


def _partition(path: str, partition: str | None, known: list[str]) -> str:
    """The partition ``--partition`` names (the root of a non-partitioned table when
    omitted there), checked against the metadata table's partitions."""
    if partition is None:
        if known == [""]:
            return ""
        raise UsageError(f"--partition is required: the metadata table of {path} lists {_shown(known)}")
    wanted = "" if partition.strip("/") in ROOT_NAMES else partition.strip("/")
    if wanted not in known:
        raise UsageError(f"no partition {partition!r} in the metadata table of {path} (partitions: {_shown(known)})")
    return wanted


def _shown(partitions: list[str]) -> str:
    names = [repr(p) for p in partitions[:10]] + (["..."] if len(partitions) > 10 else [])
    return ", ".join(names) or "none"


# --- stats ----------------------------------------------------------------------------------------


def stats(path: str, as_json: bool) -> None:
    """Partitions, latest slices and timeline of the metadata table; the metrics of the
    command's own work and the figures the metadata timeline recorded."""
    metrics = MetadataMetrics()

    def gather() -> tuple[MetadataTableStats, int | None]:
        table = HoodieTable.open(path)
        report = metadata_table_stats(table, metrics)
        # as Hudi's "metadata stats" counts them: the files partition's answer
        complete = FILES in table.config.metadata_partitions
        # (one out of sync is described too: what it lacks is in the report)
        return report, len(MetadataTableReader(table, metrics, check_sync=False).all_partition_paths()) if complete else None

    (report, data_partitions), seconds = _timed(gather)
    if as_json:
        print_json({
            **asdict(report), "partition_states": _states(report), "data_partitions": data_partitions,
            "metrics": metrics_json(metrics), "duration_s": seconds,
        })
        return
    summary = Table(title=f"Metadata table {report.path}", title_justify="left")
    for column in ("Partition", "State", "File groups", "Base size", "Base records", "Log files", "Log size", "Log blocks", "Log records"):
        summary.add_column(column, justify="left" if column in ("Partition", "State") else "right")
    for partition, state in _states(report).items():
        slices = [s for s in report.slices if s.partition == partition]
        summary.add_row(
            partition, state, str(len(slices)), human_size(sum(s.base_file_size or 0 for s in slices)),
            str(sum(s.base_records or 0 for s in slices)), str(sum(s.log_files for s in slices)),
            human_size(sum(s.log_bytes for s in slices)), str(sum(s.log_blocks for s in slices)), str(sum(s.log_records for s in slices)),
        )
    print_table(summary)
    if report.slices:
        print_table(_slices_table(report.slices))
    last = f"{report.last_completed[0]} ({report.last_completed[1]})" if report.last_completed else "none"
    pending = ", ".join(f"{t} ({a}, {s})" for t, a, s in report.pending) or "none"
    _say(f"Last completed instant: {last}; pending: {pending}")
    if report.unsynced:
        _say(f"Out of sync: no delta commit for the data table's completed instant(s) {', '.join(report.unsynced)} (readers list storage instead)")
    corrupt = sum(s.corrupt_blocks for s in report.slices)
    if corrupt:
        _say(f"{corrupt} corrupt log block(s) (partial writes a reader skips)")
    if data_partitions is not None:
        _say(f"{data_partitions} data partition(s) in the files partition")
    if report.history:
        print_table(_history_table(report.history))
    print_table(metrics_table(metrics, "Metadata table work of this command"))
    _say(f"Gathered in {_took(seconds)}")


def _states(report: MetadataTableStats) -> dict[str, str]:
    """Each metadata partition (on storage or named by the data table) and its state:
    complete, inflight (being built), or on storage only (readers ignore it)."""
    names = sorted(set(report.on_storage) | set(report.complete) | set(report.inflight))
    return {p: "complete" if p in report.complete else "inflight" if p in report.inflight else "not listed" for p in names}


def _slices_table(slices: tuple[SliceStats, ...]) -> Table:
    out = Table(title="Latest slice of each file group", title_justify="left")
    for column in ("Partition", "File group", "Base instant", "Base size", "Base records", "Logs", "Blocks", "Log records"):
        out.add_column(column, overflow="fold", justify="left" if column in ("Partition", "File group", "Base instant") else "right")
    for s in slices:
        out.add_row(
            s.partition, s.file_id, s.base_instant, human_size(s.base_file_size), "-" if s.base_records is None else str(s.base_records),
            str(s.log_files), str(s.log_blocks), str(s.log_records),
        )
    return out


def _history_table(history: tuple[ActionFigures, ...]) -> Table:
    out = Table(title="Recorded by the metadata table's completed instants (active timeline)", title_justify="left")
    columns = ("Action", "Instants", "Files written", "Records written", "Bytes written", "Log files compacted",
               "Log bytes compacted", "Files deleted", "Time")
    for column in columns:
        out.add_column(column, justify="left" if column == "Action" else "right")
    for f in history:
        out.add_row(
            f.action, str(f.instants), str(f.files_written), str(f.records_written), human_size(f.bytes_written),
            str(f.log_files_compacted), human_size(f.log_bytes_compacted), str(f.files_deleted), _took(f.milliseconds / 1000),
        )
    return out


def metrics_table(metrics: MetadataMetrics, title: str) -> Table:
    """``metrics``' figures, one row per metric and label value."""
    out = Table(title=title, title_justify="left")
    for column in ("Metric", "By", "Count", "Time", "Amounts"):
        out.add_column(column, overflow="fold", justify="right" if column in ("Count", "Time") else "left")
    for metric, label, figure in metrics.figures():
        by = f"{metric.label}={label}" if metric.label else ""
        amounts = ", ".join(f"{name.replace('_', ' ')} {_amount(name, figure.amounts.get(name, 0))}" for name in metric.amounts)
        out.add_row(metric.name, by, str(figure.count), _took(figure.seconds), amounts)
    return out


def _amount(name: str, value: int) -> str:
    return human_size(value) if name.endswith("bytes") else str(value)


def metrics_json(metrics: MetadataMetrics) -> list[dict[str, Any]]:
    """``metrics``' figures as JSON objects."""
    return [
        {"metric": m.name, "label": m.label or None, "value": label if m.label else None, "count": f.count, "seconds": f.seconds,
         **{name: f.amounts.get(name, 0) for name in m.amounts}}
        for m, label, f in metrics.figures()
    ]


# --- validate -------------------------------------------------------------------------------------


def validate(
    path: str, partitions: list[str] | None, checks: list[str] | None, as_json: bool, rebuild: Callable[[str], list[str]] | None = None
) -> None:
    """Compare the metadata table with the data; exit 1 on any difference. ``rebuild``
    (``--repair``): when there is any, rebuild the metadata table of ``path`` with it
    (it returns the partitions built) and validate it again (exit 1 when differences
    remain)."""
    wanted = ["" if p.strip("/") in ROOT_NAMES else p.strip("/") for p in partitions] if partitions else None
    report, seconds = _validated(path, checks, wanted)
    if rebuild is not None and not report.ok:
        if not as_json:
            _show(report, seconds)
        partitions_rebuilt, rebuild_seconds = _timed(lambda: rebuild(path))
        before = report
        report, seconds = _validated(path, checks, wanted)
        if as_json:
            repaired = {"partitions": partitions_rebuilt, "differences_before": len(before.differences),
                        "out_of_sync_before": list(before.out_of_sync), "duration_s": rebuild_seconds}
            print_json({**asdict(report), "ok": report.ok, "repaired": repaired, "duration_s": seconds})
        else:
            _say(f"Rebuilt the metadata table ({', '.join(partitions_rebuilt)}) from a listing in {_took(rebuild_seconds)}; validated again:")
            _show(report, seconds)
    elif as_json:
        print_json({**asdict(report), "ok": report.ok, "duration_s": seconds})
    else:
        _show(report, seconds)
        if rebuild is not None:
            _say("Nothing to repair")
    if not report.ok:
        raise typer.Exit(EXIT_FAILURE)


def _validated(path: str, checks: list[str] | None, partitions: list[str] | None) -> tuple[MetadataValidation, float]:
    def run() -> MetadataValidation:
        table = HoodieTable.open(path)
        with progress(f"validate the metadata table of {path}") as display:
            bars: dict[str, Any] = {}

            def advance(check: str, partition: str, done: int, total: int) -> None:
                if check not in bars:
                    bars[check] = display.add_task(check, total=total)
                display.update(bars[check], completed=done)

            return validate_metadata_table(table, checks, partitions, on_progress=advance)

    return _timed(run)


def _show(report: MetadataValidation, seconds: float) -> None:
    if report.differences:
        print_table(_differences_table(report))
    counted = (
        f"{len(report.partitions)} partition(s): {report.files_checked} file(s), {report.statistics_checked} column statistic(s), "
        f"{report.filters_checked} bloom filter(s), {report.keys_checked} key(s)"
    )
    if report.out_of_sync:
        _say(f"Out of sync: no delta commit for the data table's completed instant(s) {', '.join(report.out_of_sync)}")
    verdict = "no difference" if not report.differences else f"{len(report.differences)} difference(s)"
    _say(f"{verdict} ({', '.join(report.checks)}) in {counted}, checked in {_took(seconds)}")


def _differences_table(report: MetadataValidation) -> Table:
    out = Table(title=f"Differences between the metadata table of {report.base_path} and its data", title_justify="left")
    for column in ("Check", "Partition", "File", "Key", "Column", "Data", "Metadata table"):
        out.add_column(column, overflow="fold")
    for d in report.differences:
        out.add_row(d.check, _label(d.partition), d.file or "", d.key or "", d.column or "", d.data, d.metadata)
    return out
