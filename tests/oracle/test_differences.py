"""Known differences between hoodie and Apache Hudi (docs/apache-hudi.md), each a strict
expected failure: the day hoodie reads as Apache Hudi does, the test passes and says so."""
from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from hudi_oracle import HUDI_0_15, HUDI_1, HudiOracle
from oracle_reads import both_read, completed_actions
from sequences import DATE_KEYS, SERVICES, Layout, batch, record

import hoodie


@pytest.mark.xfail(strict=True, reason="Apache Hudi 0.15 keeps the range's base rows by Parquet row group, not one by one (docs/apache-hudi.md)")
@pytest.mark.parametrize("version", [HUDI_0_15])
def test_a_stale_update_after_a_compaction_of_a_row_group_in_the_range(
    version: str, hudi_oracle: Callable[[str], HudiOracle], tmp_path: Path
) -> None:
    oracle = hudi_oracle(version)
    path = tmp_path / "table"
    options = Layout("MERGE_ON_READ", "none").options("row_group", **SERVICES, **{"hoodie.datasource.write.operation": "upsert"})
    first = hoodie.write(batch([record(0, 5), record(1, 5)]), str(path), options)
    hoodie.write(batch([record(1, 6)]), str(path), options)  # a log; then the inline compaction
    assert "commit" in completed_actions(path)
    hoodie.write(batch([record(0, 1)]), str(path), options)  # stale: k000 stays at ts 5
    # the compacted base file's one row group holds k001, committed in the range, and
    # k000, committed before it: Apache Hudi 0.15 pushes the range down to Parquet, which
    # keeps or skips whole row groups, so it merges k000's stored version with the stale
    # update, which loses, and pulls k001 alone; hoodie (as Apache Hudi 1.2) merges the
    # range's rows only and pulls the stale update of k000 too
    pull = {"hoodie.datasource.query.type": "incremental", "hoodie.datasource.read.begin.instanttime": first}
    both_read(oracle, path, pull, "incremental pull over a compacted row group")


@pytest.mark.xfail(strict=True, reason="Apache Hudi reads a time travel whose files KEEP_LATEST_FILE_VERSIONS cleaned (docs/apache-hudi.md)")
@pytest.mark.parametrize("version", [HUDI_0_15])
def test_time_travel_to_before_a_cleaned_insert_overwrite(version: str, hudi_oracle: Callable[[str], HudiOracle], tmp_path: Path) -> None:
    oracle = hudi_oracle(version)
    path = tmp_path / "table"
    versions = {"hoodie.cleaner.policy": "KEEP_LATEST_FILE_VERSIONS", "hoodie.cleaner.fileversions.retained": "2"}
    options = Layout("COPY_ON_WRITE", "hive").options("versions", **versions)
    hoodie.write(batch([record(n, 1) for n in range(6)]), str(path), {**options, "hoodie.datasource.write.operation": "insert"})
    before = hoodie.write(batch([record(n, 2) for n in range(6)]), str(path), {**options, "hoodie.datasource.write.operation": "upsert"})
    hoodie.write(batch([record(1, 3)]), str(path), {**options, "hoodie.datasource.write.operation": "insert_overwrite"})
    assert "clean" in completed_actions(path)  # the replaced file group of la is gone
    # Apache Hudi returns the view without la's rows; hoodie raises DamagedTableError naming the cleaned file
    both_read(oracle, path, {"as.of.instant": before}, "time travel to before a cleaned insert_overwrite", time_travel=True)


@pytest.mark.xfail(strict=True, reason="Apache Hudi 1.2 cannot read a timestamp-key-generator table partitioned by a timestamp column (docs/apache-hudi.md)")
@pytest.mark.parametrize("version", [HUDI_1])
def test_timestamp_key_generator_on_a_timestamp_column(version: str, hudi_oracle: Callable[[str], HudiOracle], tmp_path: Path) -> None:
    oracle = hudi_oracle(version)
    path = tmp_path / "table"
    options = Layout("COPY_ON_WRITE", "plain").options("by_date", **{
        "hoodie.datasource.write.keygenerator.class": "org.apache.hudi.keygen.TimestampBasedKeyGenerator",
        "hoodie.datasource.write.partitionpath.field": "at",
        "hoodie.keygen.timebased.timestamp.type": "EPOCHMICROSECONDS",
        "hoodie.keygen.timebased.output.dateformat": "yyyy/MM/dd",
    })
    hoodie.write(batch([record(n, 1) for n in range(6)]), str(path), {**options, "hoodie.datasource.write.operation": "insert"})
    # Apache Hudi 1.2 fails in its vectorized Parquet reader (NullPointerException in
    # WritableColumnVector.getUTF8String: it reads the partition column as a string), on
    # tables it writes itself with these options too
    both_read(oracle, path, {}, "snapshot of a table partitioned by the date of a timestamp column")


@pytest.mark.xfail(strict=True, reason="Apache Hudi 0.15 reads a timestamp-keyed partition field from its folder in base file reads (docs/apache-hudi.md)")
@pytest.mark.parametrize("version", [HUDI_0_15])
def test_timestamp_key_generator_field_in_a_base_file_read(version: str, hudi_oracle: Callable[[str], HudiOracle], tmp_path: Path) -> None:
    oracle = hudi_oracle(version)
    path = tmp_path / "table"
    options = Layout("COPY_ON_WRITE", "hive").options("by_booking_date", **DATE_KEYS, **{"hoodie.datasource.write.operation": "insert"})
    hoodie.write(batch([record(n, 1) for n in range(6)]), str(path), options)
    # the files hold booked as written ("2024-03-02 01:07:01"); Apache Hudi 0.15's
    # copy-on-write snapshot (and read-optimized read) returns the folder's "2024/03/02"
    both_read(oracle, path, {}, "snapshot of a table partitioned by the date of a string column")
