"""``hoodie timeline-server``: a standalone server process that several writers use for
their views and markers, reached through hoodie.filesystem.view.remote.host/port and the
token."""
from __future__ import annotations

import http.client
import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
from server_process import start_server
from table_options import trip_options

import hoodie

TOKEN = "s3cr3t-token-for-tests"


def _metrics(port: int) -> str:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    conn.request("GET", "/metrics")
    return conn.getresponse().read().decode()


def test_two_tables_written_through_one_standalone_server(tmp_path: Path) -> None:
    paths = [str(tmp_path / "a"), str(tmp_path / "b")]
    batch = pa.table({"uuid": ["x", "y"], "city": ["sf", "la"], "ts": [1, 1]})
    for p in paths:
        hoodie.write(batch, p, trip_options())
    rocksdb = str(tmp_path / "rocksdb")
    store = ("--view-store", "EMBEDDED_KV_STORE", "--rocksdb-path", rocksdb)
    proc, port = start_server("--table", paths[0], "--table", paths[1], "--port", "0", "--token", TOKEN, *store)
    try:
        remote = {
            "hoodie.write.markers.type": "TIMELINE_SERVER_BASED",
            "hoodie.filesystem.view.remote.host": "127.0.0.1",
            "hoodie.filesystem.view.remote.port": str(port),
            "hoodie.filesystem.view.remote.token": TOKEN,
        }
        for p in paths:
            hoodie.write(pa.table({"uuid": ["x", "z"], "city": ["sf", "nyc"], "ts": [2, 2]}), p, trip_options(**remote))
            assert sorted(hoodie.read(p).column("uuid").to_pylist()) == ["x", "y", "z"]
        metrics = _metrics(port)
        assert re.search(r"hoodie_timeline_server_markers_flushed_total (\d+)", metrics).group(1) == "4"  # type: ignore[union-attr]
        assert re.search(r'requests_total\{endpoint="/v1/hoodie/view/slices/partitions/latest/",status="200"\} (\d+)', metrics), metrics
        assert len(os.listdir(rocksdb)) == 2  # a RocksDB database per table
    finally:
        proc.send_signal(signal.SIGTERM)
        out, _ = proc.communicate(timeout=30)
    assert proc.returncode == 0
    assert "timeline server stopped" in out
    assert os.listdir(rocksdb) == []  # removed when the server stops


def test_the_command_refuses_a_path_that_is_no_table_and_a_wildcard(tmp_path: Path) -> None:
    result = subprocess.run([sys.executable, "-m", "hoodie.cli", "timeline-server", "--table", str(tmp_path)], capture_output=True, text=True, timeout=60)
    assert result.returncode == 1 and "no Hudi table" in result.stderr + result.stdout
    table = str(tmp_path / "t")
    hoodie.write(pa.table({"uuid": ["x"], "city": ["sf"], "ts": [1]}), table, trip_options())
    result = subprocess.run(
        [sys.executable, "-m", "hoodie.cli", "timeline-server", "--table", table, "--host", "0.0.0.0"], capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 1 and "wildcard" in result.stderr + result.stdout
    result = subprocess.run(
        [sys.executable, "-m", "hoodie.cli", "timeline-server", "--table", table, "--view-store", "DISK"], capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 1 and "--view-store 'DISK'" in result.stderr + result.stdout
