"""``hoodie metadata create | delete | init``: build, drop or rebuild a table's metadata
table, each printing how long it took.

``create`` builds the metadata table of a table that has none (the partitions the
``-o hoodie.metadata.*`` options enable; ``files`` always) from one listing, as a write
with ``hoodie.metadata.enable=true`` does; ``init`` deletes the metadata table and builds
it again (a progress bar per partition built), both then print the metrics of each
partition built; ``delete`` removes it (the table's ``hoodie.properties`` stops naming
it first). Building refuses a table with a write in
progress: that writer would complete without updating the new metadata table.
:func:`rebuild_as_it_was` builds the partitions a table had again, for ``hoodie metadata
validate --repair``.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, replace
from typing import Any, Literal

from hoodie.cli.errors import UsageError
from hoodie.cli.metadata import metrics_json, metrics_table
from hoodie.cli.output import print_json, print_table, progress, stdout_console
from hoodie.config.options import HoodieConfig
from hoodie.metadata_table.metrics import MetadataMetrics
from hoodie.metadata_table.settings import MetadataSettings
from hoodie.metadata_table.sync import initialise, setup_lock, with_metadata_sync
from hoodie.metadata_table.writer import delete_metadata_table, metadata_path
from hoodie.table import HoodieTable
from hoodie.timeline import Action


def _settings(config: HoodieConfig) -> MetadataSettings:
    """The options' metadata settings, the metadata table on whatever they say of it."""
    return replace(MetadataSettings.of(config), enable=True)


@dataclass(frozen=True)
class Words:
    """What a command does to the metadata table: ``verb`` in a refusal ("cannot rebuild
    the metadata table of ..."), ``doing`` in its progress, ``done`` in its last line."""

    verb: str
    doing: str
    done: str


CREATE = Words("create", "Creating", "Created")
INIT = Words("initialise", "Initialising", "Initialised")
REBUILD = Words("rebuild", "Rebuilding", "Rebuilt")


def _refuse_pending(table: HoodieTable, verb: str) -> None:
    pending = table.timeline.pending(Action.WRITE_ACTIONS)
    if pending:
        raise UsageError(
            f"cannot {verb} the metadata table of {table.base_path}: write {pending[0].timestamp} ({pending[0].action}) is in progress; "
            "run this once it completed (or the next write rolled it back)"
        )


def _build(
    table: HoodieTable, settings: MetadataSettings, words: Words, metrics: MetadataMetrics, existing: Literal["replace", "refuse"]
) -> tuple[HoodieTable, float]:
    """Build ``settings``' partitions from one listing, under the commit lock: no writer's
    update of the metadata table lands in between. A metadata table there is deleted first
    (``existing="replace"``) or refused (``"refuse"``), decided on the table as it is under
    the lock. A table hoodie cannot write, or with a write in progress, is refused before
    anything is written (the lock included) or deleted. ``words`` say what is done, in the
    progress shown and in a refusal."""
    started = time.perf_counter()
    table.require_writable(f"{words.verb} the metadata table of")
    with setup_lock(table) as table:
        _refuse_pending(table, words.verb)
        if existing == "replace":
            table = delete_metadata_table(table)
        elif table.config.metadata_partitions:
            raise UsageError(
                f"{table.base_path} already has a metadata table ({','.join(table.config.metadata_partitions)}); "
                "'hoodie metadata init' builds it again"
            )
        with progress(f"{words.doing} the metadata table of {table.name}") as display:
            bar = display.add_task("partitions built", total=len(settings.partitions))

            def built(partition: str, done: int, total: int) -> None:
                display.update(bar, completed=done, total=total, description=f"built {partition}")

            table = initialise(with_metadata_sync(table, settings), settings, built, metrics)
    return table, time.perf_counter() - started


def _report(verb: str, table: HoodieTable, seconds: float, as_json: bool, metrics: MetadataMetrics) -> None:
    partitions = list(table.config.metadata_partitions)
    if as_json:
        out: dict[str, Any] = {"path": table.base_path, "partitions": partitions, "metrics": metrics_json(metrics), "duration_s": seconds}
        print_json(out)
        return
    print_table(metrics_table(metrics, "Metadata table work of this command"))
    names = ", ".join(partitions) if partitions else "no partition"
    stdout_console().print(f"{verb} the metadata table of {table.name} ({names}) in {seconds:.3f} s", soft_wrap=True, markup=False)


def create(path: str, config: HoodieConfig, as_json: bool) -> None:
    """Build the metadata table of a table that has none."""
    metrics = MetadataMetrics()
    table, seconds = _build(HoodieTable.open(path), _settings(config), CREATE, metrics, existing="refuse")
    _report(CREATE.done, table, seconds, as_json, metrics)


def init(path: str, config: HoodieConfig, as_json: bool) -> None:
    """Delete the metadata table (if any) and build it again from one listing."""
    table = HoodieTable.open(path)
    started = time.perf_counter()
    metrics = MetadataMetrics()
    table = rebuild(table, _settings(config), INIT, metrics)
    _report(INIT.done, table, time.perf_counter() - started, as_json, metrics)


def rebuild(table: HoodieTable, settings: MetadataSettings, words: Words = REBUILD, metrics: MetadataMetrics | None = None) -> HoodieTable:
    """Delete the metadata table (if any) and build ``settings``' partitions again from one
    listing; a table with a write in progress, or one hoodie cannot write, is refused
    before anything is deleted."""
    table, _ = _build(table, settings, words, metrics if metrics is not None else MetadataMetrics(), existing="replace")
    return table


def rebuild_as_it_was(path: str) -> list[str]:
    """Delete the metadata table of the table at ``path`` and build the partitions it had
    again from one listing (Apache Hudi's default layout for each); the partitions built
    (``hoodie metadata validate --repair``)."""
    table = HoodieTable.open(path)
    return list(rebuild(table, MetadataSettings().keeping(table.config.metadata_partitions)).config.metadata_partitions)


def delete(path: str, as_json: bool) -> None:
    """Remove the metadata table."""
    table = HoodieTable.open(path)
    table.require_writable("delete the metadata table of")
    started = time.perf_counter()
    with setup_lock(table) as table:
        had = bool(table.config.metadata_partitions) or table.storage.exists(metadata_path(table))
        table = delete_metadata_table(table)
    seconds = time.perf_counter() - started
    if as_json:
        print_json({"path": table.base_path, "deleted": had, "duration_s": seconds})
        return
    what = "Deleted the metadata table of" if had else "There was no metadata table to delete in"
    stdout_console().print(f"{what} {table.name} in {seconds:.3f} s", soft_wrap=True, markup=False)
