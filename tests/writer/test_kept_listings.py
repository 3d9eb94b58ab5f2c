"""The listings a process keeps of a table between its writes (``table/kept_listings.py``).

In process, without a timeline server, a write takes up the listings the process's last
write of the same table kept, synced to its own timeline from the metadata of what
completed since: it lists no partition again (and reads no metadata table for them).
What other writers commit meanwhile, a table made again at the same path and a failed
write must each leave the next write with listings true to storage.
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
from table_options import trip_options

import hoodie
from hoodie.errors import HoodieError
from hoodie.storage.base import FileInfo
from hoodie.storage.local import LocalStorage
from hoodie.table import kept_listings

CITIES = ["sf", "nyc", "la"]
NO_MDT = trip_options(**{"hoodie.metadata.enable": "false"})


class CountingStorage(LocalStorage):
    """Local storage counting the listings of the table's partition folders."""

    def __init__(self, base_path: str) -> None:
        super().__init__()
        self.base_path = base_path
        self.listed: Counter[str] = Counter()

    def list_dir(self, path: str) -> list[FileInfo]:
        parent, _, name = path.rstrip("/").rpartition("/")
        if parent == self.base_path and name in CITIES:
            self.listed[name] += 1
        return super().list_dir(path)


def trips(keys: range, ts: int) -> pa.Table:
    return pa.table({
        "uuid": [f"k{k:03d}" for k in keys],
        "city": [CITIES[k % 3] for k in keys],
        "ts": [ts] * len(keys),
        "fare": [float(ts)] * len(keys),
    })


def rows(path: str) -> dict[str, int]:
    read = hoodie.read(path)
    return dict(zip(read["uuid"].to_pylist(), read["ts"].to_pylist()))


@pytest.fixture(autouse=True)
def nothing_kept() -> None:
    kept_listings.forget_kept_listings()


def test_the_next_write_in_the_process_lists_no_partition_again(tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    hoodie.write(trips(range(30), 1), path, NO_MDT, storage=CountingStorage(path))
    for ts in range(2, 6):
        storage = CountingStorage(path)  # a storage object of each write's own, as hoodie.write makes one
        hoodie.write(trips(range(0, 40, 2), ts), path, NO_MDT, storage=storage)
        assert storage.listed == Counter(), f"write {ts} listed {dict(storage.listed)}"
    assert rows(path) == {f"k{k:03d}": 1 for k in range(1, 30, 2)} | {f"k{k:03d}": 5 for k in range(0, 40, 2)}


def test_without_kept_listings_each_write_lists_its_partitions(tmp_path: Path) -> None:
    """The contrast: a process that keeps none lists every partition a write touches."""
    path = str(tmp_path / "t")
    hoodie.write(trips(range(30), 1), path, NO_MDT, storage=CountingStorage(path))
    kept_listings.forget_kept_listings()
    storage = CountingStorage(path)
    hoodie.write(trips(range(0, 30, 2), 2), path, NO_MDT, storage=storage)
    assert set(storage.listed) == set(CITIES)


WRITER = """
import json, sys
import pyarrow as pa
import hoodie
path, keys, ts, options = sys.argv[1], json.loads(sys.argv[2]), int(sys.argv[3]), json.loads(sys.argv[4])
cities = ["sf", "nyc", "la"]
batch = pa.table({"uuid": [f"k{k:03d}" for k in keys], "city": [cities[k % 3] for k in keys], "ts": [ts] * len(keys), "fare": [float(ts)] * len(keys)})
hoodie.write(batch, path, options)
"""


@pytest.mark.parametrize("options", [NO_MDT, trip_options()], ids=["listing", "metadata-table"])
def test_what_another_process_commits_meanwhile_is_seen_by_the_next_write(tmp_path: Path, options: dict[str, str]) -> None:
    """Another process inserts new keys (new file groups) between two writes of this one;
    this process's next write updates them where they are, rather than inserting them
    again beside them (which listings blind to the other commit would make it do)."""
    path = str(tmp_path / "t")
    hoodie.write(trips(range(10), 1), path, options)
    subprocess.run(
        [sys.executable, "-c", WRITER, path, json.dumps(list(range(100, 130))), "2", json.dumps(options)],
        check=True, capture_output=True, text=True,
    )
    hoodie.write(trips(range(100, 130), 3), path, options)
    read = hoodie.read(path)
    assert read.num_rows == 40
    assert rows(path) == {f"k{k:03d}": 1 for k in range(10)} | {f"k{k:03d}": 3 for k in range(100, 130)}


def test_a_table_made_again_at_the_same_path_is_listed_again(tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    hoodie.write(trips(range(30), 1), path, NO_MDT)
    hoodie.write(trips(range(10), 2), path, NO_MDT)
    shutil.rmtree(path)
    hoodie.write(trips(range(50, 56), 3), path, NO_MDT)
    hoodie.write(trips(range(50, 53), 4), path, NO_MDT)
    assert rows(path) == {"k050": 4, "k051": 4, "k052": 4, "k053": 3, "k054": 3, "k055": 3}


def test_a_failed_write_keeps_no_listings(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = str(tmp_path / "t")
    hoodie.write(trips(range(30), 1), path, NO_MDT, storage=CountingStorage(path))
    from hoodie.writer import transaction

    def refuse(*args: object, **kwargs: object) -> None:
        raise HoodieError("the commit is refused")

    with monkeypatch.context() as patched:
        patched.setattr(transaction.WriteTransaction, "commit", refuse)
        with pytest.raises(HoodieError, match="refused"):
            hoodie.write(trips(range(30), 2), path, NO_MDT, storage=CountingStorage(path))
    storage = CountingStorage(path)
    hoodie.write(trips(range(3), 3), path, NO_MDT, storage=storage)
    assert set(storage.listed) == set(CITIES)  # listed afresh, not from the failed write's
    assert rows(path) == {f"k{k:03d}": 3 if k < 3 else 1 for k in range(30)}


def test_at_most_max_tables_are_kept_the_least_recently_written_given_up(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(kept_listings, "MAX_TABLES", 1)
    first, second = str(tmp_path / "a"), str(tmp_path / "b")
    # (listings are kept per path and kind of storage: these writes' storage is of one kind)
    hoodie.write(trips(range(9), 1), first, NO_MDT, storage=CountingStorage(first))
    hoodie.write(trips(range(9), 1), second, NO_MDT, storage=CountingStorage(second))
    again = CountingStorage(second)
    hoodie.write(trips(range(3), 2), second, NO_MDT, storage=again)
    assert again.listed == Counter()
    given_up = CountingStorage(first)
    hoodie.write(trips(range(3), 2), first, NO_MDT, storage=given_up)
    assert set(given_up.listed) == set(CITIES)


def test_listings_over_the_bound_are_not_kept(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(kept_listings, "MAX_BYTES", 10)
    path = str(tmp_path / "t")
    hoodie.write(trips(range(9), 1), path, NO_MDT, storage=CountingStorage(path))
    storage = CountingStorage(path)
    hoodie.write(trips(range(3), 2), path, NO_MDT, storage=storage)
    assert set(storage.listed) == set(CITIES)
