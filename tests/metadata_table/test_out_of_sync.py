"""A metadata table out of sync with its data table: a writer that does not maintain it
(hudi-rs, an older hoodie) completed instants after it began. Opening it for use is a
``MetadataOutOfSyncError`` naming those instants; data skipping then reads every slice
(with a warning) instead of trusting stale statistics; ``metadata_table_stats`` and the
validation name them. The tables Apache Hudi wrote are in sync."""
from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path

import pytest
from mdt_checks import SAMPLE_NAMES, copy_sample, mdt_tables, out_of_sync_copy
from shared import cases_or_skip

import hoodie
from hoodie.errors import MetadataOutOfSyncError
from hoodie.metadata_table import MetadataTableReader, metadata_table_stats, validate_metadata_table
from hoodie.metadata_table.reader import unsynced_instants
from hoodie.query.skipping import RowFilter, prune_slices
from hoodie.table.table import HoodieTable

MDT_TABLES = mdt_tables()
CASES = cases_or_skip(MDT_TABLES, MDT_TABLES, "tables with a metadata table")


@pytest.mark.parametrize("name", CASES)
def test_tables_apache_hudi_1_1_wrote_are_in_sync(conformance_table: Callable[[str], Path], name: str) -> None:
    table = HoodieTable.open(str(conformance_table(name)))
    reader = MetadataTableReader(table)
    assert reader.unsynced == [] and metadata_table_stats(table).unsynced == ()
    # (their rollbacks are in it as rollbacks of its own delta commits, at the same instant)


@pytest.mark.parametrize("name", SAMPLE_NAMES)
def test_tables_apache_hudi_0_15_wrote_are_in_sync(name: str, tmp_path: Path) -> None:
    table = HoodieTable.open(str(copy_sample(name, tmp_path)))
    assert MetadataTableReader(table).unsynced == []
    assert unsynced_instants(table.timeline, MetadataTableReader(table).table.timeline) == []


@pytest.mark.parametrize("name", SAMPLE_NAMES)
def test_a_write_that_did_not_maintain_it_makes_it_out_of_sync(name: str, tmp_path: Path) -> None:
    base, instant = out_of_sync_copy(name, tmp_path)
    table = HoodieTable.open(str(base))
    with pytest.raises(MetadataOutOfSyncError, match=f"metadata table of {base} is out of sync: .*instant\\(s\\) {instant} ") as caught:
        MetadataTableReader(table)
    assert caught.value.instants == (instant,)
    with pytest.raises(MetadataOutOfSyncError):
        MetadataTableReader.open(str(base))
    assert MetadataTableReader(table, check_sync=False).unsynced == [instant]
    assert metadata_table_stats(table).unsynced == (instant,)
    report = validate_metadata_table(table)
    assert report.out_of_sync == (instant,) and not report.ok
    # the file the write made is what the metadata table lacks
    done = HoodieTable.open(str(base))
    (completed,) = [i for i in done.timeline.completed_writes() if i.timestamp == instant]
    written = {s.fileId for s in done.commit_metadata(completed).write_stats()}
    assert [d.file for d in report.differences if d.check == "files"] and all(
        d.metadata == "absent" and any(f in (d.file or "") for f in written) for d in report.differences if d.check == "files"
    )


@pytest.mark.parametrize("name", SAMPLE_NAMES)
def test_data_skipping_is_off_with_a_warning_not_stale(name: str, tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    base, instant = out_of_sync_copy(name, tmp_path)
    table = HoodieTable.open(str(base))
    slices = table.local_view().latest_slices_all()
    row_filter = RowFilter.of([("uuid", "=", "k000")])
    assert row_filter is not None
    with caplog.at_level(logging.WARNING, logger="hoodie"):
        kept = prune_slices(table, slices, row_filter)
    assert kept == slices  # nothing skipped by its statistics
    assert any("out of sync" in r.getMessage() and instant in r.getMessage() and "data skipping is off" in r.getMessage() for r in caplog.records)
    rows = hoodie.read(str(base), filters=[("uuid", "=", "k000")]).to_pylist()
    assert rows == [r for r in hoodie.read(str(base)).to_pylist() if r["uuid"] == "k000"] and len(rows) == 1


@pytest.mark.parametrize("name", SAMPLE_NAMES)
def test_a_read_lists_storage_with_a_warning_not_the_stale_listing(name: str, tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    base, instant = out_of_sync_copy(name, tmp_path)
    with caplog.at_level(logging.WARNING, logger="hoodie"):
        rows = hoodie.read(str(base), {"hoodie.metadata.enable": "true"}).to_pylist()
    # the row the write changed reads as it wrote it (its file is one the metadata table lacks)
    assert [r["note"] for r in rows if r["note"] == "written without the metadata table"] == ["written without the metadata table"]
    assert any("out of sync" in r.getMessage() and instant in r.getMessage() and "listing storage instead" in r.getMessage() for r in caplog.records)


@pytest.mark.parametrize("name", SAMPLE_NAMES)
def test_a_write_that_keeps_it_builds_it_again(name: str, tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    base, instant = out_of_sync_copy(name, tmp_path)
    table = HoodieTable.open(str(base))
    data = [f.name for f in table.data_schema() or []]
    row = hoodie.read(str(base)).select(data).slice(1, 1)
    options = {
        "hoodie.table.name": table.config.name, "hoodie.datasource.write.recordkey.field": "uuid",
        "hoodie.datasource.write.partitionpath.field": "city", "hoodie.datasource.write.precombine.field": "ts",
        "hoodie.datasource.write.hive_style_partitioning": "true", "hoodie.datasource.write.operation": "upsert",
        "hoodie.metadata.enable": "true", "hoodie.metadata.index.column.stats.enable": "true",
    }
    with caplog.at_level(logging.WARNING, logger="hoodie"):
        written = hoodie.write(row, str(base), options)
    assert any(instant in r.getMessage() and "building it again from a listing" in r.getMessage() for r in caplog.records)
    table = HoodieTable.open(str(base))
    assert MetadataTableReader(table).unsynced == [] and set(table.config.metadata_partitions) == {"files", "column_stats"}
    report = validate_metadata_table(table)
    assert report.ok, report.differences
    assert written in {i.timestamp for i in table.timeline.completed_writes()}
