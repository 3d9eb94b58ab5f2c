"""What a timeline server keeps per table is bounded by its view store plus a fixed
overhead, on a table of a few thousand partitions made by real commits: no decoded commit
metadata, no committed-file sets and no partition set outside the store, and no marker
names of instants the timeline shows finished."""
from __future__ import annotations

import gc
import multiprocessing as mp
import tracemalloc
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

import hoodie
from hoodie.server_calls import ServerAddress
from hoodie.table import HoodieTable
from hoodie.table.remote_view import RemoteFileSystemView
from hoodie.table.view_stores import SPILLABLE_DISK, StoreSettings
from hoodie.timeline_server import TimelineServer
from hoodie.timeline_server.embedded import PROCESS, stop_embedded

PARTITIONS = 2000
BOUND = 256 * 1024  # the store's memory bound
# What a server keeps for a table besides its store, whatever the table's size: its
# timeline snapshot, the view object, counters; and what the interpreter keeps of the
# calls made (caches of small objects). Far below what the table's metadata would take.
FIXED_OVERHEAD = 2 * 1024 * 1024

OPTIONS = {
    "hoodie.table.name": "wide",
    "hoodie.datasource.write.recordkey.field": "uuid",
    "hoodie.datasource.write.partitionpath.field": "part",
    "hoodie.datasource.write.precombine.field": "ts",
    "hoodie.datasource.write.hive_style_partitioning": "false",
    # the timeline server of these writes is the one under test, not an embedded one
    "hoodie.embed.timeline.server": "false",
    "hoodie.clean.automatic": "false",
}


@pytest.fixture(autouse=True)
def no_embedded() -> Any:
    stop_embedded(PROCESS)
    yield
    stop_embedded(PROCESS)


def batch(ts: int, keys: range) -> pa.Table:
    return pa.table({
        "uuid": [f"k{k:05d}" for k in keys],
        "part": [f"p{k % PARTITIONS:05d}" for k in keys],
        "ts": [ts] * len(keys),
        "v": [float(k) for k in keys],
    })


def ask_everything(server: TimelineServer, path: str) -> int:
    """Every partition's latest slices through the server, as a write's tasks ask them."""
    table = HoodieTable.open(path)
    a = server.address  # (a cold server lists every partition: more than a write's timeout on a busy machine)
    remote = RemoteFileSystemView(ServerAddress(a.host, a.port, a.token, timeout_s=600), table.base_path, table.timeline)
    partitions = remote.all_partition_paths()
    remote.prefetch_latest(partitions)
    return sum(len(remote.latest_slices(p)) for p in partitions)


def write_elsewhere(data: pa.Table, path: str, options: dict[str, str]) -> None:
    """A write in a process of its own: only the server's allocations are traced here."""
    writer = mp.get_context("spawn").Process(target=hoodie.write, args=(data, path, options))
    writer.start()
    writer.join(timeout=600)
    assert writer.exitcode == 0


def retained() -> int:
    gc.collect()
    return tracemalloc.get_traced_memory()[0]


def through(server: TimelineServer, **more: str) -> dict[str, str]:
    """Write options that ask ``server`` for the write's views."""
    return {
        **OPTIONS,
        "hoodie.filesystem.view.type": "REMOTE_ONLY",
        "hoodie.filesystem.view.remote.host": server.host,
        "hoodie.filesystem.view.remote.port": str(server.port),
        "hoodie.filesystem.view.remote.token": server.token,
        "hoodie.filesystem.view.remote.timeout.secs": "600",
        **more,
    }


@pytest.mark.slow
def test_a_servers_state_stays_within_its_store_bound_plus_a_fixed_overhead(tmp_path: Path) -> None:
    path = str(tmp_path / "wide")
    hoodie.write(batch(1, range(2 * PARTITIONS)), path, OPTIONS)  # two keys a partition
    with TimelineServer(token="t").start() as server:
        tracemalloc.start()
        try:
            server.add_table(path, views=StoreSettings(SPILLABLE_DISK, spillable_memory_bytes=BOUND))
            base = retained()
            assert ask_everything(server, path) == PARTITIONS
            for ts in (2, 3):  # upserts into every partition, whose views the server syncs
                write_elsewhere(batch(ts, range(0, 2 * PARTITIONS, 3)), path, through(server, **{"hoodie.write.markers.type": "DIRECT"}))
                assert ask_everything(server, path) == PARTITIONS
            grown = retained() - base
            store = server.tables.views(HoodieTable.open(path).base_path).listings.store
            assert store.memory_bytes() <= BOUND
            assert server.metrics.syncs.labels("incremental")._value.get() >= 2
        finally:
            tracemalloc.stop()
    assert grown <= BOUND + FIXED_OVERHEAD, f"the server keeps {grown / 2**20:.1f} MiB for a table of {PARTITIONS} partitions"


def test_the_server_forgets_the_marker_names_of_finished_instants(tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    with TimelineServer(token="t").start() as server:
        server.add_table(path)
        options = through(server, **{"hoodie.write.markers.type": "TIMELINE_SERVER_BASED", "hoodie.filesystem.view.type": "REMOTE_FIRST"})
        instants = [hoodie.write(batch(ts, range(40)), path, options) for ts in (1, 2, 3)]
        # each write's markers went through the server; a new instant's first marker made
        # it forget those of the instants the timeline shows completed
        held = sorted(d.rsplit("/", 1)[1] for d in server.markers._dirs)
        assert held == [instants[-1]]
