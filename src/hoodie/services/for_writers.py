"""The table services a write runs (:class:`~hoodie.writer.table_services.TableServices`):
restore and rollback recovery before it, the clean beside it (``hoodie.clean.async``),
rollback of its own failed instant, the inline services after it. ``hoodie.api`` and ``hoodie.spark`` hand :data:`WRITER_SERVICES` to
the write client."""
from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from hoodie.config.options import HoodieConfig
from hoodie.engine.base import Engine
from hoodie.services.beside_write import CleanBesideWrite, cleans_beside_write
from hoodie.services.inline import run_inline_services, validate_service_settings
from hoodie.services.restore import resume_restore
from hoodie.services.rollback import rollback_failed_writes, rollback_instant
from hoodie.table.table import HoodieTable
from hoodie.timeline.instant import Instant


@dataclass(frozen=True)
class WriterServices:
    def check_settings(self, config: HoodieConfig) -> None:
        validate_service_settings(config)

    def recover(self, table: HoodieTable) -> HoodieTable:
        if resume_restore(table) is not None:  # never write over a half-restored table
            table = table.reload()
        if rollback_failed_writes(table):
            table = table.reload()
        return table

    def roll_back(self, table: HoodieTable, instant: Instant, partitions: Iterable[str] = ()) -> None:
        rollback_instant(table, instant, partitions)

    def beside_write(self, table: HoodieTable, config: HoodieConfig, engine: Engine | None, instant: str) -> CleanBesideWrite | None:
        return CleanBesideWrite(table, config, engine, instant) if cleans_beside_write(config) else None

    def after_commit(self, table: HoodieTable, config: HoodieConfig, engine: Engine | None, instant: str) -> None:
        run_inline_services(table, config, engine, after=instant)


WRITER_SERVICES = WriterServices()
