"""What every write handle needs besides its records, resolved on the driver."""
from __future__ import annotations

from dataclasses import dataclass

import pyarrow as pa

from hoodie.formats.parquet import BloomSettings, ParquetSettings
from hoodie.markers import DirectMarkers, ServerClient, TimelineServerMarkers, marker_writer
from hoodie.storage.base import Storage


@dataclass(frozen=True)
class WriteContext:
    """Everything a handle needs besides its records; picklable, shipped to every task."""

    storage: Storage
    base_path: str
    instant: str
    data_schema: pa.Schema  # table data columns, without meta columns
    ordering_field: str | None
    parquet: ParquetSettings
    bloom: BloomSettings | None
    avro_schema_with_meta: str = ""  # writer schema of log data blocks (merge-on-read)
    deletes_carry_ordering: bool = False  # upsert deletes (_hoodie_is_deleted) keep their ordering value
    log_block_format: str = "avro"  # hoodie.logfile.data.block.format
    # the client of the timeline server that makes markers (a task's copy starts afresh,
    # closed by the task's helper); None: direct
    marker_server: ServerClient | None = None

    def marker_writer(self) -> DirectMarkers | TimelineServerMarkers:
        return marker_writer(self.storage, self.base_path, self.instant, self.marker_server)
