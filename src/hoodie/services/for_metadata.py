"""The table services the metadata table runs on itself
(:class:`~hoodie.metadata_table.services.BorrowedServices`): rollback of a failed
compaction attempt, cleaning at a given instant, archival with the metadata table's
limits. Whoever runs the metadata table's services hands :data:`METADATA_SERVICES` to
:func:`~hoodie.metadata_table.services.run_table_services`."""
from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from hoodie.metadata_table.services import MetadataArchiveRule, MetadataCleanRule
from hoodie.services.archival import ArchiveResult, ArchiveSettings, archive
from hoodie.services.clean_plan import CleanPolicy, CleanSettings
from hoodie.services.cleaning import CleanResult, clean
from hoodie.services.decision import ServiceDecision
from hoodie.services.rollback import RollbackResult, rollback_compaction_attempt
from hoodie.table.table import HoodieTable
from hoodie.timeline.instant import Instant


@dataclass(frozen=True)
class MetadataServices:
    def rollback_compaction_attempt(self, table: HoodieTable, inflight: Instant, partitions: Iterable[str]) -> RollbackResult:
        return rollback_compaction_attempt(table, inflight, partitions)

    def clean(self, table: HoodieTable, instant: str, rule: MetadataCleanRule) -> CleanResult | ServiceDecision:
        settings = CleanSettings(CleanPolicy(rule.policy), rule.commits_retained, rule.file_versions_retained, rule.hours_retained)
        return clean(table, settings, at=instant)

    def archive(self, table: HoodieTable, rule: MetadataArchiveRule, limits: Sequence[tuple[str, str]]) -> ArchiveResult | ServiceDecision:
        return archive(table, ArchiveSettings(rule.min_commits, rule.max_commits, rule.batch_size), limits)


METADATA_SERVICES = MetadataServices()
