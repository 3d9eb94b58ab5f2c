"""Test helper: a merge-on-read trips table driven through writes and the services API
next to a model of its rows, and the sequence that leaves a key living only in a log
file: write k; delete k; schedule a compaction of the slice; upsert k (tagged to the
file group through the old base file, appended on the compaction's slice); run the
compaction (its base file lacks k). A write goes through ``write`` (in process here,
through Spark in the Spark tests)."""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pyarrow as pa
from readers import hudi_rs_table
from table_options import MOR_TRIPS

import hoodie
from hoodie.config.options import HoodieConfig
from hoodie.metadata_table.settings import MetadataSettings
from hoodie.metadata_table.sync import with_metadata_sync
from hoodie.metadata_table.validate import validate_metadata_table
from hoodie.services.compaction import run_compaction, schedule_compaction
from hoodie.services.inline import compaction_settings
from hoodie.table.table import HoodieTable

INDEXES: dict[str, dict[str, str]] = {
    "bloom": {},
    "simple": {"hoodie.index.type": "SIMPLE"},
    "bloom_from_metadata": {
        "hoodie.metadata.index.bloom.filter.enable": "true",
        "hoodie.metadata.index.column.stats.enable": "true",
        "hoodie.bloom.index.use.metadata": "true",
    },
    "record_index": {"hoodie.index.type": "RECORD_INDEX", "hoodie.metadata.record.index.enable": "true"},
}

COLUMNS = ["uuid", "city", "ts", "fare"]
Row = tuple[str, str, int, float]


class Sequence:
    """A merge-on-read trips table and the model of its rows, by key."""

    def __init__(self, path: str, options: Mapping[str, str]) -> None:
        self.path = path
        self.options: dict[str, Any] = {**MOR_TRIPS, "hoodie.compact.inline": "false", **options}
        self.model: dict[str, Row] = {}

    def write(self, batch: pa.Table, options: Mapping[str, Any]) -> None:
        hoodie.write(batch, self.path, dict(options))

    def upsert(self, rows: list[Row]) -> None:
        uuid, city, ts, fare = (list(column) for column in zip(*rows))
        self.write(pa.table({"uuid": uuid, "city": city, "ts": pa.array(ts, pa.int64()), "fare": fare}), self.options)
        self.model.update((r[0], r) for r in rows)

    def delete(self, keys: list[str]) -> None:
        rows = [self.model[k] for k in keys]
        batch = pa.table({"uuid": [r[0] for r in rows], "city": [r[1] for r in rows], "ts": pa.array([r[2] for r in rows], pa.int64())})
        self.write(batch, {**self.options, "hoodie.datasource.write.operation": "delete"})
        for k in keys:
            del self.model[k]

    def for_services(self) -> HoodieTable:
        """The table as the CLI's compaction opens it: its completions keep the metadata table."""
        return with_metadata_sync(HoodieTable.open(self.path), MetadataSettings.of(HoodieConfig(self.options)))

    def schedule_compaction(self) -> str:
        instant, decision = schedule_compaction(self.for_services(), compaction_settings(HoodieConfig(self.options)), require_threshold=False)
        assert instant is not None, decision
        return instant

    def run_compaction(self, instant: str) -> None:
        run_compaction(self.for_services(), instant, compaction_settings(HoodieConfig(self.options)))

    def rows(self) -> list[Row]:
        return sorted(tuple(r[c] for c in COLUMNS) for r in hoodie.read(self.path).select(COLUMNS).to_pylist())  # type: ignore[misc]

    def check(self, where: str) -> None:
        rows = self.rows()
        keys = [r[0] for r in rows]
        assert len(keys) == len(set(keys)), f"duplicate keys after {where}: {sorted(k for k in keys if keys.count(k) > 1)}"
        assert rows == sorted(self.model.values()), where

    def check_finally(self) -> None:
        self.check("the sequence")
        table = HoodieTable.open(self.path)
        if table.config.metadata_partitions:
            report = validate_metadata_table(table)
            assert report.ok, "\n".join(map(str, report.differences[:20]))
        rs = hudi_rs_table(self.path)
        assert sorted(tuple(r[c] for c in COLUMNS) for r in rs.select(COLUMNS).to_pylist()) == sorted(self.model.values())


def deleted_then_rewritten_during_compaction(seq: Sequence) -> None:
    """The reproduction up to the compaction: k1 lives only in a log of the compacted slice."""
    seq.upsert([("k1", "sf", 1, 1.0), ("k2", "sf", 1, 2.0), ("k3", "nyc", 1, 3.0), ("k4", "nyc", 1, 4.0)])
    seq.delete(["k1", "k3"])
    seq.check("the deletes")
    compaction = seq.schedule_compaction()
    seq.upsert([("k1", "sf", 3, 10.0), ("k3", "nyc", 3, 30.0)])
    seq.check("the upsert during the pending compaction")
    seq.run_compaction(compaction)
    seq.check("the compaction")


