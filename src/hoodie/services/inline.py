"""Table services a writer runs right after its commit, as Hudi's inline services do:
compaction (``hoodie.compact.inline``) for merge-on-read tables.

Each service decides for itself whether it should run; the decisions are returned so that
callers (and ``hoodie explain``) can say why something did or did not happen.
"""
from __future__ import annotations

from dataclasses import dataclass

from hoodie.config import options as o
from hoodie.config.options import HoodieConfig
from hoodie.engine.base import Engine
from hoodie.formats.parquet import BloomSettings, ParquetSettings
from hoodie.services.compaction import CompactionSettings, compact
from hoodie.table.table import HoodieTable


def compaction_settings(config: HoodieConfig) -> CompactionSettings:
    return CompactionSettings(
        strategy=config.get(o.COMPACTION_STRATEGY),
        target_io_mb=config.get(o.COMPACTION_TARGET_IO),
        max_delta_commits=config.get(o.COMPACT_MAX_DELTA_COMMITS),
        parquet=ParquetSettings(config.get(o.PARQUET_CODEC), config.get(o.PARQUET_PAGE_SIZE), config.get(o.PARQUET_BLOCK_SIZE)),
        bloom=BloomSettings(config.get(o.BLOOM_NUM_ENTRIES), config.get(o.BLOOM_FPP), config.get(o.BLOOM_FILTER_TYPE), config.get(o.BLOOM_MAX_ENTRIES)),
    )


@dataclass(frozen=True)
class ServiceReport:
    service: str
    ran: bool
    detail: str


def run_inline_services(table: HoodieTable, config: HoodieConfig, engine: Engine | None = None) -> list[ServiceReport]:
    """Run the services the options enable, in Hudi's order (compaction first)."""
    reports: list[ServiceReport] = []
    if table.table_type == "MERGE_ON_READ" and config.get(o.COMPACT_INLINE):
        metadata, decision = compact(table.reload(), compaction_settings(config), engine)
        reports.append(ServiceReport("compaction", metadata is not None, decision.reason))
    return reports
