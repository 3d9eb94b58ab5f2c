"""``hoodie metadata validate``: the metadata tables Apache Hudi wrote (the conformance
tables, copies of Apache Hudi 0.15's samples) pass; copies damaged outside the timeline
fail (exit code 1) with a table naming each difference, or one error line naming the
damaged metadata file. A metadata table out of sync with its table is told: listing
falls back to storage, ``stats`` and ``validate`` name the instants it lacks."""
from __future__ import annotations

import dataclasses
import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from mdt_checks import SAMPLE_NAMES, change_one_column_min, copy_sample, mdt_tables, out_of_sync_copy, rewrite_mdt_base, stored_files
from shared import cases_or_skip
from typer.testing import Result

from hoodie.cli.metadata_admin import rebuild_as_it_was
from hoodie.errors import UnsupportedTableError
from hoodie.metadata_table import MetadataRecord, MetadataTableReader
from hoodie.metadata_table.records import ColumnStats
from hoodie.table import HoodieTable
from hoodie.timeline import Action

MDT_TABLES = mdt_tables()
CASES = cases_or_skip(MDT_TABLES, MDT_TABLES, "tables with a metadata table")


def _json(result: Result, exit_code: int = 0) -> dict:
    assert result.exit_code == exit_code, result.output
    return json.loads(result.stdout)


@pytest.mark.parametrize("name", CASES)
def test_tables_apache_hudi_1_1_wrote_pass(cli, conformance_table: Callable[[str], Path], name: str) -> None:
    path = str(conformance_table(name))
    out = _json(cli("metadata", "validate", path, "--json"))
    assert out["ok"] and out["differences"] == [] and out["duration_s"] >= 0
    assert out["partitions"] == HoodieTable.open(path).local_view().all_partition_paths()
    assert out["files_checked"] and out["keys_checked"]
    human = cli("metadata", "validate", path)
    assert human.exit_code == 0, human.output
    assert "no difference (files, column_stats, record_index) in " in human.stdout and " checked in " in human.stdout


@pytest.mark.parametrize("name", SAMPLE_NAMES)
def test_tables_apache_hudi_0_15_wrote_pass(cli, name: str, tmp_path: Path) -> None:
    path = str(copy_sample(name, tmp_path))
    out = _json(cli("metadata", "validate", path, "--json"))
    assert out["ok"] and out["checks"] == ["files", "column_stats", "bloom_filters", "record_index"]
    assert out["statistics_checked"] and out["filters_checked"]
    one = _json(cli("metadata", "validate", path, "--bloom-filters", "--record-index", "-p", "city=sf", "--json"))
    assert one["checks"] == ["bloom_filters", "record_index"] and one["partitions"] == ["city=sf"]
    assert one["files_checked"] == 0 and one["keys_checked"] and one["filters_checked"]


def test_a_data_file_added_outside_the_timeline_fails_naming_it(cli, tmp_path: Path) -> None:
    base = copy_sample("hudi015_COPY_ON_WRITE", tmp_path)
    table = HoodieTable.open(str(base))
    latest = next(s for s in table.local_view().latest_slices("city=la") if s.base_file is not None)
    assert latest.base_file is not None
    copied = "bbbbbbbb" + latest.base_file.file_name[8:]
    shutil.copyfile(latest.base_file.path, base / "city=la" / copied)
    result = cli("metadata", "validate", str(base), "--files")
    assert result.exit_code == 1, result.output
    assert copied in result.stdout and f"{latest.base_file.size} bytes" in result.stdout
    assert "1 difference(s) (files) in 3 partition(s)" in result.stdout
    out = _json(cli("metadata", "validate", str(base), "--files", "--json"), exit_code=1)
    assert not out["ok"]
    assert out["differences"] == [
        {"check": "files", "partition": "city=la", "file": copied, "key": None, "column": None, "data": f"{latest.base_file.size} bytes", "metadata": "absent"}
    ]


def test_a_column_statistic_changed_fails_naming_file_column_and_values(cli, tmp_path: Path) -> None:
    base = copy_sample("hudi015_MERGE_ON_READ", tmp_path)
    held = {f.file_name for s in HoodieTable.open(str(base)).local_view().latest_slices_all() for f in [s.base_file, *s.log_files] if f}
    reader = MetadataTableReader(HoodieTable.open(str(base)))
    stats_before = {(p, f): reader.column_stats(p, f, ["fare"]).get("fare") for p in reader.all_partition_paths() for f in reader.files_in(p)}
    before = change_one_column_min(base, "fare", held, -5.5)
    (typed,) = [cs for (_, f), cs in stats_before.items() if f == before.file_name]  # (as read: by the table's schema)
    assert typed is not None
    result = cli("metadata", "validate", str(base), "--column-stats")
    assert result.exit_code == 1, result.output
    assert "1 difference(s) (column_stats)" in result.stdout
    (diff,) = _json(cli("metadata", "validate", str(base), "--column-stats", "--json"), exit_code=1)["differences"]
    assert (diff["file"], diff["column"]) == (before.file_name, "fare")
    assert diff["metadata"].startswith("min -5.5, ") and diff["data"].startswith(f"min {typed.min}, max {typed.max}, ")


def test_a_metadata_log_file_removed_is_one_error_line_naming_it(cli, one_line_error, tmp_path: Path) -> None:
    base = copy_sample("hudi015_MERGE_ON_READ", tmp_path)
    reader = MetadataTableReader(HoodieTable.open(str(base)))
    log = next(lf for s in reader.file_slices("files") for lf in s.log_files if lf.size > 100)
    Path(log.path).unlink()
    assert log.file_name in one_line_error(cli("metadata", "validate", str(base)))


def test_a_table_without_a_metadata_table_is_one_error_line(cli, one_line_error, table_without_mdt) -> None:
    message = one_line_error(cli("metadata", "validate", table_without_mdt.path))
    assert table_without_mdt.path in message and "metadata table" in message


@pytest.mark.parametrize("name", SAMPLE_NAMES)
def test_an_out_of_sync_metadata_table_is_told_and_storage_listed_instead(cli, name: str, tmp_path: Path) -> None:
    base, instant = out_of_sync_copy(name, tmp_path)
    table = HoodieTable.open(str(base))
    # list-partitions and list-files list storage, with a note naming the instant
    listed = cli("metadata", "list-partitions", str(base))
    assert listed.exit_code == 0, listed.output
    assert "is out of sync" in listed.stderr and instant in listed.stderr and "listing storage instead" in listed.stderr
    assert "partition(s) on storage (the metadata table is out of sync)" in listed.stdout
    out = _json(cli("metadata", "list-partitions", str(base), "--json"))
    assert out["source"] == "storage" and out["out_of_sync"] == [instant]
    assert out["partitions"] == table.local_view().all_partition_paths()
    assert cli("metadata", "list-partitions", str(base), "--compare").exit_code == 1
    for partition in out["partitions"]:
        files = _json(cli("metadata", "list-files", str(base), "-p", partition, "--json"))
        assert files["source"] == "storage" and {f["name"]: f["size"] for f in files["files"]} == stored_files(table, partition)
    # stats and validate name it; validate fails
    assert _json(cli("metadata", "stats", str(base), "--json"))["unsynced"] == [instant]
    assert f"Out of sync: no delta commit for the data table's completed instant(s) {instant}" in cli("metadata", "stats", str(base)).stdout
    result = cli("metadata", "validate", str(base))
    assert result.exit_code == 1 and f"Out of sync: no delta commit for the data table's completed instant(s) {instant}" in result.stdout
    report = _json(cli("metadata", "validate", str(base), "--json"), exit_code=1)
    assert report["out_of_sync"] == [instant] and not report["ok"]


def test_a_table_in_sync_lists_from_its_metadata_table(cli, tmp_path: Path) -> None:
    base = copy_sample("hudi015_MERGE_ON_READ", tmp_path)
    out = _json(cli("metadata", "list-partitions", str(base), "--json"))
    assert out["source"] == "metadata_table" and out["out_of_sync"] == []


@pytest.mark.parametrize("name", SAMPLE_NAMES)
def test_repair_rebuilds_an_out_of_sync_metadata_table(cli, name: str, tmp_path: Path) -> None:
    base, instant = out_of_sync_copy(name, tmp_path)
    result = cli("metadata", "validate", str(base), "--repair")
    assert result.exit_code == 0, result.output
    assert f"Out of sync: no delta commit for the data table's completed instant(s) {instant}" in result.stdout
    assert "Rebuilt the metadata table (bloom_filters, column_stats, files, record_index) from a listing in " in result.stdout
    assert result.stdout.rstrip().splitlines()[-1].startswith("no difference (files, column_stats, bloom_filters, record_index)")
    # in sync again: readers use it, and it lists what the write made
    table = HoodieTable.open(str(base))
    reader = MetadataTableReader(table)
    assert reader.unsynced == [] and all(reader.files_in(p) == stored_files(table, p) for p in reader.all_partition_paths())
    assert _json(cli("metadata", "list-partitions", str(base), "--json"))["source"] == "metadata_table"
    again = _json(cli("metadata", "validate", str(base), "--repair", "--json"))
    assert again["ok"] and "repaired" not in again
    assert "Nothing to repair" in cli("metadata", "validate", str(base), "--repair").stdout


def test_repair_rebuilds_a_damaged_column_statistic(cli, tmp_path: Path) -> None:
    base = copy_sample("hudi015_COPY_ON_WRITE", tmp_path)

    def lower(record: MetadataRecord) -> MetadataRecord:
        cs = record.payload
        if isinstance(cs, ColumnStats) and cs.column_name == "ts":
            return dataclasses.replace(record, payload=dataclasses.replace(cs, min=-1))
        return record

    rewrite_mdt_base(base, "column_stats", lower)
    out = _json(cli("metadata", "validate", str(base), "--column-stats", "--repair", "--json"))
    assert out["ok"] and out["repaired"]["differences_before"] > 0 and out["repaired"]["out_of_sync_before"] == []
    assert out["repaired"]["partitions"] == ["bloom_filters", "column_stats", "files", "record_index"]
    assert _json(cli("metadata", "validate", str(base), "--json"))["ok"]


def test_repair_refusals_say_it_rebuilds(cli, tmp_path: Path) -> None:
    """``--repair`` rebuilds the metadata table: a refusal says it cannot rebuild it (not
    initialise or build it), after the differences it found, and deletes nothing."""
    base, instant = out_of_sync_copy("hudi015_COPY_ON_WRITE", tmp_path)
    timeline = HoodieTable.open(str(base)).timeline
    pending = timeline.transition_to_inflight(timeline.request_new(Action.COMMIT), b"{}")
    result = cli("metadata", "validate", str(base), "--repair")
    assert result.exit_code == 1
    assert f"Out of sync: no delta commit for the data table's completed instant(s) {instant}" in result.stdout
    assert f"error: cannot rebuild the metadata table of {base}: write {pending.timestamp} (commit) is in progress" in result.output
    assert "initialise" not in result.output and "Rebuilt" not in result.output
    assert HoodieTable.open(str(base)).config.metadata_partitions == ("bloom_filters", "column_stats", "files", "record_index")


@pytest.mark.parametrize("name", CASES[:1])
def test_repair_of_a_table_hoodie_cannot_write_says_it_cannot_rebuild(conformance_table: Callable[[str], Path], name: str) -> None:
    base = conformance_table(name)  # (Apache Hudi 1.x's: hoodie reads it, and writes version 6 tables only)
    before = HoodieTable.open(str(base)).config.metadata_partitions
    with pytest.raises(UnsupportedTableError, match=f"cannot rebuild the metadata table of {base}: it is a version "):
        rebuild_as_it_was(str(base))
    assert (base / ".hoodie" / "metadata").is_dir() and HoodieTable.open(str(base)).config.metadata_partitions == before
