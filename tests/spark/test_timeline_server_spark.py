"""Spark writes and the application's embedded timeline server: the executors' markers
(from Python workers, separate processes) reach it, it is reused by the application's
later writes, the table equals one written with direct markers, and an executor that
cannot reach it makes the write fall back to direct markers, naming host and port. On a
local file system Spark's default markers are direct, the views still the server's."""
from __future__ import annotations

import logging
import re
import urllib.request
from pathlib import Path

import pyarrow as pa
import pytest

import hoodie
from hoodie.table.remote_view import RemoteFileSystemView
from hoodie.timeline_server import TimelineServer
from hoodie.timeline_server import embedded as embedded_module


def _batches() -> list[pa.Table]:
    cities = ["sf", "la", "nyc"]
    first = pa.table(
        {"uuid": [f"u{i:02d}" for i in range(30)], "city": [cities[i % 3] for i in range(30)], "ts": [1] * 30, "fare": [float(i) for i in range(30)]}
    )
    upsert = pa.table({"uuid": ["u00", "u04", "n1"], "city": ["sf", "la", "nyc"], "ts": [2, 2, 2], "fare": [-1.0, -2.0, -3.0]})
    return [first, upsert]


def _application_server(spark) -> TimelineServer:  # type: ignore[no-untyped-def]
    return embedded_module._SERVERS["spark:" + spark.sparkContext.applicationId]


def _flushed(server: TimelineServer) -> int:
    text = urllib.request.urlopen(f"http://{server.host}:{server.port}/metrics", timeout=10).read().decode()
    match = re.search(r"hoodie_timeline_server_markers_flushed_total (\d+)", text)
    return int(match.group(1)) if match else 0


SERVER_MARKERS = {"hoodie.write.markers.type": "TIMELINE_SERVER_BASED"}


def test_executor_markers_reach_the_embedded_server_which_later_writes_reuse(spark, tmp_path: Path, helpers) -> None:
    server_table, direct_table = str(tmp_path / "server"), str(tmp_path / "direct")
    flushed: list[int] = []
    ports: set[int] = set()
    for batch in _batches():
        df = helpers.to_df(spark, batch)
        df.write.format("hoodie").options(**helpers.base_options(**SERVER_MARKERS)).mode("append").save(server_table)
        server = _application_server(spark)
        ports.add(server.port)
        flushed.append(_flushed(server))
        df.write.format("hoodie").options(**helpers.base_options(**{"hoodie.write.markers.type": "DIRECT"})).mode("append").save(direct_table)
    assert len(ports) == 1, "one server for the application"
    assert flushed[0] >= 3 and flushed[1] > flushed[0], flushed  # a marker a data file
    assert helpers.rows(hoodie.read(server_table), drop=helpers.VOLATILE) == helpers.rows(hoodie.read(direct_table), drop=helpers.VOLATILE)
    assert helpers.rows(helpers.hudi_rs_snapshot(server_table), drop=helpers.VOLATILE) == helpers.rows(hoodie.read(direct_table), drop=helpers.VOLATILE)


def test_an_unreachable_server_leaves_the_write_to_direct_markers(
    spark, tmp_path: Path, helpers, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    gone = TimelineServer().start()
    gone.stop()  # nothing listens on its port any more

    def unreachable(application, host, config):  # type: ignore[no-untyped-def]
        return gone, True

    monkeypatch.setattr("hoodie.spark.timeline.embedded_server", unreachable)
    monkeypatch.setattr("hoodie.spark.timeline._UNREACHABLE", set())  # the session's later writes use the real server
    path = str(tmp_path / "t")
    with caplog.at_level(logging.WARNING, logger="hoodie.spark.timeline"):
        helpers.to_df(spark, _batches()[0]).write.format("hoodie").options(**helpers.base_options(**SERVER_MARKERS)).save(path)
    assert f"cannot reach the embedded timeline server at 127.0.0.1:{gone.port}" in caplog.text
    assert hoodie.read(path).num_rows == 30


def _served(server: TimelineServer, endpoint: str) -> int:
    text = urllib.request.urlopen(f"http://{server.host}:{server.port}/metrics", timeout=10).read().decode()
    match = re.search(rf'requests_total{{endpoint="{re.escape(endpoint)}",status="200"}} (\d+)', text)
    return int(match.group(1)) if match else 0


def test_executors_ask_the_server_for_their_partitions_latest_slices(spark, tmp_path: Path, helpers, monkeypatch: pytest.MonkeyPatch) -> None:
    cities = [f"c{i:02d}" for i in range(12)]
    first = pa.table({"uuid": [f"u{i:03d}" for i in range(120)], "city": [cities[i % 12] for i in range(120)], "ts": [1] * 120, "fare": [1.0] * 120})
    updated = range(0, 120, 5)  # every city
    upsert = pa.table({"uuid": [f"u{i:03d}" for i in updated], "city": [cities[i % 12] for i in updated], "ts": [2] * 24, "fare": [2.0] * 24})
    path = str(tmp_path / "t")
    # two tasks for twelve partitions: partition-aligned, each task tags and plans its own
    options = helpers.base_options(**{"hoodie.upsert.shuffle.parallelism": "2", "hoodie.insert.shuffle.parallelism": "2"})
    helpers.to_df(spark, first).write.format("hoodie").options(**options).mode("append").save(path)
    server = _application_server(spark)
    endpoint = "/v1/hoodie/view/slices/partitions/latest/"
    before = _served(server, endpoint)
    on_driver: list[str] = []
    real = RemoteFileSystemView.prefetch_latest
    monkeypatch.setattr(RemoteFileSystemView, "prefetch_latest", lambda view, ps: on_driver.extend(ps) or real(view, ps))
    helpers.to_df(spark, upsert).write.format("hoodie").options(**options).mode("append").save(path)
    # the slices were asked for by the tasks (in Python workers, one request each), not the driver
    assert _served(server, endpoint) - before >= 1 and on_driver == []
    rows = hoodie.read(path)
    assert rows.num_rows == 120 and sorted(rows.column("ts").to_pylist()).count(2) == 24


def test_a_commit_records_the_storage_calls_of_driver_and_executors(spark, tmp_path: Path, helpers) -> None:
    path = str(tmp_path / "t")
    batch = _batches()[0]
    helpers.to_df(spark, batch).write.format("hoodie").options(**helpers.base_options(**{"hoodie.write.markers.type": "DIRECT"})).save(path)
    table = hoodie.HoodieTable.open(path)
    meta = table.commit_metadata(table.timeline.completed_writes()[-1])
    calls = meta.storage_calls()
    assert calls is not None and set(calls) == {"list", "read", "write", "exists", "delete"}
    # every data file's marker file was created by an executor, through its own storage
    assert calls["write"] >= len(meta.write_stats()) >= 3


def test_on_a_local_file_system_markers_default_to_direct_and_views_to_the_server(spark, tmp_path: Path, helpers) -> None:
    first, upsert = _batches()
    paths = {kind: str(tmp_path / kind) for kind in ("default", "direct")}
    for path in paths.values():
        helpers.to_df(spark, first).write.format("hoodie").options(**helpers.base_options()).save(path)
    server = _application_server(spark)
    flushed, viewed = _flushed(server), _served(server, "/v1/hoodie/view/slices/partitions/latest/")
    writes = {}
    for kind, path in paths.items():
        options = helpers.base_options(**({"hoodie.write.markers.type": "DIRECT"} if kind == "direct" else {}))
        helpers.to_df(spark, upsert).write.format("hoodie").options(**options).mode("append").save(path)
        table = hoodie.HoodieTable.open(path)
        meta = table.commit_metadata(table.timeline.completed_writes()[-1])
        writes[kind] = meta.storage_calls()["write"]
    assert _flushed(server) == flushed, "no marker went through the server"
    assert writes["default"] == writes["direct"] >= 2 * 3, writes  # a data file and its marker file, each
    assert _served(server, "/v1/hoodie/view/slices/partitions/latest/") > viewed, "the views came from the server"
    assert helpers.rows(hoodie.read(paths["default"]), drop=helpers.VOLATILE) == helpers.rows(hoodie.read(paths["direct"]), drop=helpers.VOLATILE)


def test_a_wildcard_driver_host_in_any_spelling_needs_the_option(
    spark, tmp_path: Path, helpers, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    conf = spark.sparkContext.getConf().set("spark.driver.host", "0x0")  # 0.0.0.0, every interface
    monkeypatch.setattr(spark.sparkContext, "getConf", lambda: conf)
    servers: dict[str, TimelineServer] = {}
    monkeypatch.setattr(embedded_module, "_SERVERS", servers)  # the application has no server yet
    path = str(tmp_path / "t")
    first, upsert = _batches()
    with caplog.at_level(logging.WARNING, logger="hoodie.spark.timeline"):
        helpers.to_df(spark, first).write.format("hoodie").options(**helpers.base_options(**SERVER_MARKERS)).save(path)
    assert "'0x0'" in caplog.text and "hoodie.embed.timeline.server.allow.wildcard=true" in caplog.text
    assert servers == {}, "nothing bound to every interface"
    assert hoodie.read(path).num_rows == 30  # with direct markers
    allowed = helpers.base_options(**SERVER_MARKERS, **{"hoodie.embed.timeline.server.allow.wildcard": "true"})
    try:
        helpers.to_df(spark, upsert).write.format("hoodie").options(**allowed).mode("append").save(path)
        (server,) = servers.values()
        assert server.host == "0x0" and _flushed(server) >= 1
    finally:
        for server in servers.values():
            server.stop()
    assert hoodie.read(path).num_rows == 31
