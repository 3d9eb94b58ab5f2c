"""The one description of the timeline server's endpoints (hoodie.server_api): the server
serves exactly the described endpoints, with their methods, and refuses a request missing
a described parameter or giving a bad value, naming it; hoodie's clients call only
described endpoints with described parameters, and build no request by hand."""
from __future__ import annotations

import ast
import http.client
import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from table_options import trip_options

import hoodie
from hoodie import server_api as api
from hoodie.errors import RequestError, UnsafePathError
from hoodie.server_calls import TOKEN_HEADER, ServerClient
from hoodie.timeline_server import TimelineServer
from hoodie.timeline_server.embedded import PROCESS, stop_embedded

SRC = Path(api.__file__).parent
INSTANT = "20261125010203456"


@pytest.fixture(autouse=True)
def fresh_server() -> Any:
    stop_embedded(PROCESS)
    yield
    stop_embedded(PROCESS)


def _send(server: TimelineServer, method: str, path: str, body: bytes | None = None) -> tuple[int, bytes]:
    conn = http.client.HTTPConnection(server.host, server.port, timeout=10)
    try:
        conn.request(method, path, body=body, headers={TOKEN_HEADER: server.token, "Content-Type": "application/json"})
        response = conn.getresponse()
        return response.status, response.read()
    finally:
        conn.close()


def test_the_server_routes_exactly_the_described_endpoints() -> None:
    with TimelineServer() as server:
        assert server._runner is not None
        served = {(r.method, r.resource.canonical) for r in server._runner.app.router.routes() if r.method != "HEAD" and r.resource is not None}
    assert served == {(e.method, e.path) for e in api.ENDPOINTS}
    assert len(api.BY_PATH) == len(api.ENDPOINTS)  # one description per path


@pytest.mark.parametrize("endpoint", api.ENDPOINTS, ids=lambda e: f"{e.method} {e.path}")
def test_each_described_endpoint_is_served_and_checks_what_it_describes(tmp_path: Path, endpoint: api.Endpoint) -> None:
    with TimelineServer() as server:
        status, answer = _send(server, endpoint.method, endpoint.path, b"{}" if endpoint.body else None)
        other = "GET" if endpoint.method == "POST" else "POST"
        assert _send(server, other, endpoint.path)[0] == 405  # the described method only
    required = [p.name for p in endpoint.params if p.required]
    if required:  # refused before anything is read, naming the first parameter missing
        assert status == 400 and json.loads(answer)["error"] == f"missing parameter {required[0]!r}"
    else:
        assert status == 200


def test_an_undescribed_path_is_not_served() -> None:
    with TimelineServer() as server:
        assert _send(server, "GET", api.VIEW_PREFIX + "no/such/endpoint/?basepath=x")[0] == 404


@pytest.mark.parametrize(("param", "value", "named"), [
    (api.Param("maxinstant", api.Kind.INSTANT), "2024x", "maxinstant '2024x' is not an instant time"),
    (api.Param("instants", api.Kind.INSTANTS), f"{INSTANT},x", "instants names 'x'"),
    (api.Param("fileid", api.Kind.FILE_ID), "../f", "../f"),
    (api.Param("partition", api.Kind.PARTITION), "/abs", "/abs"),
    (api.Param("partitions", api.Kind.PARTITIONS_JSON), '["sf", 1]', "is not a JSON list of partition paths"),
    (api.Param("partitions", api.Kind.PARTITIONS), "sf", "partitions must be a list of partition paths"),
    (api.Param("markerdirpath", api.Kind.MARKER_DIR), "/t/.hoodie/.temp/x", "does not end in an instant time"),
    (api.Param("markername", api.Kind.MARKER_NAME), "sf/x.parquet", "is not <partition>/<file>.marker"),
    (api.Param("markernames", api.Kind.MARKER_NAMES), ["sf/../../x.parquet.marker.CREATE"], "sf/../.."),
])
def test_each_kind_refuses_a_bad_value_naming_it(param: api.Param, value: object, named: str) -> None:
    with pytest.raises((RequestError, UnsafePathError)) as refused:
        api.Endpoint("/p", "GET", (param,)).checked({param.name: value})
    assert named in str(refused.value)


def test_checked_values_take_the_form_the_answers_use() -> None:
    endpoint = api.Endpoint("/p", "GET", (
        api.Param("partition", api.Kind.PARTITION), api.Param("instants", api.Kind.INSTANTS),
        api.Param("partitions", api.Kind.PARTITIONS_JSON), api.Param("lastinstantts", api.Kind.INSTANT, required=False),
    ))
    given = {"partition": "a/b/", "instants": f"{INSTANT},", "partitions": '["sf", "la"]', "lastinstantts": "", "other": "kept out"}
    assert endpoint.checked(given) == {"partition": "a/b", "instants": [INSTANT], "partitions": ["sf", "la"]}


def test_a_client_cannot_send_what_an_endpoint_does_not_describe() -> None:
    with pytest.raises(ValueError, match="does not take \\['partitons'\\]"):
        api.request(api.LATEST_SLICES, {"basepath": "/t", "partitons": "sf"})
    with pytest.raises(ValueError, match="needs \\['partition'\\]"):
        api.request(api.LATEST_SLICES, {"basepath": "/t"})
    assert api.request(api.LATEST_SLICES_OF, {"basepath": "/t", "partitions": ["sf"]}) == ({}, {"basepath": "/t", "partitions": ["sf"]})


def test_the_clients_call_only_described_endpoints_with_described_parameters(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                             caplog: pytest.LogCaptureFixture) -> None:
    calls: list[tuple[str, str, dict[str, str], object]] = []
    real_call = ServerClient.call

    def recording_call(self: ServerClient, method: str, path: str, params: dict[str, str], body: object = None) -> object:
        calls.append((method, path, dict(params), body))
        return real_call(self, method, path, params, body)

    monkeypatch.setattr(ServerClient, "call", recording_call)
    path = str(tmp_path / "t")
    rows = pa.table({"uuid": [f"u{i}" for i in range(20)], "city": ["sf", "la"] * 10, "ts": [1] * 20})
    hoodie.write(rows, path, trip_options())
    with TimelineServer() as server:
        server.add_table(path)
        address = server.address
        remote = {
            "hoodie.write.markers.type": "TIMELINE_SERVER_BASED",
            "hoodie.filesystem.view.type": "REMOTE_ONLY",
            "hoodie.embed.timeline.server": "false",
            "hoodie.filesystem.view.remote.host": address.host,
            "hoodie.filesystem.view.remote.port": str(address.port),
            "hoodie.filesystem.view.remote.token": address.token,
        }
        for operation in ("upsert", "insert_overwrite"):
            hoodie.write(rows.set_column(2, "ts", pa.array([2] * 20)), path, trip_options(**remote, **{"hoodie.datasource.write.operation": operation}))
    assert "instead" not in caplog.text  # every call answered: no fallback
    used = set()
    for method, called, query, body in calls:
        endpoint = api.BY_PATH[called]
        assert method == endpoint.method
        given = set(query) | (set(body) if isinstance(body, dict) else set())
        assert given <= {p.name for p in endpoint.params}, called
        assert (body is not None) == endpoint.body, called
        used.add(endpoint)
    assert {api.MARKER_CREATE, api.LATEST_SLICES_OF} <= used or {api.MARKER_CREATE_ALL, api.LATEST_SLICES_OF} <= used


def test_no_module_but_the_description_builds_a_request() -> None:
    """Outside server_api.py, no call of ServerClient.call or call_server and no path of
    the server's API (docstrings aside): every request goes through api.call."""
    offenders = []
    for file in sorted(SRC.rglob("*.py")):
        if file.name in ("server_api.py", "server_calls.py"):
            continue
        tree = ast.parse(file.read_text())
        docstrings = {id(n.body[0].value) for n in ast.walk(tree)
                      if isinstance(n, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef) and n.body
                      and isinstance(n.body[0], ast.Expr) and isinstance(n.body[0].value, ast.Constant)}
        for node in ast.walk(tree):
            if isinstance(node, ast.Call):
                name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
                through_api = isinstance(node.func, ast.Attribute) and isinstance(node.func.value, ast.Name) and node.func.value.id == "api"
                if name == "call_server" or (name == "call" and not through_api and len(node.args) >= 2):
                    offenders.append(f"{file.relative_to(SRC)}:{node.lineno}")
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings and (
                "/v1/hoodie" in node.value or node.value in ("/health", "/metrics")
            ):
                offenders.append(f"{file.relative_to(SRC)}:{node.lineno} {node.value!r}")
    assert offenders == []
