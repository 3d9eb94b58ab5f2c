"""``metadata_table.validate``: the metadata tables Apache Hudi wrote (0.15's samples, the
conformance tables of 1.1) validate without a difference; copies damaged outside the
timeline (a data file added or removed, a column statistic or a record-index entry
changed by rewriting the metadata table's HFile, a metadata log file removed) each report
the difference, naming it, or fail with an error naming the damaged file."""
from __future__ import annotations

import dataclasses
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from mdt_checks import SAMPLE_NAMES, change_one_column_min, copy_sample, mdt_tables, rewrite_mdt_base
from shared import cases_or_skip

from hoodie.errors import FormatError, TableError
from hoodie.formats.hfile import HFileReader
from hoodie.formats.log import BlockType, CorruptBlock, LogFileReader
from hoodie.metadata_table import CHECKS, MetadataRecord, MetadataTableReader, validate_metadata_table
from hoodie.metadata_table.listing import MetadataListing, listed_through_metadata
from hoodie.metadata_table.records import RecordLocation
from hoodie.table.table import HoodieTable

MDT_TABLES = mdt_tables()
CASES = cases_or_skip(MDT_TABLES, MDT_TABLES, "tables with a metadata table")


@pytest.fixture(params=SAMPLE_NAMES)
def sample(request: pytest.FixtureRequest, tmp_path: Path) -> Path:
    return copy_sample(request.param, tmp_path)


def test_tables_apache_hudi_0_15_wrote_validate(sample: Path) -> None:
    seen: list[tuple[str, str, int, int]] = []
    report = validate_metadata_table(HoodieTable.open(str(sample)), on_progress=lambda c, p, d, t: seen.append((c, p, d, t)))
    assert report.ok, report.differences
    assert report.checks == CHECKS and report.partitions == ("city=la", "city=nyc", "city=sf")
    assert report.files_checked and report.statistics_checked and report.filters_checked and report.keys_checked
    assert seen == [(c, p, i, 3) for i, p in enumerate(report.partitions, 1) for c in CHECKS]


@pytest.mark.parametrize("name", CASES)
def test_tables_apache_hudi_1_1_wrote_validate(conformance_table: Callable[[str], Path], name: str) -> None:
    table = HoodieTable.open(str(conformance_table(name)))
    report = validate_metadata_table(table)
    assert report.ok, report.differences
    assert set(report.checks) == set(table.config.metadata_partitions) & set(CHECKS)
    assert report.files_checked and report.keys_checked


def test_a_data_file_added_outside_the_timeline_is_a_difference(sample: Path) -> None:
    table = HoodieTable.open(str(sample))
    latest = next(s for s in table.local_view().latest_slices("city=sf") if s.base_file is not None)
    assert latest.base_file is not None
    name = latest.base_file.file_name
    copied = "aaaaaaaa" + name[8:]  # another file group, written "by" a completed instant
    shutil.copyfile(latest.base_file.path, sample / "city=sf" / copied)
    report = validate_metadata_table(HoodieTable.open(str(sample)))
    # (a table whose views list through the metadata table is validated against storage all the same)
    assert validate_metadata_table(listed_through_metadata(HoodieTable.open(str(sample)), MetadataListing())) == report
    size = latest.base_file.size
    found = {(d.check, d.file, d.data, d.metadata) for d in report.differences}
    assert ("files", copied, f"{size} bytes", "absent") in found
    assert any(c == "bloom_filters" and f == copied and m == "no filter" and "BloomFilter" in d for c, f, d, m in found)
    keys = {d.key for d in report.differences if d.check == "record_index"}
    assert keys and all(d.data == f"file group {copied[:36]}-0" for d in report.differences if d.check == "record_index")


def test_a_data_file_removed_outside_the_timeline_is_a_difference(sample: Path) -> None:
    table = HoodieTable.open(str(sample))
    latest = next(s for s in table.local_view().latest_slices("city=nyc") if s.base_file is not None)
    assert latest.base_file is not None
    Path(latest.base_file.path).unlink()
    report = validate_metadata_table(HoodieTable.open(str(sample)), checks=["files", "record_index"])
    assert ("files", "city=nyc", latest.base_file.file_name, "absent", f"{latest.base_file.size} bytes") in {
        (d.check, d.partition, d.file, d.data, d.metadata) for d in report.differences
    }
    # the keys of that file are gone from the snapshot: the index holds them still
    extra = [d for d in report.differences if d.check == "record_index"]
    assert extra and all(d.data == "absent" and latest.file_id in d.metadata for d in extra)


def _keys_in_logs(reader: MetadataTableReader, partition: str) -> set[str]:
    """The keys the log blocks of a metadata-table partition's latest slices hold."""
    out = set()
    for slc in reader.file_slices(partition):
        for lf in slc.log_files:
            with LogFileReader(reader.storage, lf.path) as log:
                for found in log.scan():
                    if not isinstance(found, CorruptBlock) and found.block_type is BlockType.HFILE_DATA:
                        out.update(k for k, _ in HFileReader.from_bytes(log.read_content(found)).read_all())
    return out


def test_a_column_statistic_changed_in_the_metadata_table_is_a_difference(sample: Path) -> None:
    table = HoodieTable.open(str(sample))
    view = table.local_view()
    held = {f.file_name for s in view.latest_slices_all() for f in [s.base_file, *s.log_files] if f is not None}
    before = change_one_column_min(sample, "ts", held, -1000)  # below every value: survives merging
    report = validate_metadata_table(HoodieTable.open(str(sample)))
    (diff,) = report.differences
    assert (diff.check, diff.file, diff.column) == ("column_stats", before.file_name, "ts")
    assert diff.metadata.startswith("min -1000, ") and diff.data.startswith(f"min {before.min}, ")


def test_record_index_entries_changed_in_the_metadata_table_are_differences(sample: Path) -> None:
    reader = MetadataTableReader(HoodieTable.open(str(sample)))
    in_logs = _keys_in_logs(reader, "record_index")
    lost, moved = sorted(k for group in reader.record_locations_by_file_group() for k in group if k not in in_logs)[:2]
    live = reader.record_locations([lost, moved])
    other = "ffffffff-0000-0000-0000-000000000000-0"

    def damage(record: MetadataRecord) -> MetadataRecord | None:
        loc = record.payload
        if record.key == lost:
            return None
        if record.key == moved and isinstance(loc, RecordLocation):
            return dataclasses.replace(record, payload=dataclasses.replace(loc, file_id=other))
        return record

    rewrite_mdt_base(sample, "record_index", damage)
    report = validate_metadata_table(HoodieTable.open(str(sample)), checks=["record_index"])
    by_key = {d.key: d for d in report.differences}
    assert set(by_key) == {lost, moved}, report.differences
    assert (by_key[lost].partition, by_key[lost].data, by_key[lost].metadata) == (live[lost].partition, f"file group {live[lost].file_id}", "absent")
    assert by_key[moved].data == f"file group {live[moved].file_id}"
    assert by_key[moved].metadata == f"file group {other} in partition {live[moved].partition!r}"


def test_a_metadata_log_file_removed_is_an_error_naming_it(sample: Path) -> None:
    reader = MetadataTableReader(HoodieTable.open(str(sample)))
    log = next(lf for s in reader.file_slices("record_index") for lf in s.log_files if lf.size > 100)
    Path(log.path).unlink()
    with pytest.raises(FormatError, match=log.file_name):
        validate_metadata_table(HoodieTable.open(str(sample)))


def test_some_partitions_and_checks(sample: Path) -> None:
    table = HoodieTable.open(str(sample))
    report = validate_metadata_table(table, checks=["bloom_filters", "files"], partitions=["city=nyc"])
    assert report.ok and report.checks == ("files", "bloom_filters") and report.partitions == ("city=nyc",)
    assert report.keys_checked == report.statistics_checked == 0
    # a partition the table does not hold, that the metadata table does not list either
    assert validate_metadata_table(table, partitions=["city=none"]).ok
    with pytest.raises(TableError, match="unknown metadata table check"):
        validate_metadata_table(table, checks=["files", "everything"])


def test_a_check_of_a_partition_the_metadata_table_lacks_is_an_error(conformance_table: Callable[[str], Path]) -> None:
    lacking = [n for n in MDT_TABLES if "bloom_filters" not in HoodieTable.open(str(conformance_table(n))).config.metadata_partitions]
    if not lacking:
        pytest.skip("every conformance table has a bloom_filters partition")
    table = HoodieTable.open(str(conformance_table(lacking[0])))
    with pytest.raises(TableError, match="no complete 'bloom_filters' partition"):
        validate_metadata_table(table, checks=["bloom_filters"])
    assert "bloom_filters" not in validate_metadata_table(table).checks
