"""A table's views listed through its metadata table: which tables do, and the lister.

Whoever opens a table for a read, a write, a service or a timeline server's views calls
:func:`listed_through_metadata` with the options it was given: with
``hoodie.metadata.enable`` on and a complete ``files`` partition in the table's
``hoodie.properties``, the table's views find partitions and their files in the metadata
table (:class:`MetadataListing`, a :class:`~hoodie.table.table.ListingSource`) and no
partition folder is listed. The metadata table knows committed files only: what looks
for files of pending or failed writes (rollback, markers, a commit's check of its
tasks' files) lists storage through :meth:`~hoodie.table.table.HoodieTable.storage_view`.
With ``hoodie.metadata.validate`` each answer is compared with storage
(:class:`~hoodie.table.checked_listing.CheckedLister`). The lookups, slice reads and
comparisons are recorded in the listing's metrics, when it is given some (a timeline
server's, which exports them). A metadata table out of sync with the table
(:class:`~hoodie.errors.MetadataOutOfSyncError`: instants the table completed that it
lacks) is not listed through: storage is, with a warning naming those instants.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass, field

from hoodie.config import options as o
from hoodie.config.options import HoodieConfig
from hoodie.errors import MetadataOutOfSyncError
from hoodie.metadata_table.metrics import VALIDATE, MetadataMetrics
from hoodie.metadata_table.reader import FILES, MetadataTableReader
from hoodie.table.checked_listing import CheckedLister
from hoodie.table.fs_view import PartitionLister
from hoodie.table.table import HoodieTable

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class MetadataListing:
    """Views list through the table's metadata table, as of the table's loaded timeline
    (only what the data table completed is seen); ``validate``: compared with storage;
    ``metrics``: where the work is recorded (each reader's own when None)."""

    validate: bool = False
    metrics: MetadataMetrics | None = field(default=None, compare=False)

    def lister(self, table: HoodieTable) -> PartitionLister | None:
        if FILES not in table.config.metadata_partitions:
            return None  # dropped since the table was opened (a writer disabled it): list storage
        try:
            reader = MetadataTableReader(table, self.metrics)
        except MetadataOutOfSyncError as exc:
            # a stale listing would hide what those instants wrote: list storage instead
            log.warning("%s; listing storage instead", exc)
            return None
        if not self.validate:
            return reader
        metrics = reader.metrics

        def checked(kind: str, seconds: float, differences: int) -> None:
            metrics.record(VALIDATE, kind, seconds, errors=differences)

        return CheckedLister(reader, table.storage_view(), "the metadata table", on_check=checked)


def metadata_listing(config: HoodieConfig) -> MetadataListing | None:
    """How views list for ``config``: through the metadata table unless
    ``hoodie.metadata.enable`` is off."""
    return MetadataListing(bool(config.get(o.METADATA_VALIDATE))) if config.get(o.METADATA_ENABLE) else None


def listed_through_metadata(table: HoodieTable, listing: MetadataListing | None) -> HoodieTable:
    """``table`` with its views listed through its metadata table when ``listing`` asks
    for it and the table's ``files`` partition is complete; else as it is."""
    if listing is None or FILES not in table.config.metadata_partitions:
        return table
    return table.listed_by(listing)
