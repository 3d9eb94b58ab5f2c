"""hoodie's metadata-table reader on the metadata tables Apache Hudi 1.1 wrote (the
conformance tables with ``.hoodie/metadata``): partitions and files equal what the
file-system view finds on storage, column statistics equal the Parquet footers, the
record index places every key in the file group that holds it; instants the data table
did not complete are not seen; a damaged metadata file is an error naming it."""
from __future__ import annotations

import dataclasses
import datetime as dt
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from mdt_checks import check_column_stats, check_files, check_record_index, mdt_tables, stored_files
from shared import cases_or_skip

from hoodie.config.table_config import TableConfig
from hoodie.errors import FormatError, MetadataOutOfSyncError, TableError
from hoodie.metadata_table import MetadataTableReader
from hoodie.table.table import HoodieTable

MDT_TABLES = mdt_tables()
CASES = cases_or_skip(MDT_TABLES, MDT_TABLES, "tables with a metadata table")


def _copy(conformance_table: Callable[[str], Path], name: str, tmp_path: Path) -> Path:
    dest = tmp_path / Path(name).name
    shutil.copytree(conformance_table(name), dest)
    return dest


@pytest.mark.parametrize("name", CASES)
def test_files_equal_the_committed_files_on_storage(conformance_table: Callable[[str], Path], name: str) -> None:
    table = HoodieTable.open(str(conformance_table(name)))
    reader = MetadataTableReader(table)
    assert all(stored_files(table, p) for p in check_files(reader, table))
    assert reader.files_in("no-such-partition") == {}


@pytest.mark.parametrize("name", CASES)
def test_column_stats_equal_the_parquet_footers(conformance_table: Callable[[str], Path], name: str) -> None:
    table = HoodieTable.open(str(conformance_table(name)))
    reader = MetadataTableReader(table)
    if "column_stats" not in reader.partitions:
        pytest.skip("no column_stats partition")
    assert check_column_stats(reader, table)


def _shifted(instant: str, hours: int) -> str:
    t = dt.datetime.strptime(instant[:14], "%Y%m%d%H%M%S") + dt.timedelta(hours=hours)
    return t.strftime("%Y%m%d%H%M%S") + instant[14:]


@pytest.mark.parametrize("name", CASES)
def test_record_index_places_every_key_in_its_file_group(conformance_table: Callable[[str], Path], name: str) -> None:
    base = conformance_table(name)
    table = HoodieTable.open(str(base))
    reader = MetadataTableReader(table)
    if "record_index" not in reader.partitions:
        pytest.skip("no record_index partition")
    located = check_record_index(reader, str(base))
    assert located
    # the instant is one the data table completed (written in the writer's local time zone)
    completed = {i.timestamp for i in table.timeline.instants if i.is_completed}
    for loc in located.values():
        assert any(_shifted(loc.instant, h) in completed for h in range(-14, 15)), loc


@pytest.mark.parametrize("name", CASES)
def test_blocks_of_instants_the_data_table_did_not_complete_are_not_seen(
    conformance_table: Callable[[str], Path], name: str, tmp_path: Path
) -> None:
    base = _copy(conformance_table, name, tmp_path)
    table = HoodieTable.open(str(base))
    last = table.timeline.completed_writes()[-1]
    new_files = {(p, f) for p in table.local_view().all_partition_paths() for f in stored_files(table, p) if last.timestamp in f}
    assert new_files
    # the data commit fails after the metadata table's delta commit completed
    Path(table.timeline.instant_path(last)).unlink()
    table = HoodieTable.open(str(base))
    reader = MetadataTableReader(table)
    for partition in table.local_view().all_partition_paths():
        listed = reader.files_in(partition)
        assert listed == stored_files(table, partition)
        assert not {(partition, f) for f in listed} & new_files


@pytest.mark.parametrize("name", CASES)
def test_pending_metadata_instants_are_not_seen(conformance_table: Callable[[str], Path], name: str, tmp_path: Path) -> None:
    base = _copy(conformance_table, name, tmp_path)
    table = HoodieTable.open(str(base))
    reader = MetadataTableReader(table)
    last = table.timeline.completed_writes()[-1]
    before = {p: reader.files_in(p) for p in reader.all_partition_paths()}
    assert any(last.timestamp in f for files in before.values() for f in files)
    mdt = reader.table.timeline
    (mdt_instant,) = [i for i in mdt.instants if i.timestamp == last.timestamp and i.is_completed]
    Path(mdt.instant_path(mdt_instant)).unlink()
    # the data table completed an instant the metadata table did not: it is out of sync,
    # refused on open; opened anyway, the pending delta commit is not seen
    with pytest.raises(MetadataOutOfSyncError, match=f"out of sync: .* completed instant\\(s\\) {last.timestamp} ") as caught:
        MetadataTableReader(HoodieTable.open(str(base)))
    assert caught.value.instants == (last.timestamp,)
    after = MetadataTableReader(HoodieTable.open(str(base)), check_sync=False)
    assert after.unsynced == [last.timestamp]
    for partition, files in before.items():
        assert after.files_in(partition) == {f: s for f, s in files.items() if last.timestamp not in f}


@pytest.mark.parametrize("name", CASES)
def test_a_damaged_metadata_file_is_an_error_naming_it(conformance_table: Callable[[str], Path], name: str, tmp_path: Path) -> None:
    base = _copy(conformance_table, name, tmp_path)
    reader = MetadataTableReader(HoodieTable.open(str(base)))
    (files_slice,) = reader.file_slices("files")
    assert files_slice.base_file is not None and files_slice.log_files
    hfile = Path(files_slice.base_file.path)
    data = bytearray(hfile.read_bytes())
    data[len(data) // 3] ^= 0xFF
    hfile.write_bytes(bytes(data))
    with pytest.raises(FormatError, match=hfile.name):
        MetadataTableReader(HoodieTable.open(str(base))).all_partition_paths()
    # a log block cut short inside what its completed delta commit wrote
    shutil.copyfile(conformance_table(name) / hfile.relative_to(base), hfile)
    log = Path(files_slice.log_files[-1].path)
    log.write_bytes(log.read_bytes()[:-20])
    with pytest.raises(FormatError, match=log.name):
        MetadataTableReader(HoodieTable.open(str(base))).files_in("")


@pytest.mark.parametrize("name", CASES)
def test_a_table_without_a_complete_files_partition_has_no_metadata_table(conformance_table: Callable[[str], Path], name: str) -> None:
    table = HoodieTable.open(str(conformance_table(name)))
    props = dict(table.config.props)
    props["hoodie.table.metadata.partitions"] = "column_stats"
    props["hoodie.table.metadata.partitions.inflight"] = "files"
    with pytest.raises(TableError, match="no complete metadata table: hoodie.table.metadata.partitions is column_stats"):
        MetadataTableReader(dataclasses.replace(table, config=TableConfig(props)))
    props["hoodie.table.metadata.partitions"] = "files"
    reader = MetadataTableReader(dataclasses.replace(table, config=TableConfig(props)))
    with pytest.raises(TableError, match="no complete 'column_stats' partition"):
        reader.column_stats_of("currency")
