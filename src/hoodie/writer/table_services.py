"""What a write needs of the table services, as a protocol the write client is given.

A write checks the services' options before it starts, finishes an interrupted restore
and rolls back failed writes before it begins, starts the services the options run beside
it (``hoodie.clean.async``: the clean) once its instant exists, rolls back its own instant
if it fails, and runs the inline services (compaction, clean, archive) after it commits,
once those beside it are done (a service that fails does not fail the committed write: it
is reported as a warning). Those services
live beside the writer (``hoodie.services``), not below it: the engines that run a write
(``hoodie.api``, ``hoodie.spark``) pass them in, so this package never imports them.
"""
from __future__ import annotations

from collections.abc import Iterable
from typing import Protocol

from hoodie.config.options import HoodieConfig
from hoodie.engine.base import Engine
from hoodie.table.table import HoodieTable
from hoodie.timeline.instant import Instant


class RunningService(Protocol):
    def wait(self) -> None:
        """Wait for the service to end; one that failed raises
        :class:`~hoodie.errors.TableServiceError` naming it."""


class TableServices(Protocol):
    def check_settings(self, config: HoodieConfig) -> None:
        """Refuse bad service options before anything is written."""

    def recover(self, table: HoodieTable) -> HoodieTable:
        """Finish an interrupted restore and roll back failed writes; the table, reloaded
        if either changed it."""

    def roll_back(self, table: HoodieTable, instant: Instant, partitions: Iterable[str] = ()) -> None:
        """Roll back ``instant``, a write of this writer that failed before completing;
        ``partitions``, those it wrote to, are listed for its files."""

    def beside_write(self, table: HoodieTable, config: HoodieConfig, engine: Engine | None, instant: str) -> RunningService | None:
        """Start the services the options run beside write ``instant`` (on threads of
        their own), which exists as a requested instant; None when there are none."""

    def after_commit(self, table: HoodieTable, config: HoodieConfig, engine: Engine | None, instant: str) -> None:
        """Run the services the options enable inline (compaction, clean, archive) after
        the commit of ``instant``; a failing one raises
        :class:`~hoodie.errors.TableServiceError` naming it (the commit stands)."""
