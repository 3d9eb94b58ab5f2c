"""The metadata table's own table services, as Apache Hudi 0.15's metadata writer runs
them (``HoodieBackedTableMetadataWriter.performTableServices``): :func:`run_table_services`.

In order, each at an instant derived from the latest completed delta commit ``t`` of the
metadata table, so that no later delta commit is older than them:

1. a compaction left pending (a crash) is run to completion (:mod:`.compaction`);
2. **clean** at ``t002``, unless a compaction completed fewer than three instants ago
   (readers that opened its older slices keep them a while). Policy: the data table's
   (``hoodie.cleaner.policy``) with more retained, as Hudi's ``createMetadataWriteConfig``
   derives it: ``max(20, 1.2 × hoodie.cleaner.commits.retained)`` commits,
   ``⌈1.2 × hoodie.cleaner.fileversions.retained⌉`` versions or
   ``⌈1.2 × hoodie.cleaner.hours.retained⌉`` hours;
3. **compaction** at ``t001`` when due (:func:`~.compaction.compaction_due`);
4. **archival**: the data table's ``hoodie.keep.min.commits`` and ``hoodie.keep.max.commits``
   plus one, at least one more than the commits the cleaner retains (the cleaner runs only
   when the active timeline holds more than it retains: archived below that, the metadata
   table would never clean, whatever the data table keeps), and never (as for any table)
   beyond what the last clean retains, nor the metadata table's latest compaction or anything after it, nor
   anything at or after the data table's first commit or first pending instant: a data
   instant still on the active timeline may be rolled back, which the metadata table
   undoes by its own delta commits.

Cleaning, archival and the rollback of a failed compaction attempt are the data table's
services run on the metadata table (a table like any other); they live above this
package, so the caller hands them in (:class:`BorrowedServices`;
``hoodie.services.for_metadata`` implements it).

Each compaction and clean that completes is recorded in the metrics the caller gives
(:data:`~.metrics.COMPACTION`: file groups and records written; :data:`~.metrics.CLEAN`:
files deleted), the compaction's slice reads as :data:`~.metrics.SCAN`.

They run under the data table's commit lock, as every change of the metadata table does.
Call it when the data instant of the metadata table's latest delta commit has completed
(after the data commit, or before the next write as Hudi does): a compaction never runs
while a data instant at or before that delta commit is pending.
"""
from __future__ import annotations

import math
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from hoodie.config import options as o
from hoodie.config.options import HoodieConfig
from hoodie.formats.hfile.writer import HFileSettings
from hoodie.layout import InstantTime
from hoodie.metadata_table.compaction import (
    MetadataCompactionSettings,
    compaction_due,
    run_metadata_compaction,
    schedule_metadata_compaction,
)
from hoodie.metadata_table.metrics import CLEAN, COMPACTION, MetadataMetrics
from hoodie.metadata_table.reader import FILES, MetadataTableReader
from hoodie.metadata_table.stats import open_metadata_table
from hoodie.table.table import HoodieTable
from hoodie.timeline.compaction_plan import pending_plans
from hoodie.timeline.instant import Action, Instant
from hoodie.timeline.write_claims import commit_lock

__all__ = [
    "CLEAN_SUFFIX",
    "BorrowedServices",
    "MetadataArchiveRule",
    "MetadataCleanRule",
    "MetadataServiceSettings",
    "MetadataServicesReport",
    "run_table_services",
]

#: the metadata table cleans at ``<latest delta commit>002`` (Hudi's ``createCleanTimestamp``)
CLEAN_SUFFIX = "002"
#: Hudi's ``DEFAULT_METADATA_CLEANER_COMMITS_RETAINED``
_MIN_COMMITS_RETAINED = 20
#: instants that must complete after a compaction before the metadata table cleans again
_CLEAN_AFTER_COMPACTION = 3


@dataclass(frozen=True)
class MetadataCleanRule:
    """The metadata table's cleaning policy (a ``hoodie.cleaner.policy`` name) and retention."""

    policy: str = "KEEP_LATEST_COMMITS"
    commits_retained: int = _MIN_COMMITS_RETAINED
    file_versions_retained: int = 4
    hours_retained: int = 29


@dataclass(frozen=True)
class MetadataArchiveRule:
    """The metadata table's archival: commits kept at least / at most, records a block."""

    min_commits: int = 21
    max_commits: int = 31
    batch_size: int = 10


@dataclass(frozen=True)
class MetadataServiceSettings:
    """What the metadata table's services do, from the data table's write options."""

    compaction: MetadataCompactionSettings = MetadataCompactionSettings()
    clean: MetadataCleanRule = MetadataCleanRule()
    archive: MetadataArchiveRule = MetadataArchiveRule()

    @classmethod
    def of(cls, config: HoodieConfig) -> MetadataServiceSettings:
        return cls(
            MetadataCompactionSettings(
                max_delta_commits=config.get(o.METADATA_COMPACT_MAX_DELTA_COMMITS),
                max_delta_commits_when_pending=config.get(o.METADATA_MAX_DELTA_COMMITS_WHEN_PENDING),
                hfile=HFileSettings(block_size=config.get(o.HFILE_BLOCK_SIZE)),
            ),
            clean := MetadataCleanRule(
                config.get(o.CLEANER_POLICY),
                max(_MIN_COMMITS_RETAINED, int(config.get(o.CLEANER_COMMITS_RETAINED) * 1.2)),
                math.ceil(config.get(o.CLEANER_FILE_VERSIONS_RETAINED) * 1.2),
                math.ceil(config.get(o.CLEANER_HOURS_RETAINED) * 1.2),
            ),
            _archive_rule(config, clean),
        )


def _archive_rule(config: HoodieConfig, clean: MetadataCleanRule) -> MetadataArchiveRule:
    """The data table's ``hoodie.keep.min.commits`` and ``hoodie.keep.max.commits`` plus
    one (Apache Hudi 0.15's ``createMetadataWriteConfig``), raised so that the cleaner
    retaining commits always finds more commits on the active timeline than it retains.
    Taken as they are, a data table keeping fewer commits than the metadata table's
    cleaner retains (at least 20) would have its metadata table archived below that count
    before any clean: that cleaner would never run and the metadata table's slices would
    pile up without bound."""
    keep_min, keep_max = config.get(o.KEEP_MIN_COMMITS), config.get(o.KEEP_MAX_COMMITS)
    least = keep_min + 1
    if clean.policy == "KEEP_LATEST_COMMITS":
        least = max(least, clean.commits_retained + 1)
    return MetadataArchiveRule(least, max(keep_max + 1, least + keep_max - keep_min), config.get(o.ARCHIVAL_BATCH))


class BorrowedServices(Protocol):
    """The data table's services the metadata table runs on itself."""

    def rollback_compaction_attempt(self, table: HoodieTable, inflight: Instant, partitions: Iterable[str]) -> object:
        """Roll back a failed attempt of the compaction ``inflight`` of ``table`` (its files
        deleted, the instant back to requested)."""

    def clean(self, table: HoodieTable, instant: str, rule: MetadataCleanRule) -> object:
        """Finish a pending clean of ``table``, or clean it by ``rule`` at ``instant``;
        what was deleted, or why nothing was."""

    def archive(self, table: HoodieTable, rule: MetadataArchiveRule, limits: Sequence[tuple[str, str]]) -> object:
        """Archive ``table``'s oldest instants by ``rule``, none at or after any of
        ``limits`` ((instant, why) pairs); what moved, or why nothing did."""


@dataclass
class MetadataServicesReport:
    """What ran on the metadata table, and why the rest did not."""

    compactions: list[str] = field(default_factory=list)  # instants completed
    notes: list[str] = field(default_factory=list)
    clean: object = None
    archive: object = None


def run_table_services(
    data_table: HoodieTable, settings: MetadataServiceSettings, services: BorrowedServices, metrics: MetadataMetrics | None = None
) -> MetadataServicesReport:
    """Run the metadata table's services that are due (see the module's doc); what ran
    recorded in ``metrics``. They run under the data table's commit lock, on the tables as
    they are then: no other writer's delta commit, compaction or clean interleaves."""
    with commit_lock(data_table.storage, data_table.base_path, "metadata-table-services"):
        # (the caller's timeline may predate its own commit, or another writer's)
        return _run(data_table.reload(), settings, services, metrics if metrics is not None else MetadataMetrics())


def _run(data_table: HoodieTable, settings: MetadataServiceSettings, services: BorrowedServices, metrics: MetadataMetrics) -> MetadataServicesReport:
    report = MetadataServicesReport()
    if FILES not in data_table.config.metadata_partitions:
        report.notes.append(f"{data_table.base_path} has no complete metadata table")
        return report
    mdt = open_metadata_table(data_table)
    mdt.require_writable("run table services on")
    for inst, _ in pending_plans(mdt.timeline):
        _compact(data_table, inst.timestamp, settings, services, metrics)
        report.compactions.append(inst.timestamp)
    # (the metadata table is loaded again only after a service changed it: each load lists
    # its timeline, and most writes find nothing due)
    mdt = mdt.reload() if report.compactions else mdt
    deltas = mdt.timeline.completed([Action.DELTA_COMMIT])
    if not deltas:
        report.notes.append("the metadata table has no completed delta commit")
        return report
    latest = deltas[-1].timestamp
    _clean(mdt, latest, settings.clean, services, report, metrics)

    mdt = mdt.reload() if report.clean is not None else mdt
    instant, why = compaction_due(data_table, mdt, settings.compaction)
    report.notes.append(f"compaction: {why}")
    # (the services keep the metadata table as it is, in sync or not: readers judge that)
    if instant is not None and schedule_metadata_compaction(MetadataTableReader(data_table, metrics, check_sync=False), instant) is not None:
        _compact(data_table, instant, settings, services, metrics)
        report.compactions.append(instant)
        mdt = mdt.reload()
    report.archive = services.archive(mdt, settings.archive, archive_limits(data_table, mdt))
    return report


def _compact(data_table: HoodieTable, instant: str, settings: MetadataServiceSettings, services: BorrowedServices, metrics: MetadataMetrics) -> None:
    started = time.perf_counter()
    done = run_metadata_compaction(data_table, instant, settings.compaction, services.rollback_compaction_attempt, metrics)
    stats = done.write_stats()
    metrics.record(COMPACTION, "", time.perf_counter() - started, file_groups=len(stats), records=sum(s.numWrites for s in stats))


def _clean(
    mdt: HoodieTable, latest: str, rule: MetadataCleanRule, services: BorrowedServices, report: MetadataServicesReport, metrics: MetadataMetrics
) -> None:
    timeline = mdt.timeline
    compactions = timeline.completed([Action.COMMIT])
    if compactions:
        after = [i for i in timeline.completed() if i.time > compactions[-1].time]
        if len(after) < _CLEAN_AFTER_COMPACTION:
            report.notes.append(
                f"clean: {len(after)} instants completed since compaction {compactions[-1].timestamp}; "
                f"the metadata table cleans after {_CLEAN_AFTER_COMPACTION}"
            )
            return
    instant = latest + CLEAN_SUFFIX
    if timeline.contains(instant):
        report.notes.append(f"clean: the clean at {instant} already ran")
        return
    started = time.perf_counter()
    report.clean = services.clean(mdt, instant, rule)
    timeline = timeline.reload()
    if timeline.contains(instant) and (done := timeline.get(instant)).is_completed:
        # what the clean deleted, as its metadata records it (a clean with nothing to
        # delete leaves no instant)
        metrics.record(CLEAN, "", time.perf_counter() - started, files=timeline.clean_metadata(done).total_files_deleted)


def archive_limits(data_table: HoodieTable, mdt: HoodieTable) -> list[tuple[str, str]]:
    """(instant, why): what the metadata table's archival must keep, from each on."""
    limits: list[tuple[str, str]] = []
    data = data_table.timeline
    commits = data.filter(Action.WRITE_ACTIONS)
    if commits:
        limits.append((commits[0].timestamp, f"the data table's first commit on its active timeline ({commits[0].timestamp})"))
    pending = data.pending()
    if pending:
        limits.append((pending[0].timestamp, f"the data table's pending {pending[0].action} {pending[0].timestamp}"))
    compactions = mdt.timeline.completed([Action.COMMIT])
    if compactions:
        limits.append((compactions[-1].timestamp, f"the metadata table's latest compaction ({compactions[-1].timestamp})"))
    else:
        firsts = mdt.timeline.completed([Action.DELTA_COMMIT])
        if firsts:
            limits.append((firsts[0].timestamp, "the metadata table has not compacted yet: its delta commits count toward the first"))
    return sorted(limits, key=lambda lim: InstantTime(lim[0]))
