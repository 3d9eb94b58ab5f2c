"""A metadata partition dropped because a write no longer enables it, between hoodie and
Apache Hudi 0.15: hoodie drops column_stats and bloom_filters (building its metadata table
again without them) and Apache Hudi reads the table through it and writes on with it;
Apache Hudi drops column_stats (deleting the partition's folder, its metadata table's
timeline untouched) and hoodie writes on, its metadata table's services (the compaction
and the clean, which list that table's partitions) running as before."""
from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path

import pyarrow as pa
import pytest
from hudi_oracle import HUDI_0_15, HudiOracle
from mdt_checks import check_files
from oracle_reads import both_read
from sequences import Layout, batch, record

import hoodie
from hoodie.metadata_table import MetadataTableReader
from hoodie.metadata_table.validate import validate_metadata_table
from hoodie.table.table import HoodieTable
from hoodie.timeline.instant import Action

LAYOUT = Layout("COPY_ON_WRITE", "hive")
INDEXES_ON = {
    "hoodie.metadata.enable": "true",
    "hoodie.metadata.index.column.stats.enable": "true",
    "hoodie.metadata.index.bloom.filter.enable": "true",
}
INDEXES_OFF = {"hoodie.metadata.enable": "true", "hoodie.metadata.index.column.stats.enable": "false", "hoodie.metadata.index.bloom.filter.enable": "false"}
READ = {"hoodie.metadata.enable": "true", "hoodie.enable.data.skipping": "true"}


def _rows(keys: range, ts: int) -> pa.Table:
    return batch(record(n, ts) for n in keys)


def _upsert(options: dict[str, str], extra: dict[str, str]) -> dict[str, str]:
    return {**options, **extra, "hoodie.datasource.write.operation": "upsert"}


def _check(path: Path) -> HoodieTable:
    table = HoodieTable.open(str(path))
    check_files(MetadataTableReader(table), table)
    return table


def test_apache_hudi_reads_and_writes_on_after_hoodie_drops_partitions(hudi_oracle: Callable[[str], HudiOracle], tmp_path: Path) -> None:
    oracle = hudi_oracle(HUDI_0_15)
    path = tmp_path / "table"
    options = LAYOUT.options("hoodie_drop")
    hoodie.write(_rows(range(0, 20), 1), str(path), _upsert(options, INDEXES_ON))
    hoodie.write(_rows(range(10, 30), 2), str(path), _upsert(options, INDEXES_ON))
    assert HoodieTable.open(str(path)).config.metadata_partitions == ("bloom_filters", "column_stats", "files")
    hoodie.write(_rows(range(25, 35), 3), str(path), _upsert(options, INDEXES_OFF))
    assert _check(path).config.metadata_partitions == ("files",)

    listed = both_read(oracle, path, READ, "a snapshot after hoodie dropped column_stats and bloom_filters")
    assert listed is not None and len(listed) == 35
    assert validate_metadata_table(HoodieTable.open(str(path))).ok

    # Apache Hudi writes on with the metadata table as hoodie left it
    done = oracle.write(path, _rows(range(0, 5), 4), _upsert(options, INDEXES_OFF))
    assert done
    table = _check(path)
    assert table.config.metadata_partitions == ("files",)
    assert both_read(oracle, path, READ, "a snapshot after Apache Hudi's upsert") is not None


def test_hoodie_writes_on_after_apache_hudi_drops_a_partition(
    hudi_oracle: Callable[[str], HudiOracle], tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    oracle = hudi_oracle(HUDI_0_15)
    path = tmp_path / "table"
    options = LAYOUT.options("hudi_drop", **{"hoodie.metadata.compact.max.delta.commits": "2"})
    oracle.write(path, _rows(range(0, 20), 1), _upsert(options, INDEXES_ON))
    oracle.write(path, _rows(range(10, 30), 2), _upsert(options, INDEXES_ON))
    assert "column_stats" in HoodieTable.open(str(path)).config.metadata_partitions
    on_stats_only = {**INDEXES_ON, "hoodie.metadata.index.column.stats.enable": "false"}
    oracle.write(path, _rows(range(25, 35), 3), _upsert(options, on_stats_only))
    table = HoodieTable.open(str(path))
    assert "column_stats" not in table.config.metadata_partitions and "bloom_filters" in table.config.metadata_partitions
    assert not (path / ".hoodie" / "metadata" / "column_stats").exists()

    mdt_path = path / ".hoodie" / "metadata"
    compactions = len(HoodieTable.open(str(mdt_path)).timeline.completed([Action.COMMIT]))
    with caplog.at_level(logging.WARNING, logger="hoodie"):
        for ts in range(4, 10):
            hoodie.write(_rows(range(ts, ts + 5), ts), str(path), _upsert(options, on_stats_only))
    assert not [r for r in caplog.records if "metadata table services failed" in r.getMessage()], caplog.text
    assert len(HoodieTable.open(str(mdt_path)).timeline.completed([Action.COMMIT])) > compactions
    table = _check(path)
    assert table.config.metadata_partitions == ("bloom_filters", "files")
    listed = both_read(oracle, path, READ, "a snapshot after hoodie's upserts")
    assert listed is not None and len(listed) == 35
