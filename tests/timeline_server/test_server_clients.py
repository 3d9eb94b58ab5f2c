"""A client of a timeline server belongs to its owner: a write makes one, uses it for its
views and markers, and closes it when it is done. Nothing of it outlives the write: no
thread of its background pool, no process-wide record of the server or its state."""
from __future__ import annotations

import threading
import types
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from table_options import trip_options

import hoodie
import hoodie.markers.remote
import hoodie.server_calls
import hoodie.table.remote_view
from hoodie.server_calls import ServerAddress, ServerClient
from hoodie.timeline_server import TimelineServer, embedded
from hoodie.timeline_server.embedded import PROCESS, running_applications, stop_embedded

CLIENT_MODULES = (hoodie.server_calls, hoodie.markers.remote, hoodie.table.remote_view)


@pytest.fixture(autouse=True)
def fresh_server() -> Any:
    stop_embedded(PROCESS)
    yield
    stop_embedded(PROCESS)


def mutable_globals(module: types.ModuleType) -> dict[str, object]:
    """The module's top-level values that could record state (a lock too: it guards some)."""
    kinds = (dict, set, list, threading.local, type(threading.Lock()))
    return {name: value for name, value in vars(module).items() if isinstance(value, kinds) and not name.startswith("__")}


def pool_threads() -> list[str]:
    return [t.name for t in threading.enumerate() if t.name.startswith("hoodie-server-calls")]


def test_the_client_modules_hold_no_state_of_their_own() -> None:
    for module in CLIENT_MODULES:
        assert mutable_globals(module) == {}, module.__name__


def test_a_write_through_the_embedded_server_leaves_no_client_behind(tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    batch = pa.table({"uuid": [f"u{i}" for i in range(40)], "city": [f"c{i % 8}" for i in range(40)], "ts": [1] * 40})
    # timeline-server markers, asked for ahead of the files (the background pool), and
    # views from the embedded server
    options = trip_options(**{"hoodie.write.markers.type": "TIMELINE_SERVER_BASED", "hoodie.embed.timeline.server": "true"})
    hoodie.write(batch, path, options)
    hoodie.write(batch.set_column(2, "ts", pa.array([2] * 40)), path, {**options, "hoodie.datasource.write.operation": "upsert"})
    assert PROCESS in running_applications(), "the writes went through the embedded server"
    server = embedded._SERVERS[PROCESS]
    assert server.metrics.markers._value.get() > 0, "markers went through the server"
    assert pool_threads() == []
    for module in CLIENT_MODULES:
        assert mutable_globals(module) == {}, module.__name__
    assert sorted(hoodie.read(path).column("ts").to_pylist()) == [2] * 40


def test_a_client_s_down_state_is_its_own(tmp_path: Path) -> None:
    """A server that failed one client's call is not given up by another client (another
    write), which tries it again; closing a client ends its pool."""
    with TimelineServer() as server:
        gone = ServerAddress(server.host, server.port + 1 if server.port < 65535 else 1, server.token, timeout_s=1.0, retries=0)
    with ServerClient(gone) as first:
        with pytest.raises(hoodie.server_calls.ServerCallError):
            first.call("GET", "/health", {})
        first.went_down(hoodie.server_calls.ServerCallError("gone"), "doing without")
        assert first.is_down
        assert first.submit(lambda: 1).result() == 1
        assert pool_threads()
    assert pool_threads() == []
    with TimelineServer() as server, ServerClient(server.address) as second:
        assert not second.is_down and second.call("GET", "/health", {}) is not None
