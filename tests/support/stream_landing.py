"""Test helper: a folder a streaming file source reads, one Parquet file a micro-batch, and
the model of the table its batches make (the latest ordering value of a key wins,
``_hoodie_is_deleted`` rows delete)."""
from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from hoodie.table.table import HoodieTable
from hoodie.timeline.checkpoints import SINK_CHECKPOINT_KEY

SCHEMA = pa.schema([("uuid", pa.string()), ("city", pa.string()), ("ts", pa.int64()), ("fare", pa.float64()), ("_hoodie_is_deleted", pa.bool_())])
TRIPS_OPTIONS = {
    "hoodie.table.name": "trips",
    "hoodie.datasource.write.recordkey.field": "uuid",
    "hoodie.datasource.write.precombine.field": "ts",
    "hoodie.index.bloom.num_entries": "1000",
}


def batch(rows: list[tuple[str, str, int, float, bool]]) -> pa.Table:
    return pa.Table.from_pylist([dict(zip(SCHEMA.names, r)) for r in rows], schema=SCHEMA)


class Landing:
    """A folder a file source reads, one Parquet file a micro-batch (maxFilesPerTrigger=1),
    and the model of the table the batches make (the latest ts of a key wins)."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        folder.mkdir()
        self.files = 0
        self.model: dict[str, dict[str, Any]] = {}

    def land(self, data: pa.Table) -> None:
        path = self.folder / f"batch-{self.files:03d}.parquet"
        pq.write_table(data, path)
        os.utime(path, (1_700_000_000 + self.files, 1_700_000_000 + self.files))  # the source's order
        self.files += 1
        for row in data.to_pylist():
            old = self.model.get(row["uuid"])
            if old is not None and old["ts"] > row["ts"]:
                continue
            self.model[row["uuid"]] = row

    def expected(self) -> list[dict[str, Any]]:
        return sorted(({k: v for k, v in r.items() if k != "_hoodie_is_deleted"} for r in self.model.values() if not r["_hoodie_is_deleted"]),
                      key=lambda r: r["uuid"])


def rows_of(table: pa.Table) -> list[dict[str, Any]]:
    keep = ["uuid", "city", "ts", "fare"]
    return sorted(table.select(keep).to_pylist(), key=lambda r: r["uuid"])


def landing_schema(spark) -> Any:
    from pyspark.sql.pandas.types import from_arrow_schema

    return from_arrow_schema(SCHEMA)


def sink_commits(path: str) -> list[tuple[str, dict[str, str]]]:
    """(action, extra metadata) of every completed write that holds a sink checkpoint."""
    table = HoodieTable.open(path)
    out = []
    for instant in table.timeline.completed_writes():
        extra = table.timeline.commit_metadata(instant).extra_metadata
        if SINK_CHECKPOINT_KEY in extra:
            out.append((instant.action, extra))
    return out


def batch_ids(path: str) -> list[int]:
    return [int(json.loads(extra[SINK_CHECKPOINT_KEY])["default_single_writer"]) for _, extra in sink_commits(path)]
