"""A timeline server that stops answering (a real ``hoodie timeline-server`` process sent
SIGSTOP: its socket still accepts connections, nothing answers) holds a marker or view
call for at most ``hoodie.filesystem.view.remote.timeout.secs`` (a few seconds by
default, retries included); then the client falls back as for a server that is gone and
the write completes. The tests' own timeout is the sanity bound: the old defaults (300 s
a request, three retries) held a write for many minutes."""
from __future__ import annotations

import logging
import os
import signal
from collections.abc import Iterator
from pathlib import Path

import pyarrow as pa
import pytest
from server_process import start_server
from table_options import trip_options

import hoodie
from hoodie.config import options as o
from hoodie.config.options import HoodieConfig
from hoodie.markers import DirectMarkers, TimelineServerMarkers
from hoodie.server_calls import ServerAddress, ServerClient, call_server
from hoodie.storage.local import LocalStorage

TOKEN = "token-of-a-server-that-hangs"
INSTANT = "20240101000000000"


@pytest.fixture
def table(tmp_path: Path) -> str:
    path = str(tmp_path / "t")
    hoodie.write(pa.table({"uuid": ["a", "b"], "city": ["sf", "la"], "ts": [1, 1]}), path, trip_options())
    return path


@pytest.fixture
def stopped_server(table: str) -> Iterator[int]:
    """The port of a server process for ``table`` that was stopped (SIGSTOP) once it
    answered; killed by its PID at the end."""
    proc, port = start_server("--table", table, "--port", "0", "--token", TOKEN)
    try:
        call_server(ServerAddress("127.0.0.1", port, TOKEN), "GET", "/health", {})  # it answers
        os.kill(proc.pid, signal.SIGSTOP)
        yield port
    finally:
        os.kill(proc.pid, signal.SIGKILL)  # a stopped process is killed without resuming it
        proc.communicate(timeout=30)


def _address(port: int) -> ServerAddress:
    """How a write with default options calls the server."""
    return ServerAddress.configured("127.0.0.1", port, TOKEN, HoodieConfig.of({}))


def test_the_default_timeout_is_seconds_with_the_retries_inside_it() -> None:
    address = _address(1)
    assert address.timeout_s == o.VIEW_REMOTE_TIMEOUT_SECS.default <= 10
    # the retry waits fit inside the timeout: a refused connection is asked again, not for long
    assert sum(min(address.retry_interval_s * a, address.max_retry_interval_s) for a in range(1, address.retries + 1)) < address.timeout_s


@pytest.mark.timeout(120)
def test_a_write_completes_through_the_fallback_when_its_server_hangs(
    table: str, stopped_server: int, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    direct: list[str] = []
    real_create = DirectMarkers.create

    def spying_create(self: DirectMarkers, partition_path: str, data_file_name: str, io_type: str) -> None:
        direct.append(data_file_name)
        real_create(self, partition_path, data_file_name, io_type)

    monkeypatch.setattr(DirectMarkers, "create", spying_create)
    remote = {
        "hoodie.write.markers.type": "TIMELINE_SERVER_BASED",
        "hoodie.filesystem.view.remote.host": "127.0.0.1",
        "hoodie.filesystem.view.remote.port": str(stopped_server),
        "hoodie.filesystem.view.remote.token": TOKEN,
    }
    with caplog.at_level(logging.WARNING, logger="hoodie.server_calls"):
        hoodie.write(pa.table({"uuid": ["a", "c"], "city": ["sf", "nyc"], "ts": [2, 2]}), table, trip_options(**remote))
    # the write's client gave the server up: said once, and no call after the first timeout
    assert caplog.text.count("building file-system views locally instead") == 1
    assert f"no answer within {o.VIEW_REMOTE_TIMEOUT_SECS.default} s (hoodie.filesystem.view.remote.timeout.secs)" in caplog.text
    assert "building file-system views locally instead" in caplog.text
    assert len(direct) == 2, "every marker was made directly"  # an updated file in sf, a new one in nyc
    rows = hoodie.read(table)
    assert sorted(zip(rows.column("uuid").to_pylist(), rows.column("ts").to_pylist())) == [("a", 2), ("b", 1), ("c", 2)]


@pytest.mark.timeout(120)
def test_a_marker_is_made_directly_when_the_server_hangs(table: str, stopped_server: int, caplog: pytest.LogCaptureFixture) -> None:
    address = ServerAddress("127.0.0.1", stopped_server, TOKEN, timeout_s=1.0, retries=3)
    client = ServerClient(address)
    markers = TimelineServerMarkers(LocalStorage(), table, INSTANT, client)
    with caplog.at_level(logging.WARNING, logger="hoodie.server_calls"):
        markers.create("sf", f"f0_0-1-0_{INSTANT}.parquet", "CREATE")
    assert [e.file_name for e in DirectMarkers(LocalStorage(), table, INSTANT).entries()] == [f"f0_0-1-0_{INSTANT}.parquet"]
    assert client.is_down and "no answer within 1 s" in caplog.text and "creating markers directly instead" in caplog.text
