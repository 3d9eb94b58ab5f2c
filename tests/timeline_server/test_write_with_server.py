"""Writes with timeline-server-based markers (the process's embedded server): the same
tables as direct markers, in a few MARKERS files; a server gone mid-write falls back to
direct markers and the write succeeds; a damaged MARKERS file fails the commit, which
rolls back cleanly."""
from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from readers import hudi_rs_table, sorted_tuples
from table_options import trip_options

import hoodie
from hoodie.errors import FormatError
from hoodie.markers import DirectMarkers, TimelineServerMarkers
from hoodie.table import HoodieTable
from hoodie.timeline_server.embedded import PROCESS, stop_embedded

SERVER = {"hoodie.write.markers.type": "TIMELINE_SERVER_BASED", "hoodie.markers.timeline_server_based.batch.num_threads": "3"}


@pytest.fixture(autouse=True)
def fresh_server() -> Any:
    stop_embedded(PROCESS)  # each test starts the process's server with its own options
    yield
    stop_embedded(PROCESS)


def _batches() -> list[tuple[str, pa.Table]]:
    cities = ["sf", "la", "nyc", "chi"]
    first = pa.table(
        {"uuid": [f"u{i:03d}" for i in range(80)], "city": [cities[i % 4] for i in range(80)], "ts": [1] * 80, "fare": [float(i) for i in range(80)]}
    )
    upsert = pa.table({"uuid": [f"u{i:03d}" for i in range(0, 80, 3)] + ["n1", "n2"], "city": [cities[i % 4] for i in range(0, 80, 3)] + ["sf", "la"],
                       "ts": [2] * 29, "fare": [-1.0] * 29})
    delete = pa.table({"uuid": ["u001", "u005"], "city": ["la", "la"], "ts": [3, 3], "fare": [0.0, 0.0]})
    return [("bulk_insert", first), ("upsert", upsert), ("delete", delete), ("upsert", upsert)]


def _rows(t: pa.Table) -> list[tuple[Any, ...]]:
    return sorted_tuples(t, ["_hoodie_record_key", "_hoodie_partition_path", "uuid", "city", "ts", "fare"])


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_server_markers_write_the_table_direct_markers_write(tmp_path: Path, table_type: str, monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[list[str]] = []
    real_delete_all = DirectMarkers.delete_all

    def spying_delete_all(self: DirectMarkers) -> None:
        if os.path.isdir(self.marker_dir):
            seen.append(sorted(str(p.relative_to(self.marker_dir)) for p in Path(self.marker_dir).rglob("*") if p.is_file()))
        real_delete_all(self)

    monkeypatch.setattr(DirectMarkers, "delete_all", spying_delete_all)
    direct, server = str(tmp_path / "direct"), str(tmp_path / "server")
    for operation, batch in _batches():
        opts = trip_options(**{"hoodie.datasource.write.table.type": table_type, "hoodie.datasource.write.operation": operation})
        hoodie.write(batch, direct, {**opts, "hoodie.write.markers.type": "DIRECT"})
        seen.clear()
        hoodie.write(batch, server, {**opts, **SERVER})
        assert seen and all(f.startswith("MARKERS") for f in seen[0]), seen
        assert len(seen[0]) <= 3 + 1
        assert _rows(hoodie.read(server)) == _rows(hoodie.read(direct)), operation
    assert _rows(hudi_rs_table(server)) == _rows(hoodie.read(direct))
    assert not os.listdir(Path(server) / ".hoodie" / ".temp")


def test_a_server_gone_mid_write_leaves_the_write_to_direct_markers(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = str(tmp_path / "t")
    first, upsert = _batches()[0][1], _batches()[1][1]
    hoodie.write(first, path, trip_options(**SERVER))
    calls: list[int] = []
    real_create = TimelineServerMarkers.create

    def stopping_after_one(self: TimelineServerMarkers, *args: Any) -> None:
        calls.append(1)
        if len(calls) == 2:
            stop_embedded(PROCESS)  # the server dies while the write's tasks still need markers
        real_create(self, *args)

    monkeypatch.setattr(TimelineServerMarkers, "create", stopping_after_one)
    opts = trip_options(**SERVER, **{"hoodie.filesystem.view.remote.retry.max_numbers": "1", "hoodie.filesystem.view.remote.retry.initial_interval_ms": "1"})
    hoodie.write(upsert, path, opts)
    assert len(calls) > 2
    expected = {r["uuid"]: r["fare"] for r in first.to_pylist()} | {r["uuid"]: r["fare"] for r in upsert.to_pylist()}
    assert {r["uuid"]: r["fare"] for r in hoodie.read(path).to_pylist()} == expected
    assert {r["uuid"]: r["fare"] for r in hudi_rs_table(path).to_pylist()} == expected


def test_a_damaged_markers_file_fails_the_commit_and_the_write_is_rolled_back(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = str(tmp_path / "t")
    first, upsert = _batches()[0][1], _batches()[1][1]
    hoodie.write(first, path, trip_options())
    before = _rows(hoodie.read(path))
    real = DirectMarkers.delete_unaccepted

    def damaging(self: DirectMarkers, stats: Any, *protected: Any) -> None:
        markers_file = next(p for p in Path(self.marker_dir).iterdir() if p.name.startswith("MARKERS") and p.name != "MARKERS.type")
        markers_file.write_bytes(markers_file.read_bytes()[:-9])  # a torn last line
        real(self, stats, *protected)

    monkeypatch.setattr(DirectMarkers, "delete_unaccepted", damaging)
    with pytest.raises(FormatError, match="is not a marker name"):
        hoodie.write(upsert, path, trip_options(**SERVER))
    monkeypatch.undo()
    assert _rows(hoodie.read(path)) == before
    table = HoodieTable.open(path)
    assert [i.state for i in table.timeline.instants if i.action == "commit"][-1] == "COMPLETED"
    hoodie.write(upsert, path, trip_options(**SERVER))  # the next write succeeds
    assert len(hoodie.read(path)) == 82


def test_a_taken_port_leaves_the_write_to_direct_markers(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    import socket

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        path = str(tmp_path / "t")
        hoodie.write(_batches()[0][1], path, trip_options(**SERVER, **{"hoodie.embed.timeline.server.port": str(port)}))
    assert f"127.0.0.1:{port}" in caplog.text and "direct markers" in caplog.text
    assert hoodie.read(path).num_rows == 80


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("hoodie.markers.timeline_server_based.batch.num_threads", "0"),
        ("hoodie.embed.timeline.server.port", "70000"),
        ("hoodie.filesystem.view.remote.retry.max_numbers", "-1"),
    ],
)
def test_out_of_range_server_options_are_refused_before_anything_is_written(tmp_path: Path, key: str, value: str) -> None:
    from hoodie.errors import ConfigError

    path = tmp_path / "t"
    with pytest.raises(ConfigError, match=f"invalid value '{value}' for option {key}"):
        hoodie.write(_batches()[0][1], str(path), trip_options(**{**SERVER, key: value}))
    assert not path.exists()
