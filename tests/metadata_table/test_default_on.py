"""``hoodie.metadata.enable`` defaults to true for writers, as in Apache Hudi (issue 29:
"Options: hoodie.metadata.enable (default true, as in Hudi)"): a write given no
``hoodie.metadata.*`` option keeps the metadata table with its ``files`` partition only
(column_stats, bloom_filters and record_index stay off unless their options say so, as
Apache Hudi 0.15's defaults); reads list through it; a write with it false deletes it."""
from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest
from mdt_checks import check_files

import hoodie
from hoodie.config.options import HoodieConfig
from hoodie.errors import TimelineError
from hoodie.metadata_table import MetadataTableReader
from hoodie.metadata_table.settings import MetadataSettings
from hoodie.services import (
    CleanSettings,
    CompactionSettings,
    clean,
    create_savepoint,
    open_for_services,
    restore_to,
    run_compaction,
    schedule_compaction,
)
from hoodie.table.table import HoodieTable
from hoodie.timeline.instant import Action

OPTIONS = {
    "hoodie.table.name": "d",
    "hoodie.datasource.write.recordkey.field": "id",
    "hoodie.datasource.write.partitionpath.field": "p",
    "hoodie.datasource.write.precombine.field": "ts",
}


def _batch(keys: range, ts: int) -> pa.Table:
    return pa.table({"id": [f"k{k}" for k in keys], "p": [f"p{k % 2}" for k in keys], "ts": [ts] * len(keys)})


def test_unset_means_files_only_as_apache_hudi_015() -> None:
    settings = MetadataSettings.of(HoodieConfig.of({}))
    assert settings.enable and settings.partitions == ("files",)
    assert MetadataSettings.of(HoodieConfig.of({"hoodie.metadata.enable": "false"})).partitions == ()
    every = {f"hoodie.metadata.{k}.enable": "true" for k in ("index.column.stats", "index.bloom.filter", "record.index")}
    assert MetadataSettings.of(HoodieConfig.of(every)).partitions == ("files", "bloom_filters", "column_stats", "record_index")


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_a_write_without_metadata_options_keeps_the_metadata_table(tmp_path: Path, table_type: str) -> None:
    path = tmp_path / "t"
    opts = {**OPTIONS, "hoodie.datasource.write.table.type": table_type}
    first = hoodie.write(_batch(range(6), 1), str(path), opts)
    second = hoodie.write(_batch(range(3, 9), 2), str(path), opts)
    table = HoodieTable.open(str(path))
    assert table.config.metadata_partitions == ("files",)
    assert table.config.props.get("hoodie.table.metadata.partitions.inflight", "") == ""
    mdt = path / ".hoodie" / "metadata"
    assert sorted(p.name for p in mdt.iterdir() if p.name != ".hoodie") == ["files"]
    assert check_files(MetadataTableReader(table), table) == ["p0", "p1"]
    deltas = {i.timestamp for i in HoodieTable.open(str(mdt)).timeline.completed([Action.DELTA_COMMIT])}
    assert {first, second, "00000000000000010"} <= deltas
    assert sorted(hoodie.read(str(path)).column("id").to_pylist()) == sorted(f"k{k}" for k in range(9))
    # false on a write deletes it: properties first, then the folder
    hoodie.write(_batch(range(2), 3), str(path), {**opts, "hoodie.metadata.enable": "false"})
    table = HoodieTable.open(str(path))
    assert not mdt.exists() and "hoodie.table.metadata.partitions" not in table.config.props
    assert sorted(hoodie.read(str(path)).column("id").to_pylist()) == sorted(f"k{k}" for k in range(9))


def test_the_services_api_keeps_the_metadata_table(tmp_path: Path) -> None:
    """The README's services example on a table written with the defaults: a plain
    ``HoodieTable.open`` is refused a completion (it would leave the metadata table
    stale); ``open_for_services`` updates it first, and it lists the committed files."""
    path = str(tmp_path / "t")
    opts = {**OPTIONS, "hoodie.datasource.write.table.type": "MERGE_ON_READ", "hoodie.clean.automatic": "false"}
    for ts in range(1, 4):
        hoodie.write(_batch(range(ts, ts + 4), ts), path, opts)
    instant, decision = schedule_compaction(HoodieTable.open(path), CompactionSettings(), require_threshold=False)
    assert instant, decision.reason
    with pytest.raises(TimelineError, match="keeps a metadata table"):
        run_compaction(HoodieTable.open(path), instant)
    table = open_for_services(path)
    run_compaction(table, instant)  # (finishes the compaction the refused run left inflight)
    clean(table.reload(), CleanSettings(commits_retained=1))
    savepoint = create_savepoint(table.reload())
    hoodie.write(_batch(range(20, 22), 9), path, opts)
    restore_to(open_for_services(path), savepoint.instant)
    data = HoodieTable.open(path)
    assert check_files(MetadataTableReader(data), data) == ["p0", "p1"]
    deltas = {i.timestamp for i in HoodieTable.open(f"{path}/.hoodie/metadata").timeline.completed([Action.DELTA_COMMIT])}
    assert {i.timestamp for i in data.timeline.completed()} <= deltas
    assert sorted(hoodie.read(path).column("id").to_pylist()) == sorted(f"k{k}" for k in range(1, 7))
