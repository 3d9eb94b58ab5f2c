"""How often a write and its inline services list a partition, counted on real storage.

The table of issue 29's measurement: 20 partitions, upserts that touch every one of them,
default cleaning. Every listing of a partition folder must come from the file-system view
(``table/fs_view.py``) or the synced listings it is given (``table/synced_listings.py``),
and their number per partition stays a small constant per commit:

* in process, a write lists each partition it writes once (its view, before it writes);
  the inline services after it share the write's listings, brought up to date by its
  commit metadata (``SharedListings``), so a clean lists nothing more, its first walk of
  the table included: one listing per partition per commit;
* with the embedded timeline server, the server keeps its listings in step with the
  timeline: once a partition has files it is never listed again, whatever the commits.
* with the metadata table (``hoodie.metadata.enable=true``, the default; the other
  cases set it false), nothing lists a partition
  folder: writes, their services, reads and the server's views take partitions and files
  from it.
"""
from __future__ import annotations

import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pyarrow as pa
import pytest
from table_options import trip_options

import hoodie
from hoodie.layout import parse_log_file_name
from hoodie.server_calls import ServerClient
from hoodie.services.cleaning import CleanResult, CleanSettings, clean
from hoodie.services.rollback import append_rollback_block
from hoodie.storage.base import FileInfo
from hoodie.storage.local import LocalStorage
from hoodie.table.remote_view import REMOTE_ONLY, ViewSource
from hoodie.table.table import HoodieTable
from hoodie.timeline_server import TimelineServer
from hoodie.timeline_server.embedded import PROCESS, stop_embedded

PARTITIONS = [f"city{i:02d}" for i in range(20)] + ["a", "b"]
VIEW_MODULES = ("hoodie/table/fs_view.py", "hoodie/table/synced_listings.py")


class ListingsByCaller(LocalStorage):
    """Local storage recording, for each listing of a partition folder of the table at
    ``base_path``, the partition and the module of hoodie that asked for it."""

    def __init__(self, base_path: str) -> None:
        super().__init__()
        self.base_path = base_path
        self.listed: Counter[str] = Counter()
        self.callers: Counter[str] = Counter()

    def list_dir(self, path: str) -> list[FileInfo]:
        parent, _, name = path.rstrip("/").rpartition("/")
        if parent == self.base_path and name in PARTITIONS:
            self.listed[name] += 1
            self.callers[_caller()] += 1
        return super().list_dir(path)


def _caller() -> str:
    """The hoodie module (outside storage/) the current listing comes from."""
    frame = sys._getframe(2)
    while frame is not None:
        name = frame.f_code.co_filename.replace("\\", "/")
        if "/hoodie/" in name and "/hoodie/storage/" not in name:
            return "hoodie/" + name.rsplit("/hoodie/", 1)[1]
        frame = frame.f_back  # type: ignore[assignment]
    return "?"


def _upsert(path: str, storage: ListingsByCaller, round_: int, **options: str) -> None:
    """An upsert of the 100 keys; storage listed (no metadata table) unless ``options`` say."""
    keys = [f"k{i:03d}" for i in range(100)]
    batch = pa.table({"uuid": keys, "city": [PARTITIONS[i % 20] for i in range(100)], "ts": [round_] * 100, "fare": [float(round_)] * 100})
    hoodie.write(batch, path, trip_options(**{"hoodie.metadata.enable": "false", **options}), storage=storage)


@pytest.fixture(autouse=True)
def no_embedded_server() -> Iterator[None]:
    stop_embedded(PROCESS)  # the server the embedded case starts holds its storage
    yield
    stop_embedded(PROCESS)


def test_ten_upserts_with_default_cleaning_list_each_partition_once_a_commit(tmp_path: Path) -> None:
    """The issue's measurement: 20 partitions, 10 upserts, default cleaning (which retains
    10 commits, so it plans nothing yet): each write's view lists each partition once."""
    path = str(tmp_path / "t")
    storage = ListingsByCaller(path)
    for round_ in range(10):
        _upsert(path, storage, round_)
    assert set(storage.callers) <= set(VIEW_MODULES), storage.callers
    assert len(storage.listed) == 20
    assert max(storage.listed.values()) <= 10, storage.listed


def test_a_clean_after_every_commit_lists_no_partition_again(tmp_path: Path) -> None:
    """Cleaning after every commit (2 commits retained): the clean's view takes the
    listings of the write before it, so still one listing per partition per commit."""
    path = str(tmp_path / "t")
    storage = ListingsByCaller(path)
    for round_ in range(10):
        _upsert(path, storage, round_, **{"hoodie.cleaner.commits.retained": "2"})
    assert set(storage.callers) <= set(VIEW_MODULES), storage.callers
    assert max(storage.listed.values()) <= 10, storage.listed
    cleans = sorted((tmp_path / "t" / ".hoodie").glob("*.clean"))
    assert len(cleans) >= 7  # the cleans ran (and deleted the older slices)


def test_with_the_embedded_timeline_server_a_partition_is_listed_once(tmp_path: Path) -> None:
    """Views from the embedded server: its listings follow the timeline, so after the
    first commit each partition is listed at most once more for all later commits and
    cleans, the first clean's walk of the table included."""
    path = str(tmp_path / "t")
    storage = ListingsByCaller(path)
    remote = {"hoodie.filesystem.view.type": "REMOTE_FIRST", "hoodie.cleaner.commits.retained": "2"}
    _upsert(path, storage, 0, **remote)
    first = Counter(storage.listed)
    for round_ in range(1, 10):
        _upsert(path, storage, round_, **remote)
    assert set(storage.callers) <= set(VIEW_MODULES), storage.callers
    later = storage.listed - first
    assert max(later.values(), default=0) <= 1, later
    assert len(sorted((tmp_path / "t" / ".hoodie").glob("*.clean"))) >= 7


def test_the_cleaner_takes_replaced_file_groups_from_the_servers_view(cow, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """A clean whose views come from a timeline server deletes the file groups an
    insert_overwrite replaced as the server answers them; it lists storage itself only for
    the partition whose replaced groups it deletes (for their files no committed slice
    names, which no view holds), once."""
    t1 = cow.write(["k1", "k2"], "a", 1)
    cow.write(["k9"], "a", 2, operation="insert_overwrite")
    cow.write(["x1"], "b", 3)
    cow.write(["x2"], "b", 4)
    replaced = {f for f in cow.data_files() if f"_{t1}." in f and f.startswith("a/")}
    assert replaced
    rows = cow.rows()
    server = TimelineServer().start()
    try:
        server.add_table(cow.path, LocalStorage())
        storage = ListingsByCaller(cow.path)
        table = HoodieTable.open(cow.path, storage).served_by(ViewSource(ServerClient(server.address), REMOTE_ONLY))
        result = clean(table, CleanSettings(commits_retained=2))
    finally:
        server.stop()
    assert isinstance(result, CleanResult)
    assert replaced.isdisjoint(cow.data_files())
    assert cow.rows() == rows
    assert dict(storage.listed) == {"a": 1}  # the server listed, for its view; the cleaner "a" for what failed writes left


def test_a_view_lists_a_partition_once_and_again_after_forget(mor) -> None:  # type: ignore[no-untyped-def]
    """``partition_files`` shows what no committed slice names (a failed write's file), from
    the same one listing as the file groups; after ``forget`` the next ask lists again, so
    two rollback blocks on one slice through one view take consecutive log versions."""
    t1 = mor.write(["k1"], "a", 1)
    mor.write(["k1"], "a", 2)  # a log file on t1's slice
    stray = Path(mor.path, "a", f"{'0' * 8}-0000-0000-0000-000000000000-0_0-1-0_{'9' * 17}.parquet")
    stray.write_bytes(b"left by a failed write")
    storage = ListingsByCaller(mor.path)
    table = HoodieTable.open(mor.path, storage)
    view = table.local_view()
    (group,) = view.file_groups("a")
    assert stray.name in {f.name for f in view.partition_files("a")}
    assert stray.name not in {s.base_file.file_name for s in group.slices if s.base_file is not None}
    assert storage.listed["a"] == 1
    later = table.timeline.new_instant_time()
    first = append_rollback_block(table, view, "a", group.file_id, t1, later, "00000000000001")
    second = append_rollback_block(table, view, "a", group.file_id, t1, table.timeline.new_instant_time(), "00000000000002")
    assert parse_log_file_name(Path(second).name).version == parse_log_file_name(Path(first).name).version + 1  # type: ignore[union-attr]
    assert storage.listed["a"] == 2  # the first block on the view's listing, the second on a new one


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_the_services_after_a_write_see_what_it_and_the_compaction_before_them_wrote(
    tmp_path: Path, table_type: str, caplog: pytest.LogCaptureFixture
) -> None:
    """The listings a write shares with its services were taken before it wrote: the
    clean (one file version kept) must still see the write's new files, and on
    merge-on-read the base files the inline compaction before it wrote, or it would take
    an older slice for the latest (or the view would find committed files missing)."""
    path = str(tmp_path / "t")
    storage = ListingsByCaller(path)
    options = {
        "hoodie.datasource.write.table.type": table_type,
        "hoodie.cleaner.policy": "KEEP_LATEST_FILE_VERSIONS",
        "hoodie.cleaner.fileversions.retained": "1",
        "hoodie.compact.inline": "true",
        "hoodie.compact.inline.max.delta.commits": "1",
    }
    for round_ in range(4):
        _upsert(path, storage, round_, **options)
        assert not [r for r in caplog.records if r.levelname == "WARNING"], caplog.text
        table = HoodieTable.open(path)
        for partition in PARTITIONS[:20]:
            for group in table.view().file_groups(partition):
                assert len(group.slices) == 1, group  # the older slices went, the latest stayed
        rows = hoodie.read(path).to_pylist()
        assert len(rows) == 100 and {r["ts"] for r in rows} == {round_}
    assert max(storage.listed.values()) <= 4, storage.listed
    assert len(sorted((tmp_path / "t" / ".hoodie").glob("*.clean"))) == 3


@pytest.mark.parametrize(
    "options",
    [
        {},
        {"hoodie.cleaner.commits.retained": "2", "hoodie.datasource.write.table.type": "MERGE_ON_READ", "hoodie.compact.inline": "true",
         "hoodie.compact.inline.max.delta.commits": "2"},
        {"hoodie.cleaner.commits.retained": "2", "hoodie.filesystem.view.type": "REMOTE_FIRST"},
    ],
    ids=["default-cleaning", "mor-compaction-cleaning", "embedded-server"],
)
def test_with_the_metadata_table_upserts_reads_and_services_list_no_partition(tmp_path: Path, options: dict[str, str]) -> None:
    """Issue 29's own check: ten upserts, each followed by a snapshot read, with default
    cleaning and ``hoodie.metadata.enable=true`` list no partition folder at all: the
    writes, their inline services, the reads and a timeline server's views take
    partitions and files from the metadata table (as do a merge-on-read table's
    compactions and cleans that run)."""
    path = str(tmp_path / "t")
    storage = ListingsByCaller(path)
    for round_ in range(10):
        _upsert(path, storage, round_, **{"hoodie.metadata.enable": "true", **options})
        rows = hoodie.read(path, storage=storage).to_pylist()
        assert len(rows) == 100 and {r["ts"] for r in rows} == {round_}
    pulled = hoodie.read(path, {"hoodie.datasource.query.type": "incremental", "hoodie.datasource.read.begin.instanttime": "0"}, storage=storage)
    assert pulled.num_rows == 100
    assert not storage.listed, (storage.listed, storage.callers)
    if options:
        assert len(sorted((tmp_path / "t" / ".hoodie").glob("*.clean"))) >= 3  # the cleans ran
    listing = ListingsByCaller(path)
    assert hoodie.read(path, {"hoodie.metadata.enable": "false"}, storage=listing).num_rows == 100 and listing.listed
