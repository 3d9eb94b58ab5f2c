"""The timeline server's markers over real HTTP on 127.0.0.1: batching into a few MARKERS
files, duplicates refused, a restarted server loading what an earlier one wrote, and
hostile, unauthenticated, oversized and flooding requests refused without a trace."""
from __future__ import annotations

import http.client
import json
import os
import threading
import urllib.parse
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pyarrow as pa
import pytest
from table_options import trip_options

import hoodie
from hoodie.errors import ConfigError
from hoodie.markers import DirectMarkers, ServerAddress, ServerClient, TimelineServerMarkers
from hoodie.server_calls import TOKEN_HEADER, call_server
from hoodie.storage.local import LocalStorage
from hoodie.timeline_server import MarkerBatching, TimelineServer

INSTANT = "20261125010203456"


@pytest.fixture
def table(tmp_path: Path) -> str:
    path = str(tmp_path / "t")
    hoodie.write(pa.table({"uuid": ["a"], "city": ["sf"], "ts": [1]}), path, trip_options())
    return path


def _files_under(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def _raw(server: TimelineServer, method: str, path: str, params: dict[str, str], token: str | None = None, body: bytes | None = None) -> tuple[int, bytes]:
    conn = http.client.HTTPConnection(server.host, server.port, timeout=10)
    headers = {} if token is None else {TOKEN_HEADER: token}
    conn.request(method, f"{path}?{urllib.parse.urlencode(params)}", body=body, headers=headers)
    response = conn.getresponse()
    return response.status, response.read()


def test_markers_of_many_tasks_are_batched_into_few_files(table: str) -> None:
    batching = MarkerBatching(interval_ms=20, threads=4)
    with TimelineServer(batching=batching) as server:
        server.add_table(table)
        markers = TimelineServerMarkers(LocalStorage(), table, INSTANT, ServerClient(server.address))
        names = [f"f{i:03d}_0-{i}-0_{INSTANT}.parquet" for i in range(300)]
        with ThreadPoolExecutor(16) as pool:
            list(pool.map(lambda n: markers.create("sf", n, "CREATE"), names))
        marker_dir = Path(markers.direct.marker_dir)
        files = sorted(os.listdir(marker_dir))
        assert "MARKERS.type" in files and (marker_dir / "MARKERS.type").read_text() == "TIMELINE_SERVER_BASED"
        assert len(files) <= batching.threads + 1, files
        assert sorted(e.file_name for e in DirectMarkers(LocalStorage(), table, INSTANT).entries()) == names
        # a second request for a marker the directory has is answered False, nothing added
        params = {"markerdirpath": str(marker_dir), "markername": f"sf/{names[0]}.marker.CREATE"}
        assert call_server(server.address, "POST", "/v1/hoodie/marker/create", params) is False
        assert len(call_server(server.address, "GET", "/v1/hoodie/marker/all", {"markerdirpath": str(marker_dir)})) == 300  # type: ignore[arg-type]
        metrics = _raw(server, "GET", "/metrics", {})[1].decode()
        assert "hoodie_timeline_server_markers_flushed_total 300.0" in metrics


def test_a_restarted_server_refuses_what_an_earlier_one_accepted(table: str) -> None:
    name = f"f0_0-1-0_{INSTANT}.parquet"
    with TimelineServer() as first:
        first.add_table(table)
        TimelineServerMarkers(LocalStorage(), table, INSTANT, ServerClient(first.address)).create("sf", name, "CREATE")
    with TimelineServer() as second:
        second.add_table(table)
        params = {"markerdirpath": DirectMarkers(LocalStorage(), table, INSTANT).marker_dir, "markername": f"sf/{name}.marker.CREATE"}
        assert call_server(second.address, "POST", "/v1/hoodie/marker/create", params) is False
        params["markername"] = f"sf/f1_0-1-0_{INSTANT}.parquet.marker.CREATE"
        assert call_server(second.address, "POST", "/v1/hoodie/marker/create", params) is True
    assert len(DirectMarkers(LocalStorage(), table, INSTANT).entries()) == 2


@pytest.mark.parametrize(
    ("markerdirpath", "markername", "status"),
    [
        ("{table}/../elsewhere/.hoodie/.temp/" + INSTANT, "sf/x.parquet.marker.CREATE", 403),
        ("/tmp/.hoodie/.temp/" + INSTANT, "sf/x.parquet.marker.CREATE", 403),
        ("{table}/.hoodie/.temp/../../x", "sf/x.parquet.marker.CREATE", 400),
        ("{table}/.hoodie/.temp/" + INSTANT, "../../../escape.parquet.marker.CREATE", 400),
        ("{table}/.hoodie/.temp/" + INSTANT, "/abs/x.parquet.marker.CREATE", 400),
        ("{table}/.hoodie/.temp/" + INSTANT, "sf/x\x00y.parquet.marker.CREATE", 400),
        ("{table}/.hoodie/.temp/" + INSTANT, "sf/x.parquet", 400),
        ("{table}/.hoodie/.temp/２０２６１１２５０１０２０３４５６", "sf/x.parquet.marker.CREATE", 400),  # fullwidth digits
    ],
)
def test_hostile_marker_requests_are_refused_and_touch_nothing(table: str, markerdirpath: str, markername: str, status: int) -> None:
    root = Path(table).parent
    before = _files_under(root)
    with TimelineServer() as server:
        server.add_table(table)
        params = {"markerdirpath": markerdirpath.format(table=table), "markername": markername}
        code, body = _raw(server, "POST", "/v1/hoodie/marker/create", params, server.token)
    assert code == status, body
    assert b"error" in body
    assert _files_under(root) == before


@pytest.mark.parametrize("token", [None, "", "wrong"])
def test_requests_without_the_token_are_refused(table: str, token: str | None) -> None:
    with TimelineServer() as server:
        server.add_table(table)
        marker_dir = DirectMarkers(LocalStorage(), table, INSTANT).marker_dir
        params = {"markerdirpath": marker_dir, "markername": f"sf/f_0-1-0_{INSTANT}.parquet.marker.CREATE"}
        code, body = _raw(server, "POST", "/v1/hoodie/marker/create", params, token)
        assert code == 401, body
        assert _raw(server, "GET", "/health", {}, token) == (200, b'{"status": "ok"}')  # health needs no token, shows no table
    assert not os.path.exists(marker_dir)


def test_health_names_the_tables_only_to_the_token(table: str) -> None:
    with TimelineServer() as server:
        server.add_table(table)
        for token in (None, "", "wrong", server.token[:-1]):
            code, body = _raw(server, "GET", "/health", {}, token)
            assert code == 200 and json.loads(body) == {"status": "ok"} and table.encode() not in body
        code, body = _raw(server, "GET", "/health", {}, server.token)
        assert code == 200 and json.loads(body) == {"status": "ok", "tables": [table]}


def test_oversized_bodies_and_floods_are_refused_without_a_crash(table: str) -> None:
    with TimelineServer(batching=MarkerBatching(interval_ms=500, threads=2, max_pending=20)) as server:
        server.add_table(table)
        marker_dir = DirectMarkers(LocalStorage(), table, INSTANT).marker_dir
        code, _ = _raw(server, "POST", "/v1/hoodie/marker/create", {"markerdirpath": marker_dir, "markername": "sf/a.parquet.marker.CREATE"},
                       server.token, body=b"x" * (1 << 20))
        assert code == 413
        codes: list[int] = []
        lock = threading.Lock()

        def one(i: int) -> None:
            params = {"markerdirpath": marker_dir, "markername": f"sf/f{i}_0-1-0_{INSTANT}.parquet.marker.CREATE"}
            code, _ = _raw(server, "POST", "/v1/hoodie/marker/create", params, server.token)
            with lock:
                codes.append(code)

        with ThreadPoolExecutor(64) as pool:
            list(pool.map(one, range(200)))
        assert set(codes) <= {200, 503} and 503 in codes and 200 in codes
        assert _raw(server, "GET", "/health", {})[0] == 200
        accepted = codes.count(200)
    assert len(DirectMarkers(LocalStorage(), table, INSTANT).entries()) == accepted


def test_the_server_binds_to_no_wildcard_unless_told(table: str) -> None:
    with pytest.raises(ConfigError, match="wildcard"):
        TimelineServer("0.0.0.0")
    with TimelineServer() as server, pytest.raises(ConfigError, match=f"127.0.0.1:{server.port}"):
        TimelineServer(port=server.port).start()


def test_markers_fall_back_to_direct_when_the_server_is_gone(table: str, caplog: pytest.LogCaptureFixture) -> None:
    server = TimelineServer().start()
    server.add_table(table)
    address = server.address
    server.stop()
    gone = ServerAddress(address.host, address.port, address.token, timeout_s=1.0, retries=1, retry_interval_s=0.01)
    markers = TimelineServerMarkers(LocalStorage(), table, INSTANT, ServerClient(gone))
    markers.create("sf", f"f0_0-1-0_{INSTANT}.parquet", "CREATE")
    assert [e.file_name for e in DirectMarkers(LocalStorage(), table, INSTANT).entries()] == [f"f0_0-1-0_{INSTANT}.parquet"]
    assert os.path.exists(Path(markers.direct.marker_dir) / "sf" / f"f0_0-1-0_{INSTANT}.parquet.marker.CREATE")
    assert "creating markers directly instead" in caplog.text


def test_a_task_s_markers_in_one_request(table: str) -> None:
    with TimelineServer() as server:
        server.add_table(table)
        markers = TimelineServerMarkers(LocalStorage(), table, INSTANT, ServerClient(server.address))
        wanted = [("sf", f"f{i}_0-1-0_{INSTANT}.parquet", "CREATE") for i in range(600)]  # three requests
        markers.create_all(wanted)
        assert sorted(e.file_name for e in DirectMarkers(LocalStorage(), table, INSTANT).entries()) == sorted(f for _, f, _ in wanted)
        marker_dir = markers.direct.marker_dir
        body = {"markerdirpath": marker_dir, "markernames": [f"sf/f0_0-1-0_{INSTANT}.parquet.marker.CREATE", f"sf/new_0-1-0_{INSTANT}.parquet.marker.CREATE"]}
        assert call_server(server.address, "POST", "/v1/hoodie/marker/create-all", {}, body) == [False, True]
        before = _files_under(Path(table).parent)
        hostile = {"markerdirpath": marker_dir, "markernames": [f"sf/ok_0-1-0_{INSTANT}.parquet.marker.CREATE", "../../x.parquet.marker.CREATE"]}
        code, answer = _raw(server, "POST", "/v1/hoodie/marker/create-all", {}, server.token, body=json.dumps(hostile).encode())
        assert code == 400 and b"../.." in answer
        code, _ = _raw(server, "POST", "/v1/hoodie/marker/create-all", {}, server.token, body=b"not json")
        assert code == 400
        assert _files_under(Path(table).parent) == before  # nothing of a refused batch is written
