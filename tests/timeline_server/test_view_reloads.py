"""The timeline server loads a table's timeline again (a listing of ``.hoodie``) for a
client's unseen ``timelinehash`` at most once per change of the timeline: hashes it has
no reason to believe newer than its own (made up, or a reader's older snapshot) cost no
listing, however many; a new instant, or a pending instant that moved on, is picked up by
the next request."""
from __future__ import annotations

import secrets
from collections import Counter
from pathlib import Path

import pyarrow as pa
import pytest
from table_options import trip_options

import hoodie
from hoodie.server_calls import call_server
from hoodie.storage.base import FileInfo
from hoodie.storage.local import LocalStorage
from hoodie.table import HoodieTable
from hoodie.table.remote_view import ALL_PARTITIONS, RemoteFileSystemView
from hoodie.timeline_server import TimelineServer


class TimelineListings(LocalStorage):
    """Local storage counting its listings of ``.hoodie`` (storage counts calls by kind;
    this tells the timeline's from the partitions')."""

    def __init__(self, base_path: str) -> None:
        super().__init__()
        self.timeline_dir = base_path + "/.hoodie"
        self.listed: Counter[str] = Counter()

    def list_dir(self, path: str) -> list[FileInfo]:
        if path.rstrip("/") == self.timeline_dir:
            self.listed["timeline"] += 1
        return super().list_dir(path)

    def list_names(self, path: str) -> list[tuple[str, bool]]:
        if path.rstrip("/") == self.timeline_dir:
            self.listed["timeline"] += 1
        return super().list_names(path)


def _batch(keys: range, ts: int) -> pa.Table:
    return pa.table({"uuid": [f"u{i}" for i in keys], "city": ["sf", "la"] * (len(keys) // 2), "ts": [ts] * len(keys)})


@pytest.fixture
def served(tmp_path: Path) -> tuple[str, TimelineListings, TimelineServer]:
    path = str(tmp_path / "t")
    hoodie.write(_batch(range(4), 1), path, trip_options())
    storage = TimelineListings(path)
    server = TimelineServer().start()
    server.add_table(path, storage)
    yield path, storage, server
    server.stop()


def _ask(server: TimelineServer, path: str, timeline_hash: str, last_instant: str = "") -> object:
    params = {"basepath": path, "lastinstantts": last_instant, "timelinehash": timeline_hash}
    return call_server(server.address, "GET", ALL_PARTITIONS, params)


def test_300_unseen_hashes_list_the_timeline_once(served: tuple[str, TimelineListings, TimelineServer]) -> None:
    path, storage, server = served
    last = HoodieTable.open(path).timeline.last_instant()
    assert last is not None
    assert _ask(server, path, secrets.token_hex(32), last.timestamp) == ["la", "sf"]  # the first request loads the view
    before = storage.counters.snapshot()
    for _ in range(300):
        assert _ask(server, path, secrets.token_hex(32), last.timestamp) == ["la", "sf"]
    assert storage.counters.since(before).get("list", 0) == 0, "no listing for hashes of no new timeline"
    assert storage.listed["timeline"] == 1
    # a real change: the next client (a write) names its new instant, and the server loads the timeline once
    hoodie.write(_batch(range(4, 8), 2), path, trip_options())
    timeline = HoodieTable.open(path).timeline
    client = RemoteFileSystemView(server.address, path, timeline)
    assert client.all_partition_paths() == ["la", "sf"]
    assert storage.listed["timeline"] == 2
    for _ in range(50):
        _ask(server, path, secrets.token_hex(32), timeline.last_instant().timestamp)  # type: ignore[union-attr]
    assert storage.listed["timeline"] == 2


def test_a_pending_instant_that_moves_on_is_picked_up_with_a_few_exists_calls(served: tuple[str, TimelineListings, TimelineServer]) -> None:
    path, storage, server = served
    pending = HoodieTable.open(path).timeline.new_instant_time()  # a writer's instant, requested; the server sees it
    Path(path, ".hoodie", f"{pending}.commit.requested").write_bytes(b"")
    _ask(server, path, secrets.token_hex(32), pending)
    assert storage.listed["timeline"] == 1
    before = storage.counters.snapshot()
    for _ in range(100):
        _ask(server, path, secrets.token_hex(32), pending)
    calls = storage.counters.since(before)
    assert calls.get("list", 0) == 0 and calls.get("exists", 0) == 100 * 3  # the instant's next states and its own file
    Path(path, ".hoodie", f"{pending}.inflight").write_bytes(b"")  # it moved on
    for _ in range(100):
        _ask(server, path, secrets.token_hex(32), pending)
    assert storage.listed["timeline"] == 2
    assert [i.state.value for i in server.tables.views(path).timeline.instants if i.timestamp == pending] == ["INFLIGHT"]
