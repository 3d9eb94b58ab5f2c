"""Opening a table for the services' Python API: the table whose completions keep its
metadata table (every table a write keeps one for, ``hoodie.metadata.enable`` being on by
default) up to date, as the writers' and the CLI's do, once that metadata table is checked
as a write checks it."""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hoodie.config.options import HoodieConfig
from hoodie.metadata_table.settings import MetadataSettings
from hoodie.metadata_table.sync import prepare_for_services
from hoodie.storage.base import Storage
from hoodie.table.table import HoodieTable


def open_for_services(path: str, options: Mapping[str, Any] | None = None, storage: Storage | None = None) -> HoodieTable:
    """The table at ``path`` for services that change it: each instant they complete
    (compaction, clean, savepoint, restore, rollback) updates the
    table's metadata table first. ``options``: the ``hoodie.metadata.*`` settings of
    its partitions (Apache Hudi's defaults when not given). A metadata table left unusable
    by another writer (instants it lacks, a partition Apache Hudi dropped) is built again
    first, under the table's commit lock, as a write would
    (:func:`~hoodie.metadata_table.sync.prepare_for_services`)."""
    return prepare_for_services(HoodieTable.open(path, storage), MetadataSettings.of(HoodieConfig.of(options)))
