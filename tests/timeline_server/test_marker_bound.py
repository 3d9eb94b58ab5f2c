"""The marker names a timeline server keeps for one marker directory (one instant) are
bounded by ``hoodie.markers.timeline_server_based.dir.max_bytes``: past it a marker is
answered 507 with the option named, the client fails the write with that reason instead
of falling back, and the table is left as before the write. Without the bound, 340,000
names grew a server by 200 MB."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pytest
from table_options import trip_options

import hoodie
from hoodie.config import options as o
from hoodie.errors import WriteError
from hoodie.markers import DirectMarkers, TimelineServerMarkers
from hoodie.server_calls import STATUS_FULL, ServerCallError, ServerClient, call_server
from hoodie.storage.local import LocalStorage
from hoodie.timeline_server import MarkerBatching, TimelineServer
from hoodie.timeline_server.embedded import PROCESS, stop_embedded

INSTANT = "20261125010203456"
BOUND = 4096
OPTION = o.MARKERS_DIR_MAX_BYTES.key


@pytest.fixture
def table(tmp_path: Path) -> str:
    path = str(tmp_path / "t")
    hoodie.write(pa.table({"uuid": ["a"], "city": ["sf"], "ts": [1]}), path, trip_options())
    return path


def _name(i: int) -> str:
    return f"sf/f{i:05d}_0-1-0_{INSTANT}.parquet.marker.CREATE"


def _marker_bytes(marker_dir: Path) -> int:
    return sum(p.stat().st_size for p in marker_dir.glob("MARKERS[0-9]*"))


def test_markers_past_the_bound_are_refused_naming_the_option(table: str) -> None:
    with TimelineServer(batching=MarkerBatching(threads=3, max_dir_bytes=BOUND)) as server, ServerClient(server.address) as client:
        server.add_table(table)
        marker_dir = DirectMarkers(LocalStorage(), table, INSTANT).marker_dir
        accepted, refusal = 0, None
        for i in range(200):  # 200 names of 52 bytes are more than twice the bound
            try:
                assert client.call("POST", "/v1/hoodie/marker/create", {"markerdirpath": marker_dir, "markername": _name(i)}) is True
                accepted += 1
            except ServerCallError as e:
                refusal = e
                break
        assert refusal is not None and refusal.status == STATUS_FULL
        assert OPTION in refusal.reason and str(BOUND) in refusal.reason and marker_dir in refusal.reason
        assert accepted == BOUND // len(_name(0) + "\n")
        assert _marker_bytes(Path(marker_dir)) <= BOUND
        assert not client.is_down, "a refusal is no failure of the server"
        # what it has is still answered; a name it has is no new marker
        names = call_server(server.address, "GET", "/v1/hoodie/marker/all", {"markerdirpath": marker_dir})
        assert names == [_name(i) for i in range(accepted)]
        assert call_server(server.address, "POST", "/v1/hoodie/marker/create", {"markerdirpath": marker_dir, "markername": _name(0)}) is False
        # a batch of a task: the names within the bound are made, the request refused
        body = {"markerdirpath": marker_dir, "markernames": [_name(i) for i in range(1000, 1010)]}
        with pytest.raises(ServerCallError, match=OPTION):
            call_server(server.address, "POST", "/v1/hoodie/marker/create-all", {}, body)
        assert _marker_bytes(Path(marker_dir)) <= BOUND
    # a server started later (with the bound) does not read files past it into memory
    with TimelineServer(batching=MarkerBatching(threads=3, max_dir_bytes=BOUND // 2)) as server:
        server.add_table(table)
        with pytest.raises(ServerCallError, match=f"MARKERS files hold {_marker_bytes(Path(marker_dir))} bytes"):
            call_server(server.address, "GET", "/v1/hoodie/marker/all", {"markerdirpath": marker_dir})


def test_the_client_fails_instead_of_falling_back(table: str) -> None:
    with TimelineServer(batching=MarkerBatching(threads=2, max_dir_bytes=BOUND)) as server, ServerClient(server.address) as client:
        server.add_table(table)
        markers = TimelineServerMarkers(LocalStorage(), table, INSTANT, client)
        wanted = [("sf", f"f{i:05d}_0-1-0_{INSTANT}.parquet", "CREATE") for i in range(200)]
        with pytest.raises(WriteError, match=f"refused a marker of instant {INSTANT}: .*{OPTION}"):
            markers.create_all(wanted)
        with pytest.raises(WriteError, match=OPTION):
            markers.create("la", f"g_0-1-0_{INSTANT}.parquet", "CREATE")
        assert not client.is_down
        assert not list(Path(markers.direct.marker_dir).rglob("*.marker.*")), "no marker made directly"


def test_a_write_with_more_markers_than_the_bound_fails_and_leaves_the_table_as_it_was(table: str) -> None:
    stop_embedded(PROCESS)  # the process's server starts with this write's bound
    before = hoodie.read(table).sort_by("uuid").to_pylist()
    many = pa.table({"uuid": [f"k{i}" for i in range(60)], "city": [f"c{i}" for i in range(60)], "ts": [2] * 60})  # 60 new files
    options = trip_options(**{"hoodie.write.markers.type": "TIMELINE_SERVER_BASED", OPTION: "1024"})
    try:
        with pytest.raises(WriteError, match=OPTION):
            hoodie.write(many, table, options)
    finally:
        stop_embedded(PROCESS)
    assert hoodie.read(table).sort_by("uuid").to_pylist() == before
    hoodie.write(many, table, trip_options(**{"hoodie.write.markers.type": "TIMELINE_SERVER_BASED"}))  # the default bound
    stop_embedded(PROCESS)
    assert hoodie.read(table).num_rows == 61


def test_the_command_takes_the_bound_and_refuses_one_too_small(table: str) -> None:
    command = [sys.executable, "-m", "hoodie.cli", "timeline-server", "--table", table, "--port", "0", "--max-marker-bytes", "10"]
    result = subprocess.run(command, capture_output=True, text=True, timeout=60)
    assert result.returncode != 0 and OPTION in result.stderr + result.stdout and "10" in result.stderr + result.stdout

