"""The listings a process keeps of a table between its writes (``table/kept_listings.py``).

In process, without a timeline server, a write of a table listed through its metadata
table takes up the listings the process's last write of the same table kept, synced to
its own timeline from the metadata of what completed since: it looks no partition up in
the metadata table again. What other writers commit meanwhile, a table made again at the
same path and a failed write must each leave the next write with listings true to the
table. A table listed from storage is listed again by each write.
"""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pyarrow as pa
import pytest
from folder_listings import FolderListings
from table_options import trip_options

import hoodie
from hoodie.errors import DamagedTableError, HoodieError
from hoodie.metadata_table.reader import MetadataTableReader
from hoodie.services.archival import ArchiveSettings, archive
from hoodie.services.compaction import UNBOUNDED_STRATEGY, CompactionSettings, run_compaction, schedule_compaction
from hoodie.table import kept_listings
from hoodie.table.synced_listings import SharedListings
from hoodie.table.table import HoodieTable

CITIES = ["sf", "nyc", "la"]
OPTIONS = trip_options()  # (the metadata table on, as by default)
NO_MDT = trip_options(**{"hoodie.metadata.enable": "false"})


def trips(keys: range | list[int], ts: int) -> pa.Table:
    return pa.table({
        "uuid": [f"k{k:03d}" for k in keys],
        "city": [CITIES[k % 3] for k in keys],
        "ts": [ts] * len(keys),
        "fare": [float(ts)] * len(keys),
    })


def rows(path: str) -> dict[str, int]:
    read = hoodie.read(path)
    return dict(zip(read["uuid"].to_pylist(), read["ts"].to_pylist()))


@pytest.fixture
def lookups(monkeypatch: pytest.MonkeyPatch) -> Counter[str]:
    """The partitions looked up in a metadata table's ``files`` partition, counted."""
    looked_up: Counter[str] = Counter()
    files_in_many = MetadataTableReader.files_in_many

    def counted(reader: MetadataTableReader, partitions: list[str]) -> dict[str, dict[str, int]]:
        looked_up.update(partitions)
        return files_in_many(reader, partitions)

    monkeypatch.setattr(MetadataTableReader, "files_in_many", counted)
    return looked_up


@pytest.fixture(autouse=True)
def nothing_kept() -> None:
    kept_listings.forget_kept_listings()


def test_the_next_write_in_the_process_looks_no_partition_up_again(tmp_path: Path, lookups: Counter[str]) -> None:
    path = str(tmp_path / "t")
    hoodie.write(trips(range(30), 1), path, OPTIONS)
    hoodie.write(trips(range(0, 30, 3), 2), path, OPTIONS)  # (the first write made the metadata table)
    lookups.clear()
    for ts in range(3, 7):
        hoodie.write(trips(range(0, 40, 2), ts), path, OPTIONS)
        assert lookups == Counter(), f"write {ts} looked up {dict(lookups)}"
    assert rows(path) == {f"k{k:03d}": 2 if k % 3 == 0 else 1 for k in range(1, 30, 2)} | {f"k{k:03d}": 6 for k in range(0, 40, 2)}


def test_without_kept_listings_a_write_looks_its_partitions_up(tmp_path: Path, lookups: Counter[str]) -> None:
    """The contrast: a process that keeps none looks up every partition a write touches."""
    path = str(tmp_path / "t")
    hoodie.write(trips(range(30), 1), path, OPTIONS)
    hoodie.write(trips(range(0, 30, 3), 2), path, OPTIONS)
    kept_listings.forget_kept_listings()
    lookups.clear()
    hoodie.write(trips(range(0, 30, 2), 3), path, OPTIONS)
    assert set(lookups) == set(CITIES)


def test_a_table_listed_from_storage_is_listed_again_by_each_write(tmp_path: Path) -> None:
    """Without the metadata table each write lists its partitions: a committed file gone
    from storage outside any commit is then found by its view."""
    path = str(tmp_path / "t")
    hoodie.write(trips(range(30), 1), path, NO_MDT)
    storage = FolderListings(path)
    hoodie.write(trips(range(0, 30, 2), 2), path, NO_MDT, storage=storage)
    assert {folder for folder in storage.listed if folder} == set(CITIES)
    gone = HoodieTable.open(path).view().latest_slices("sf")[0].base_file
    assert gone is not None
    Path(gone.path).unlink()
    with pytest.raises(DamagedTableError, match=gone.path.rsplit("/", 1)[1]):
        hoodie.write(trips(range(0, 30, 2), 3), path, NO_MDT)


WRITER = """
import json, sys
import pyarrow as pa
import hoodie
path, keys, ts, options = sys.argv[1], json.loads(sys.argv[2]), int(sys.argv[3]), json.loads(sys.argv[4])
cities = ["sf", "nyc", "la"]
batch = pa.table({"uuid": [f"k{k:03d}" for k in keys], "city": [cities[k % 3] for k in keys], "ts": [ts] * len(keys), "fare": [float(ts)] * len(keys)})
hoodie.write(batch, path, options)
"""


@pytest.mark.parametrize("options", [OPTIONS, {**OPTIONS, "hoodie.datasource.write.table.type": "MERGE_ON_READ"}], ids=["cow", "mor"])
def test_what_another_process_commits_meanwhile_is_seen_by_the_next_write(tmp_path: Path, options: dict[str, str]) -> None:
    """Another process inserts new keys (new file groups) between two writes of this one;
    this process's next write updates them where they are, rather than inserting them
    again beside them (which listings blind to the other commit would make it do)."""
    path = str(tmp_path / "t")
    hoodie.write(trips(range(10), 1), path, options)
    hoodie.write(trips(range(5), 2), path, options)
    subprocess.run(
        [sys.executable, "-c", WRITER, path, json.dumps(list(range(100, 130))), "3", json.dumps(options)],
        check=True, capture_output=True, text=True,
    )
    hoodie.write(trips(range(100, 130), 4), path, options)
    assert hoodie.read(path).num_rows == 40
    assert rows(path) == {f"k{k:03d}": 2 if k < 5 else 1 for k in range(10)} | {f"k{k:03d}": 4 for k in range(100, 130)}


def test_a_table_made_again_at_the_same_path_is_listed_again(tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    hoodie.write(trips(range(30), 1), path, OPTIONS)
    hoodie.write(trips(range(10), 2), path, OPTIONS)
    shutil.rmtree(path)
    hoodie.write(trips(range(50, 56), 3), path, OPTIONS)
    hoodie.write(trips(range(50, 53), 4), path, OPTIONS)
    hoodie.write(trips(range(50, 52), 5), path, OPTIONS)
    assert rows(path) == {"k050": 5, "k051": 5, "k052": 4, "k053": 3, "k054": 3, "k055": 3}


def test_a_failed_write_keeps_no_listings(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, lookups: Counter[str]) -> None:
    path = str(tmp_path / "t")
    hoodie.write(trips(range(30), 1), path, OPTIONS)
    hoodie.write(trips(range(3), 2), path, OPTIONS)
    from hoodie.writer import transaction

    def refuse(*args: object, **kwargs: object) -> None:
        raise HoodieError("the commit is refused")

    with monkeypatch.context() as patched:
        patched.setattr(transaction.WriteTransaction, "commit", refuse)
        with pytest.raises(HoodieError, match="refused"):
            hoodie.write(trips(range(30), 3), path, OPTIONS)
    lookups.clear()
    hoodie.write(trips(range(3), 4), path, OPTIONS)
    assert set(lookups) == set(CITIES)  # looked up afresh, not taken from the failed write
    assert rows(path) == {f"k{k:03d}": 4 if k < 3 else 1 for k in range(30)}


def test_at_most_max_tables_are_kept_the_least_recently_written_given_up(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, lookups: Counter[str]
) -> None:
    monkeypatch.setattr(kept_listings, "MAX_TABLES", 1)
    first, second = str(tmp_path / "a"), str(tmp_path / "b")
    for path in (first, first, second, second):
        hoodie.write(trips(range(9), 1), path, OPTIONS)
    lookups.clear()
    hoodie.write(trips(range(3), 2), second, OPTIONS)
    assert lookups == Counter()
    hoodie.write(trips(range(3), 2), first, OPTIONS)
    assert set(lookups) == set(CITIES)


def test_listings_over_the_bound_are_not_kept(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, lookups: Counter[str]) -> None:
    monkeypatch.setattr(kept_listings, "MAX_BYTES", 10)
    path = str(tmp_path / "t")
    hoodie.write(trips(range(9), 1), path, OPTIONS)
    hoodie.write(trips(range(9), 2), path, OPTIONS)
    lookups.clear()
    hoodie.write(trips(range(3), 3), path, OPTIONS)
    assert set(lookups) == set(CITIES)


def test_listings_are_not_kept_when_the_metadata_table_is_validated(tmp_path: Path, lookups: Counter[str]) -> None:
    """``hoodie.metadata.validate`` compares every answer of the metadata table with
    storage: each write looks its partitions up (and lists them) again."""
    path = str(tmp_path / "t")
    validated = {**OPTIONS, "hoodie.metadata.validate": "true"}
    hoodie.write(trips(range(9), 1), path, validated)
    hoodie.write(trips(range(9), 2), path, validated)
    lookups.clear()
    hoodie.write(trips(range(3), 3), path, validated)
    assert set(lookups) == set(CITIES)


def test_an_instant_pending_at_the_last_sync_then_completed_and_archived_makes_them_list_again(tmp_path: Path) -> None:
    """Listings synced while a compaction was pending; it completes (in the compaction's
    own process, say) and archival moves it out of the active timeline before the next
    sync: what it wrote was never applied, so they list again rather than serve a latest
    slice without its new base file (whose keys a write would then insert twice)."""
    path = str(tmp_path / "t")
    options = {**NO_MDT, "hoodie.datasource.write.table.type": "MERGE_ON_READ", "hoodie.clean.automatic": "false", "hoodie.archive.automatic": "false"}
    hoodie.write(trips(range(0, 30, 3), 1), path, options)
    hoodie.write(trips(range(0, 15, 3), 2), path, options)
    compaction, _ = schedule_compaction(HoodieTable.open(path), CompactionSettings(strategy=UNBOUNDED_STRATEGY), require_threshold=False)
    assert compaction is not None
    for ts in range(3, 9):
        hoodie.write(trips([0], ts), path, options)
    table = HoodieTable.open(path)
    listings = SharedListings(table.storage, table.base_path)
    table.served_by(listings).view().latest_slices("sf")  # listed while the compaction is pending
    run_compaction(HoodieTable.open(path), compaction)
    hoodie.write(trips([3], 20), path, options)
    archive(HoodieTable.open(path), ArchiveSettings(min_commits=4, max_commits=5))
    table = HoodieTable.open(path)
    assert not table.timeline.contains(compaction)  # archived
    latest = {s.file_id: s.base_file is not None for s in table.served_by(listings).view().latest_slices("sf")}
    assert latest == {s.file_id: s.base_file is not None for s in table.view().latest_slices("sf")}
    assert all(latest.values())  # the compaction's base files are in
