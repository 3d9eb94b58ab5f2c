"""The file-system view lists through the metadata table (issue 29): on the tables whose
metadata table Apache Hudi wrote (the conformance tables with ``.hoodie/metadata``), a
snapshot read, an incremental read, ``hoodie validate`` and a timeline server's views list
no partition folder and answer what listing storage answers; time travel too. What looks
for files of pending writes still lists storage. ``hoodie.metadata.validate=true``
compares every answer with storage and names the partition and files that differ."""
from __future__ import annotations

import logging
import shutil
from collections.abc import Callable, Iterable
from dataclasses import replace
from pathlib import Path

import pyarrow as pa
import pytest
from folder_listings import FolderListings
from mdt_checks import mdt_tables
from shared import cases_or_skip

import hoodie
from hoodie.config.options import HoodieConfig
from hoodie.config.table_config import TableConfig
from hoodie.errors import MetadataOutOfSyncError
from hoodie.layout import parse_base_file_name
from hoodie.metadata_table import MetadataTableReader
from hoodie.metadata_table.listing import MetadataListing, listed_through_metadata, metadata_listing
from hoodie.server_calls import ServerClient
from hoodie.table.file_group import BaseFile, LogFile
from hoodie.table.fs_view import FileSystemView, PartitionLister, TableView
from hoodie.table.remote_view import RemoteFileSystemView
from hoodie.table.synced_listings import SharedListings, SyncedListings
from hoodie.table.table import HoodieTable
from hoodie.table.validate import validate_table
from hoodie.table.view_stores import MemoryStore, StoreSettings
from hoodie.timeline_server import TimelineServer

MDT_TABLES = mdt_tables()
CASES = cases_or_skip(MDT_TABLES, MDT_TABLES, "tables with a metadata table")
NO_MDT = {"hoodie.metadata.enable": "false"}


def _copy(conformance_table: Callable[[str], Path], name: str, tmp_path: Path) -> str:
    dest = tmp_path / Path(name).name
    shutil.copytree(conformance_table(name), dest)
    return str(dest)


def _rows(t: pa.Table) -> list[dict[str, object]]:
    return sorted(t.to_pylist(), key=lambda r: str(r["_hoodie_record_key"]))


def _through_mdt(base: str, storage: FolderListings | None = None, validate: bool = False) -> HoodieTable:
    return listed_through_metadata(HoodieTable.open(base, storage), MetadataListing(validate))


@pytest.mark.parametrize("name", CASES)
def test_a_snapshot_read_lists_no_partition_folder(conformance_table: Callable[[str], Path], name: str, tmp_path: Path) -> None:
    base = _copy(conformance_table, name, tmp_path)
    storage = FolderListings(base)
    rows = hoodie.read(base, storage=storage)
    assert not storage.listed, storage.listed
    listing = FolderListings(base)
    assert _rows(hoodie.read(base, NO_MDT, storage=listing)) == _rows(rows) and rows.num_rows
    assert listing.listed  # without the metadata table every partition is listed


@pytest.mark.parametrize("name", CASES)
def test_an_incremental_read_lists_no_partition_folder(conformance_table: Callable[[str], Path], name: str, tmp_path: Path) -> None:
    base = _copy(conformance_table, name, tmp_path)
    storage = FolderListings(base)
    options = {"hoodie.datasource.query.type": "incremental", "hoodie.datasource.read.begin.instanttime": "0"}
    rows = hoodie.read(base, options, storage=storage)
    assert not storage.listed, storage.listed
    listing = FolderListings(base)
    assert _rows(hoodie.read(base, {**options, **NO_MDT}, storage=listing)) == _rows(rows) and rows.num_rows
    assert listing.listed


@pytest.mark.parametrize("name", CASES)
def test_views_as_of_every_instant_equal_those_listing_storage(conformance_table: Callable[[str], Path], name: str) -> None:
    base = str(conformance_table(name))
    listed, through = HoodieTable.open(base), _through_mdt(base)
    for instant in [None, *(i.timestamp for i in listed.timeline.completed_writes())]:
        expected = listed.view(instant, ignore_missing_files=True)
        view = through.view(instant, ignore_missing_files=True)
        assert view.latest_slices_all() == expected.latest_slices_all(), instant
        assert view.missing == expected.missing, instant
        for partition in expected.all_partition_paths():
            assert view.file_groups(partition) == expected.file_groups(partition), (instant, partition)


@pytest.mark.parametrize("name", CASES)
def test_hoodie_validate_lists_no_partition_folder_and_finds_a_file_gone(conformance_table: Callable[[str], Path], name: str, tmp_path: Path) -> None:
    base = _copy(conformance_table, name, tmp_path)
    storage = FolderListings(base)
    report = validate_table(_through_mdt(base, storage))
    assert not storage.listed, storage.listed
    assert report.ok and report.files_checked == validate_table(HoodieTable.open(base)).files_checked
    # a latest base file lost from storage: the metadata table still lists it, the check finds it gone
    gone = next(s.base_file for s in HoodieTable.open(base).view().latest_slices_all() if s.base_file is not None)
    Path(gone.path).unlink()
    problems = validate_table(_through_mdt(base)).problems
    assert [(p.file_name, p.kind) for p in problems] == [(gone.file_name, "missing")]


@pytest.mark.parametrize("name", CASES)
def test_a_timeline_servers_views_list_no_partition_folder(conformance_table: Callable[[str], Path], name: str, tmp_path: Path) -> None:
    base = _copy(conformance_table, name, tmp_path)
    table = HoodieTable.open(base)
    expected = table.local_view().latest_slices_all()
    for settings, lists in [(StoreSettings(), False), (StoreSettings(metadata_table=False), True)]:
        storage = FolderListings(base)
        with TimelineServer() as server:
            server.add_table(base, storage, settings)
            client = ServerClient(server.address)
            try:
                view = RemoteFileSystemView(client, base, table.timeline)
                assert view.all_partition_paths() == sorted({s.partition_path for s in expected})
                assert view.latest_slices_all() == expected
                assert [g.file_id for g in RemoteFileSystemView(client, base, table.timeline).file_groups(expected[0].partition_path)]
            finally:
                client.close()
        assert bool(storage.listed) == lists, (settings, storage.listed)


@pytest.mark.parametrize("name", CASES)
def test_listings_an_operation_shares_come_from_the_metadata_table(conformance_table: Callable[[str], Path], name: str, tmp_path: Path) -> None:
    base = _copy(conformance_table, name, tmp_path)
    storage = FolderListings(base)
    table = _through_mdt(base, storage).served_by(SharedListings(storage, base))
    assert table.view().latest_slices_all() == HoodieTable.open(base).local_view().latest_slices_all()
    assert table.reload().view().all_partition_paths() == HoodieTable.open(base).local_view().all_partition_paths()
    assert not storage.listed, storage.listed


@pytest.mark.parametrize("name", CASES)
def test_what_looks_for_files_of_pending_writes_lists_storage(conformance_table: Callable[[str], Path], name: str, tmp_path: Path) -> None:
    """The metadata table knows committed files only: a failed write's file is in the raw
    listing (``partition_files``, which rollback and the markers ask) and in
    ``storage_view``, never in a file group."""
    base = _copy(conformance_table, name, tmp_path)
    slc = HoodieTable.open(base).local_view().latest_slices_all()[0]
    partition = slc.partition_path
    stray = Path(base, partition, f"{'0' * 8}-0000-0000-0000-000000000000-0_0-1-0_{'9' * 17}.parquet")
    stray.write_bytes(b"left by a failed write")
    storage = FolderListings(base)
    table = _through_mdt(base, storage)
    view = table.local_view()
    assert stray.name not in {f.name for f in _files(view, partition)}
    assert not storage.listed
    assert stray.name in {f.name for f in view.partition_files(partition)}
    assert storage.listed[partition] == 1
    assert stray.name in {f.name for f in table.storage_view().partition_files(partition)}


def _files(view: TableView, partition: str) -> list[BaseFile | LogFile]:
    """Every file of the partition's file groups."""
    return [f for g in view.file_groups(partition) for s in g.slices for f in ([s.base_file] if s.base_file else []) + list(s.log_files)]


@pytest.mark.parametrize("name", CASES)
def test_validate_compares_every_listing_with_storage(conformance_table: Callable[[str], Path], name: str, tmp_path: Path) -> None:
    base = _copy(conformance_table, name, tmp_path)
    validated = {"hoodie.metadata.validate": "true"}
    intact = hoodie.read(base, validated)
    assert _rows(intact) == _rows(hoodie.read(base, NO_MDT))
    table = HoodieTable.open(base)
    base_file = next(s.base_file for s in table.local_view().latest_slices_all() if s.base_file is not None)
    parsed = parse_base_file_name(base_file.file_name)
    assert parsed is not None
    partition = next(s.partition_path for s in table.local_view().latest_slices_all() if s.base_file == base_file)
    # a failed write's file (its instant never completed) is no difference
    pending = Path(base_file.path).with_name(base_file.file_name.replace(parsed.instant, "99991231235959999"))
    shutil.copyfile(base_file.path, pending)
    assert _rows(hoodie.read(base, validated)) == _rows(intact)
    pending.unlink()
    # a file of a completed instant the metadata table does not list
    extra = Path(base_file.path).with_name(base_file.file_name.replace(parsed.file_id, "00000000-0000-0000-0000-000000000001-0"))
    shutil.copyfile(base_file.path, extra)
    hoodie.read(base)  # (read through the metadata table unchecked, it is not seen)
    with pytest.raises(MetadataOutOfSyncError, match=rf"partition {partition!r}: '{extra.name}' on storage, missing from the metadata table"):
        hoodie.read(base, validated)
    extra.unlink()
    # a file the metadata table lists, gone from storage
    Path(base_file.path).unlink()
    with pytest.raises(MetadataOutOfSyncError, match=rf"partition {partition!r}: '{base_file.file_name}' listed by the metadata table, not on storage"):
        hoodie.read(base, validated)


def test_which_tables_list_through_the_metadata_table(conformance_table: Callable[[str], Path]) -> None:
    if not MDT_TABLES:
        pytest.skip("no conformance table with a metadata table")
    table = HoodieTable.open(str(conformance_table(MDT_TABLES[0])))
    assert metadata_listing(HoodieConfig.of({})) == MetadataListing()  # on unless set false (reads and writes)
    assert metadata_listing(HoodieConfig.of({"hoodie.metadata.validate": "true"})) == MetadataListing(validate=True)
    assert metadata_listing(HoodieConfig.of(NO_MDT)) is None
    assert listed_through_metadata(table, MetadataListing()).listing == MetadataListing()
    assert listed_through_metadata(table, None).listing is None
    without = table.listed_by(None)
    no_files = replace(without, config=TableConfig({**table.config.props, "hoodie.table.metadata.partitions": "column_stats"}))
    assert listed_through_metadata(no_files, MetadataListing()).listing is None
    # a metadata table dropped after the table was opened: the views list storage
    assert MetadataListing().lister(no_files) is None


class _CountedLister:
    """A metadata table's reader counting its lookups of partitions' files."""

    def __init__(self, reader: PartitionLister) -> None:
        self.reader = reader
        self.lookups: list[list[str]] = []

    def all_partition_paths(self) -> list[str]:
        return self.reader.all_partition_paths()

    def files_in_many(self, partitions: Iterable[str]) -> dict[str, dict[str, int]]:
        self.lookups.append(list(partitions))
        return self.reader.files_in_many(self.lookups[-1])


@pytest.mark.parametrize("name", CASES)
def test_a_synced_view_looks_up_the_partitions_it_prefetches_at_once(conformance_table: Callable[[str], Path], name: str, tmp_path: Path) -> None:
    """A timeline server asked for the latest slices of many partitions finds their files
    in one lookup of the metadata table, and keeps them (and a view given the lister
    itself does the same)."""
    base = _copy(conformance_table, name, tmp_path)
    table = HoodieTable.open(base)
    lister = _CountedLister(MetadataTableReader(table))
    storage = FolderListings(base)
    listings = SyncedListings(storage, base, MemoryStore())
    listings.sync(table.timeline)
    listings.use_lister(lambda: lister)
    view = FileSystemView(storage, base, table.timeline, listings=listings)
    partitions = view.all_partition_paths()
    assert view.latest_slices_all() == table.local_view().latest_slices_all()
    assert lister.lookups == ([sorted(partitions)] if len(partitions) > 1 else [partitions])
    assert view.latest_slices_all() and len(lister.lookups) == 1  # kept
    assert not storage.listed
    direct = _CountedLister(MetadataTableReader(table))
    local = FileSystemView(storage, base, table.timeline, lister=direct)
    assert local.latest_slices_all() == table.local_view().latest_slices_all() and len(direct.lookups) == 1


@pytest.mark.parametrize("name", CASES)
def test_a_metadata_table_without_the_latest_write_is_not_listed_through(
    conformance_table: Callable[[str], Path], name: str, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """The metadata table's delta commit of the latest write gone (a writer that kept no
    metadata table wrote it): the metadata table is out of sync, so the view lists
    storage instead, with a warning naming the instant, and finds the write's files."""
    base = _copy(conformance_table, name, tmp_path)
    table = HoodieTable.open(base)
    last = table.timeline.completed_writes()[-1]
    mdt = MetadataTableReader(table).table.timeline
    (delta,) = [i for i in mdt.instants if i.timestamp == last.timestamp and i.is_completed]
    Path(mdt.instant_path(delta)).unlink()
    with caplog.at_level(logging.WARNING, logger="hoodie"):
        slices = _through_mdt(base).view().latest_slices_all()
    assert slices == HoodieTable.open(base).view().latest_slices_all()  # storage's
    assert any(last.timestamp in f.file_name or last.timestamp in str(f.path) for s in slices for f in [s.base_file, *s.log_files] if f is not None)
    assert any("out of sync" in r.getMessage() and last.timestamp in r.getMessage() and "listing storage instead" in r.getMessage() for r in caplog.records)
