"""The timeline server's file-system views: the same answers as a local view after every
kind of instant, from each store; incremental sync that lists each touched partition at
most once over ten commits; rebuilds only on a restore; hostile requests refused; a server
gone or restarted never fails a write."""
from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from table_options import trip_options

import hoodie
from hoodie.errors import HoodieError, UnsafePathError
from hoodie.server_calls import ServerAddress, ServerCallError, ServerClient, call_server
from hoodie.services import create_savepoint, open_for_services, restore_to
from hoodie.storage.base import FileInfo
from hoodie.storage.local import LocalStorage
from hoodie.storage.paths import relative_to
from hoodie.table import HoodieTable
from hoodie.table.remote_view import LATEST_SLICES, LATEST_SLICES_OF, PriorityFileSystemView, RemoteFileSystemView
from hoodie.table.view_stores import STORE_TYPES, SpillableStore, StoreSettings
from hoodie.timeline_server import TimelineServer
from hoodie.timeline_server.embedded import PROCESS, stop_embedded

CITIES = ["sf", "la", "nyc", "chi", "sea", "bos"]


@pytest.fixture(autouse=True)
def fresh_server() -> Any:
    stop_embedded(PROCESS)
    yield
    stop_embedded(PROCESS)


def trips(keys: range, ts: int, cities: list[str] = CITIES) -> pa.Table:
    return pa.table({
        "uuid": [f"u{k:04d}" for k in keys],
        "city": [cities[k % len(cities)] for k in keys],
        "ts": [ts] * len(keys),
        "fare": [float(k * ts) for k in keys],
    })


def assert_same_views(server: TimelineServer, path: str) -> None:
    table = HoodieTable.open(path)
    remote, local = RemoteFileSystemView(server.address, table.base_path, table.timeline), table.local_view()
    partitions = local.all_partition_paths()
    assert remote.all_partition_paths() == partitions
    for p in partitions:
        assert remote.file_groups(p) == local.file_groups(p), p
        assert remote.latest_slices(p) == local.latest_slices(p), p
    batched = RemoteFileSystemView(server.address, table.base_path, table.timeline)
    batched.prefetch_latest(partitions)
    assert {p: batched.latest_slices(p) for p in partitions} == {p: local.latest_slices(p) for p in partitions}


def syncs(server: TimelineServer) -> dict[str, float]:
    return {kind: server.metrics.syncs.labels(kind)._value.get() for kind in ("incremental", "rebuild")}


def store(kind: str, tmp_path: Path, memory: int = 100 * 1024 * 1024) -> StoreSettings:
    return StoreSettings(kind, spillable_memory_bytes=memory, rocksdb_base_path=str(tmp_path / "rocksdb"))


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
@pytest.mark.parametrize("kind", STORE_TYPES)
def test_server_views_equal_local_views_after_every_kind_of_instant(tmp_path: Path, kind: str, table_type: str) -> None:
    path = str(tmp_path / "t")
    opts = trip_options(**{
        "hoodie.datasource.write.table.type": table_type,
        "hoodie.compact.inline": "true",
        "hoodie.compact.inline.max.delta.commits": "2",
        "hoodie.cleaner.commits.retained": "1",
        "hoodie.keep.min.commits": "5",
        "hoodie.keep.max.commits": "6",
    })
    hoodie.write(trips(range(60), 1), path, {**opts, "hoodie.datasource.write.operation": "bulk_insert"})
    with TimelineServer() as server:
        server.add_table(path, views=store(kind, tmp_path, memory=300))  # SPILLABLE_DISK: a listing or two in memory
        assert_same_views(server, path)
        steps = [
            ("upsert", trips(range(0, 60, 4), 2)),
            ("upsert", trips(range(50, 70), 3)),
            ("delete", trips(range(0, 60, 7), 4)),
            ("insert_overwrite", trips(range(100, 104), 5, ["la"])),
            ("upsert", trips(range(1, 60, 5), 6)),
            ("insert", trips(range(200, 212), 7, ["den"])),
        ]
        for operation, batch in steps:
            hoodie.write(batch, path, {**opts, "hoodie.datasource.write.operation": operation})
            assert_same_views(server, path)
        actions = Counter(i.action for i in HoodieTable.open(path).timeline.completed())
        assert actions["clean"] >= 1 and actions["replacecommit"] == 1
        if table_type == "MERGE_ON_READ":
            assert actions["commit"] >= 1  # a compaction
        assert syncs(server) == {"incremental": len(steps), "rebuild": 0}

        table = HoodieTable.open(path)
        keep = table.timeline.completed_writes()[-1].timestamp
        create_savepoint(table, keep)
        hoodie.write(trips(range(300, 306), 8), path, {**opts, "hoodie.datasource.write.operation": "insert"})
        restore_to(open_for_services(path), keep)  # (its metadata table, on by default, updated too)
        assert_same_views(server, path)
        assert syncs(server)["rebuild"] == 1  # the restore, nothing else


class PartitionListings(LocalStorage):
    """Local storage counting the listings of each partition directory of one table."""

    def __init__(self, base_path: str) -> None:
        super().__init__()
        self.base_path = base_path
        self.partition_lists: Counter[str] = Counter()

    def list_dir(self, path: str) -> list[FileInfo]:
        if path.startswith(self.base_path + "/") and "/.hoodie" not in path:
            self.partition_lists[relative_to(path, self.base_path)] += 1
        return super().list_dir(path)


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_ten_commits_with_the_server_list_each_touched_partition_at_most_once(tmp_path: Path, table_type: str) -> None:
    path = str(tmp_path / "t")
    # (listing storage: with the metadata table, on by default, no partition is listed at all)
    opts = trip_options(**{
        "hoodie.datasource.write.table.type": table_type, "hoodie.write.markers.type": "TIMELINE_SERVER_BASED", "hoodie.metadata.enable": "false",
    })
    storage = PartitionListings(path)  # the embedded server lists through the first write's storage
    hoodie.write(trips(range(120), 1), path, {**opts, "hoodie.datasource.write.operation": "bulk_insert"}, storage=storage)
    storage.partition_lists.clear()
    for commit in range(10):
        # each commit updates two of the six partitions, and inserts into a third
        touched = [CITIES[commit % 6], CITIES[(commit + 1) % 6]]
        batch = pa.concat_tables([trips(range(i, 120, 6), 10 + commit) for i in (commit % 6, (commit + 1) % 6)])
        hoodie.write(batch, path, {**opts, "hoodie.datasource.write.operation": "upsert"}, storage=storage)
        assert set(storage.partition_lists) <= set(CITIES), touched
    assert storage.partition_lists and max(storage.partition_lists.values()) == 1, storage.partition_lists
    assert len(HoodieTable.open(path).timeline.completed_writes()) == 11
    assert hoodie.read(path).num_rows == 120


def test_hostile_view_requests_are_refused(tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    hoodie.write(trips(range(10), 1), path, trip_options())
    with TimelineServer() as server:
        server.add_table(path)
        address = server.address
        base = HoodieTable.open(path).base_path
        for params, status in [
            ({"basepath": str(tmp_path / "other"), "partition": "sf"}, "HTTP 403"),
            ({"basepath": base, "partition": "../../etc"}, "HTTP 400"),
            ({"basepath": base, "partition": "/etc"}, "HTTP 400"),
            ({"basepath": base, "partition": "sf\x00"}, "HTTP 400"),
            ({"basepath": base}, "HTTP 400"),
            ({"basepath": base, "partition": "sf", "lastinstantts": "２０２６１１２５０１０２０３４５６"}, "HTTP 400"),  # fullwidth digits
            ({"basepath": base, "partition": "sf", "lastinstantts": "../x"}, "HTTP 400"),
        ]:
            with pytest.raises(ServerCallError, match=status):
                call_server(address, "GET", LATEST_SLICES, params)
        for partitions in (["sf", "../../etc"], "sf", [1]):
            with pytest.raises(ServerCallError, match="HTTP 400"):
                call_server(address, "POST", LATEST_SLICES_OF, {}, {"basepath": base, "partitions": partitions})
        for token in ("", "wrong"):
            with pytest.raises(ServerCallError, match="HTTP 401"):
                call_server(ServerAddress(address.host, address.port, token, retries=0), "GET", LATEST_SLICES, {"basepath": base, "partition": "sf"})
        assert server.tables.views(base).listings.store.get("sf") is None  # nothing was listed for them


def test_a_server_answer_naming_paths_outside_the_table_is_not_used(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = str(tmp_path / "t")
    hoodie.write(trips(range(10), 1), path, trip_options())
    table = HoodieTable.open(path)
    local = table.local_view().latest_slices("sf")
    with TimelineServer() as server:
        server.add_table(path)
        remote = RemoteFileSystemView(server.address, table.base_path, table.timeline)
        good = call_server(server.address, "GET", LATEST_SLICES, {"basepath": table.base_path, "partition": "sf"})
        assert isinstance(good, list) and good
        good[0]["baseFile"]["fullPath"] = "/etc/.."
        monkeypatch.setattr(ServerClient, "call", lambda *a, **k: good)
        with pytest.raises(HoodieError, match="timeline server base file"):
            remote.latest_slices("sf")
        # the remote-first view refuses the answer and reads the partition itself
        fallback = PriorityFileSystemView(RemoteFileSystemView(server.address, table.base_path, table.timeline), table.local_view)
        assert fallback.latest_slices("sf") == local


def test_a_write_goes_on_with_local_views_when_the_server_is_gone(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    path = str(tmp_path / "t")
    hoodie.write(trips(range(30), 1), path, trip_options())
    server = TimelineServer().start()
    server.add_table(path)
    address = server.address
    server.stop()
    remote = {
        "hoodie.filesystem.view.type": "REMOTE_FIRST",
        "hoodie.filesystem.view.remote.host": address.host,
        "hoodie.filesystem.view.remote.port": str(address.port),
        "hoodie.filesystem.view.remote.token": address.token,
        "hoodie.filesystem.view.remote.retry.max_numbers": "1",
        "hoodie.filesystem.view.remote.retry.initial_interval_ms": "1",
    }
    hoodie.write(trips(range(0, 30, 2), 2), path, trip_options(**remote, **{"hoodie.datasource.write.operation": "upsert"}))
    assert "building file-system views locally instead" in caplog.text
    rows = hoodie.read(path)
    assert rows.num_rows == 30 and sorted(rows.column("ts").to_pylist()).count(2) == 15


def test_remote_only_views_need_a_server(tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    with pytest.raises(HoodieError, match="REMOTE_ONLY needs a timeline server"):
        hoodie.write(trips(range(5), 1), path, trip_options(**{"hoodie.filesystem.view.type": "REMOTE_ONLY", "hoodie.embed.timeline.server": "false"}))
    assert not (tmp_path / "t" / ".hoodie").exists() or not any((tmp_path / "t").glob("*/*.parquet"))


def test_a_restarted_server_serves_the_next_commit(tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    token = "fixed-token"
    server = TimelineServer(token=token).start()
    port = server.port
    server.add_table(path)
    opts = trip_options(**{
        "hoodie.write.markers.type": "TIMELINE_SERVER_BASED",
        "hoodie.filesystem.view.type": "REMOTE_ONLY",  # no fallback: the views must come from the server
        "hoodie.filesystem.view.remote.host": "127.0.0.1",
        "hoodie.filesystem.view.remote.port": str(port),
        "hoodie.filesystem.view.remote.token": token,
    })
    hoodie.write(trips(range(30), 1), path, opts)
    hoodie.write(trips(range(0, 30, 3), 2), path, {**opts, "hoodie.datasource.write.operation": "upsert"})
    server.stop()
    with TimelineServer(port=port, token=token) as again:
        again.add_table(path)
        hoodie.write(trips(range(1, 30, 3), 3), path, {**opts, "hoodie.datasource.write.operation": "upsert"})
        assert_same_views(again, path)
        assert again.metrics.requests.labels("/v1/hoodie/view/slices/partition/latest/", "200")._value.get() > 0
    ts = Counter(hoodie.read(path).column("ts").to_pylist())
    assert ts == {1: 10, 2: 10, 3: 10}


def test_a_spillable_store_keeps_within_its_memory_bound(tmp_path: Path) -> None:
    spill = SpillableStore(2_000, str(tmp_path))
    try:
        for i in range(500):
            spill.put(f"p{i}", b"x" * 100)
        assert spill.memory_bytes() <= 2_000 and spill.spilled() >= 480
        assert all(spill.get(f"p{i}") == b"x" * 100 for i in range(500))
        spill.delete("p3")
        assert spill.get("p3") is None
    finally:
        spill.close()
    assert not list(tmp_path.glob("hoodie-view-spill-*"))


def test_a_table_the_server_refuses_leaves_the_server_up_for_other_tables(tmp_path: Path) -> None:
    """A link in one table's partition makes the server answer 422 for it: that view goes
    local (and meets the link itself), while other tables keep their server views."""
    linked, clean = str(tmp_path / "linked"), str(tmp_path / "clean")
    for path in (linked, clean):
        # (the link is met where partitions are listed: storage, not a metadata table)
        hoodie.write(trips(range(12), 1), path, trip_options(**{"hoodie.metadata.enable": "false"}))
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "linked" / "la").rename(tmp_path / "elsewhere" / "la")
    (tmp_path / "linked" / "la").symlink_to(tmp_path / "elsewhere" / "la")
    with TimelineServer() as server:
        server.add_table(linked)
        server.add_table(clean)
        views, client = {}, ServerClient(server.address)  # one client, as a write's
        for path in (linked, clean):
            table = HoodieTable.open(path)
            views[path] = PriorityFileSystemView(RemoteFileSystemView(client, table.base_path, table.timeline), table.local_view)
        with pytest.raises(UnsafePathError, match="symbolic link"):
            views[linked].latest_slices("la")
        assert not client.is_down
        served = server.metrics.requests.labels(LATEST_SLICES, "200")._value.get()
        assert views[clean].latest_slices("la") == HoodieTable.open(clean).local_view().latest_slices("la")
        assert server.metrics.requests.labels(LATEST_SLICES, "200")._value.get() == served + 1
