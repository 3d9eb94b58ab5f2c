"""Table services a writer runs right after its commit, as Hudi's inline services do:
compaction (``hoodie.compact.inline``: any pending compaction, then a new one) for
merge-on-read tables, then cleaning
(``hoodie.clean.automatic``) and archival (``hoodie.archive.automatic``); then, on a table
keeping a metadata table, the metadata table's own services (its compaction, cleaning and
archival, :mod:`hoodie.metadata_table.services`), once the data instant of its latest
delta commit has completed.

Each service decides for itself whether it should run; the decisions are returned so that
callers (and ``hoodie explain``) can say why something did or did not happen. A service
that fails raises :class:`~hoodie.errors.TableServiceError` naming it and the commit it
followed: the commit stands, and the writer reports the failure as a warning.
"""
from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

from hoodie.config import options as o
from hoodie.config.options import HoodieConfig
from hoodie.engine.base import Engine
from hoodie.errors import TableServiceError
from hoodie.formats.parquet import BloomSettings, ParquetSettings
from hoodie.metadata_table.services import MetadataServiceSettings, run_table_services
from hoodie.services.archival import ArchiveSettings, archive
from hoodie.services.clean_plan import CleanPolicy, CleanSettings
from hoodie.services.cleaning import clean
from hoodie.services.compaction import CompactionSettings, compact, pending_compactions, run_compaction
from hoodie.services.for_metadata import METADATA_SERVICES
from hoodie.table.table import HoodieTable


def compaction_settings(config: HoodieConfig) -> CompactionSettings:
    return CompactionSettings(
        strategy=config.get(o.COMPACTION_STRATEGY),
        target_io_mb=config.get(o.COMPACTION_TARGET_IO),
        max_delta_commits=config.get(o.COMPACT_MAX_DELTA_COMMITS),
        parquet=ParquetSettings(config.get(o.PARQUET_CODEC), config.get(o.PARQUET_PAGE_SIZE), config.get(o.PARQUET_BLOCK_SIZE)),
        bloom=BloomSettings(config.get(o.BLOOM_NUM_ENTRIES), config.get(o.BLOOM_FPP), config.get(o.BLOOM_FILTER_TYPE), config.get(o.BLOOM_MAX_ENTRIES)),
    )


def clean_settings(config: HoodieConfig) -> CleanSettings:
    return CleanSettings(
        policy=CleanPolicy(config.get(o.CLEANER_POLICY)),
        commits_retained=config.get(o.CLEANER_COMMITS_RETAINED),
        file_versions_retained=config.get(o.CLEANER_FILE_VERSIONS_RETAINED),
        hours_retained=config.get(o.CLEANER_HOURS_RETAINED),
        incremental=bool(config.get(o.CLEANER_INCREMENTAL)),
    )


def archive_settings(config: HoodieConfig) -> ArchiveSettings:
    return ArchiveSettings(config.get(o.KEEP_MIN_COMMITS), config.get(o.KEEP_MAX_COMMITS), config.get(o.ARCHIVAL_BATCH))


def validate_service_settings(config: HoodieConfig) -> None:
    """Check the services' options before a write commits, so that a bad value is refused
    up front instead of failing after the data is in."""
    compaction_settings(config)
    clean_settings(config)
    archive_settings(config)


@dataclass(frozen=True)
class ServiceReport:
    service: str
    ran: bool
    detail: str


T = TypeVar("T")


def run_inline_services(table: HoodieTable, config: HoodieConfig, engine: Engine | None = None, after: str = "") -> list[ServiceReport]:
    """Run the services the options enable, in Hudi's order: compaction, clean, archive,
    after the commit of instant ``after``. The first that fails raises
    :class:`~hoodie.errors.TableServiceError`; the later ones do not run (archiving
    commits whose old files a failed clean left would leave those files to no clean)."""

    def run(service: str, call: Callable[[], T]) -> T:
        try:
            return call()
        except Exception as e:
            raise TableServiceError(service, after, e) from e

    reports: list[ServiceReport] = []
    if table.table_type == "MERGE_ON_READ" and config.get(o.COMPACT_INLINE):
        # compactions left pending (a writer killed in one, or scheduled alone) run first,
        # as Hudi's runAnyPendingCompactions: a new plan leaves their slices out
        def finish(instant: str) -> object:
            return run_compaction(table.reload(), instant, compaction_settings(config), engine)

        for pending, _ in run("compaction", lambda: pending_compactions(table.reload())):
            run("compaction", functools.partial(finish, pending.timestamp))
            reports.append(ServiceReport("compaction", True, f"the pending compaction {pending.timestamp} completed"))
        metadata, decision = run("compaction", lambda: compact(table.reload(), compaction_settings(config), engine))
        reports.append(ServiceReport("compaction", metadata is not None, decision.reason))
    if config.get(o.CLEAN_AUTOMATIC) and not config.get(o.CLEAN_ASYNC):  # (async: it ran beside the write)
        result = run("clean", lambda: clean(table.reload(), clean_settings(config), engine))
        reports.append(ServiceReport("clean", bool(getattr(result, "ran", False)), describe(result)))
    if config.get(o.ARCHIVE_AUTOMATIC):
        archived = run("archive", lambda: archive(table.reload(), archive_settings(config)))
        reports.append(ServiceReport("archive", bool(getattr(archived, "ran", False)), describe(archived)))
    # (the write began by keeping or dropping the metadata table: its config says which)
    if table.config.metadata_partitions:
        current = table.reload()
        done = run("metadata table services", lambda: run_table_services(current, MetadataServiceSettings.of(config), METADATA_SERVICES))
        reports.append(ServiceReport("metadata table services", bool(done.compactions), "; ".join(done.notes)))
    return reports


def describe(result: object) -> str:
    """What a service's result says happened."""
    return str(getattr(result, "reason", None) or result)
