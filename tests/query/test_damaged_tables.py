"""A damaged table never reads silently: a file a completed instant wrote that the read
needs, missing or truncated or corrupt where the commit wrote it, is an error naming the
file and the instant; ``ignoreMissingFiles`` / ``ignoreCorruptFiles`` read around it with a
warning naming it. A torn block a failed writer left after the committed bytes still
reads as before."""
from __future__ import annotations

import logging
from pathlib import Path

import pyarrow as pa
import pytest
from table_options import MOR_TRIPS, trip_options

import hoodie
from hoodie import HoodieTable
from hoodie.errors import DamagedTableError

# the checks of a listing of storage against the committed files (with a metadata table,
# the listing comes from it and a lost file is found when the read opens it)
COW = trip_options(**{"hoodie.metadata.enable": "false"})
MOR = {**MOR_TRIPS, "hoodie.metadata.enable": "false"}


def trips(n: int, ts: int, start: int = 0) -> pa.Table:
    ids = range(start, start + n)
    return pa.table({"uuid": [f"u{i:03d}" for i in ids], "city": ["sf" if i % 2 else "nyc" for i in ids], "ts": [ts] * n, "fare": [float(ts)] * n})


def latest_stat_files(path: str) -> list[tuple[str, str, int, int]]:
    """(instant, relative path, offset, size) of every file the latest commit wrote."""
    table = HoodieTable.open(path)
    inst = table.timeline.completed_writes()[-1]
    return [(inst.timestamp, s.path, s.logOffset or 0, s.fileSizeInBytes) for s in table.commit_metadata(inst).write_stats()]


def test_missing_latest_base_file_is_an_error_not_the_older_version(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    path = str(tmp_path / "t")
    hoodie.write(trips(10, 1), path, COW)
    hoodie.write(trips(10, 2), path, COW)  # rewrites both file groups
    instant, rel, _, _ = latest_stat_files(path)[0]
    (Path(path) / rel).unlink()
    for options in ({}, {"as.of.instant": instant}, {"hoodie.datasource.query.type": "incremental", "hoodie.datasource.read.begin.instanttime": "0"}):
        with pytest.raises(DamagedTableError, match=rf"{rel}.*completed instant {instant}.*missing"):
            hoodie.read(path, options)
    with caplog.at_level(logging.WARNING):
        rest = hoodie.read(path, {"ignoreMissingFiles": "true"})
    assert rel in caplog.text
    assert rest.num_rows == 5 and set(rest.column("ts").to_pylist()) == {2}  # the other file group, never the old version


def test_a_write_on_a_damaged_file_group_is_refused(tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    hoodie.write(trips(10, 1), path, COW)
    hoodie.write(trips(10, 2), path, COW)
    _, rel, _, _ = latest_stat_files(path)[0]
    (Path(path) / rel).unlink()
    with pytest.raises(DamagedTableError, match=rel):
        hoodie.write(trips(10, 3), path, COW)


def _mor_with_updates(path: str) -> tuple[str, str, int, int]:
    hoodie.write(trips(50, 1), path, MOR)
    hoodie.write(trips(25, 2), path, MOR)  # 25 updates: log files
    logs = [f for f in latest_stat_files(path) if "/." in f[1]]
    assert logs
    return logs[0]


def test_truncated_committed_log_block_is_an_error(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    path = str(tmp_path / "t")
    instant, rel, offset, size = _mor_with_updates(path)
    log_file = Path(path) / rel
    data = log_file.read_bytes()
    assert len(data) == offset + size
    log_file.write_bytes(data[: offset + size // 2])  # the last block cut in half
    with pytest.raises(DamagedTableError, match=rf"{log_file.name}.*completed instant {instant}"):
        hoodie.read(path)
    with caplog.at_level(logging.WARNING):
        rest = hoodie.read(path, {"ignoreCorruptFiles": "true"})
    assert log_file.name in caplog.text
    assert rest.num_rows == 50


def test_corrupt_committed_log_block_is_an_error(tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    instant, rel, offset, size = _mor_with_updates(path)
    log_file = Path(path) / rel
    data = bytearray(log_file.read_bytes())
    data[offset + 6 : offset + 14] = b"\x00\x00\x00\x00\x7f\xff\xff\xff"  # the block length: runs past the end
    log_file.write_bytes(bytes(data))
    with pytest.raises(DamagedTableError, match=rf"{log_file.name} is corrupt.*completed instant {instant}"):
        hoodie.read(path)
    with pytest.raises(DamagedTableError):
        hoodie.read(path, {"hoodie.datasource.query.type": "incremental", "hoodie.datasource.read.begin.instanttime": "0"})


def test_torn_tail_after_committed_bytes_reads_as_before(tmp_path: Path) -> None:
    """What a killed writer leaves after the committed blocks is skipped, as Java does."""
    path = str(tmp_path / "t")
    _, rel, _, _ = _mor_with_updates(path)
    expected = hoodie.read(path).sort_by("uuid")
    log_file = Path(path) / rel
    log_file.write_bytes(log_file.read_bytes() + b"#HUDI#" + b"\x00" * 7)
    assert hoodie.read(path).sort_by("uuid") == expected


def test_missing_committed_log_file_is_an_error(tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    instant, rel, _, _ = _mor_with_updates(path)
    (Path(path) / rel).unlink()
    with pytest.raises(DamagedTableError, match=rf"{Path(rel).name}.*completed instant {instant}.*missing"):
        hoodie.read(path)
    assert hoodie.read(path, {"ignoreMissingFiles": "true"}).num_rows == 50


def test_compaction_refuses_a_damaged_log_instead_of_folding_it_in(tmp_path: Path) -> None:
    """A compaction that skipped a corrupt committed block would make the loss permanent."""
    from hoodie.services.compaction import CompactionSettings, run_compaction, schedule_compaction

    path = str(tmp_path / "t")
    _, rel, offset, size = _mor_with_updates(path)
    log_file = Path(path) / rel
    log_file.write_bytes(log_file.read_bytes()[: offset + size // 2])
    instant, _ = schedule_compaction(HoodieTable.open(path), CompactionSettings(), require_threshold=False)
    assert instant is not None
    with pytest.raises(DamagedTableError, match=log_file.name):
        run_compaction(HoodieTable.open(path), instant)
    assert not [i for i in HoodieTable.open(path).timeline.completed_writes() if i.timestamp == instant]


# with the metadata table (the default) the listing names the lost file: the read finds
# it gone when it opens it, and says so as the checks of a storage listing do
COW_MDT = trip_options()
MOR_MDT = dict(MOR_TRIPS)


@pytest.mark.parametrize("options", [COW_MDT, MOR_MDT], ids=["cow", "mor"])
def test_missing_base_file_named_by_the_metadata_table_is_damage(tmp_path: Path, options: dict[str, str]) -> None:
    path = str(tmp_path / "t")
    hoodie.write(trips(10, 1), path, options)
    _, rel, _, _ = latest_stat_files(path)[0]
    (Path(path) / rel).unlink()
    with pytest.raises(DamagedTableError, match=rf"base file .*{rel} is missing"):
        hoodie.read(path)


def test_missing_log_file_named_by_the_metadata_table_is_damage(tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    hoodie.write(trips(10, 1), path, MOR_MDT)
    hoodie.write(trips(10, 2), path, {**MOR_MDT, "hoodie.datasource.write.operation": "upsert"})
    _, rel, _, _ = latest_stat_files(path)[0]
    assert ".log." in rel
    (Path(path) / rel).unlink()
    with pytest.raises(DamagedTableError, match=rf"log file .*{rel} is missing"):
        hoodie.read(path)
