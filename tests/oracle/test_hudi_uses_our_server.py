"""Apache Hudi's own writer as a client of ``hoodie timeline-server``: Apache Hudi 0.15 and
1.x write the oracle's sequence with their embedded timeline server off and their
file-system view pointed at hoodie's server (``REMOTE_ONLY``: a request hoodie does not
serve fails the write instead of falling back to a local view). The server runs as its
own process on 127.0.0.1 with ``--no-token`` (Hudi sends no token). Its metrics count
every view request Hudi made, all answered 200, and Hudi 1.x's markers
(``TIMELINE_SERVER_BASED``; 0.15 makes direct markers when its embedded server is off);
after every write hoodie's and Apache Hudi's reads agree with each other and with the
model, and Hudi's log names no fallback. The metadata table is on for 1.x (its default,
which makes Hudi call ``loadpartitions/`` and ``slices/merged/beforeoron/latest/``).
A short sequence of Apache Hudi 0.15 with ``REMOTE_FIRST`` (a local view when a request
fails) is held to the same: no request falls back.
"""
from __future__ import annotations

import http.client
import re
import signal
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from hudi_oracle import HUDI_0_15, HUDI_1, HudiOracle
from oracle_reads import check_reads, check_services
from sequences import SERVICES, Layout, Model, batch, steps
from server_process import start_server

NO_MDT = {"hoodie.metadata.enable": "false"}
CLEAN = {"hoodie.cleaner.commits.retained": "2"}  # (cleaning asks for replaced file groups)
CASES = [
    (HUDI_0_15, Layout("COPY_ON_WRITE", "hive"), {**NO_MDT, **CLEAN}),
    (HUDI_0_15, Layout("MERGE_ON_READ", "hive"), {**NO_MDT, **SERVICES}),
    (HUDI_1, Layout("MERGE_ON_READ", "plain"), {"hoodie.metadata.enable": "true", **SERVICES}),  # (its default)
]
#: what Hudi's log says when a view or marker request fails over to a local view or
#: direct markers (PriorityBasedFileSystemView, the marker clients)
FALLBACK = re.compile(r"Trying secondary|falling back|fallback|HoodieRemoteException|Failed to (create|check|delete) marker", re.I)
#: view endpoints every one of these sequences makes Hudi call
VIEW_CALLS = ("datafiles/beforeoron/latest/", "datafile/latest/partition", "compactions/pending/", "filegroups/replaced/before/")


def _id(version: str, layout: Layout, extra: dict[str, str]) -> str:
    return f"hudi-{version}-{layout.id}" + ("-services" if "hoodie.compact.inline" in extra else "")


@contextmanager
def hoodie_server(table: Path) -> Iterator[int]:
    """``hoodie timeline-server --no-token`` serving ``table`` on 127.0.0.1: its port."""
    proc, port = start_server("--table", str(table), "--port", "0", "--no-token")
    try:
        yield port
    finally:
        proc.send_signal(signal.SIGTERM)
        out, _ = proc.communicate(timeout=60)
        assert proc.returncode == 0, out


def requests_by_endpoint(port: int) -> dict[tuple[str, str], float]:
    """(endpoint, status) → requests the server counted (its Prometheus ``/metrics``)."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    conn.request("GET", "/metrics")
    text = conn.getresponse().read().decode()
    found = re.findall(r'hoodie_timeline_server_requests_total\{endpoint="([^"]+)",status="(\d+)"\} ([0-9.e+]+)', text)
    return {(endpoint, status): float(n) for endpoint, status, n in found}


def _markers_flushed(port: int) -> float:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    conn.request("GET", "/metrics")
    match = re.search(r"hoodie_timeline_server_markers_flushed_total ([0-9.e+]+)", conn.getresponse().read().decode())
    assert match is not None
    return float(match.group(1))


def _write_through_hoodies_server(
    oracle: HudiOracle, path: Path, layout: Layout, extra: dict[str, str], view_type: str, sequence: list[tuple[str, list[dict[str, Any]]]],
    check_every_write: bool = True,
) -> tuple[dict[tuple[str, str], float], float]:
    """Apache Hudi writes ``sequence`` into a new table, all but its first write through
    hoodie's server with the view type ``view_type``; the reads are checked after each
    write (or after the last one only) and the log for fallbacks. The requests the server
    counted, and the markers it flushed."""
    version = oracle.setup.hudi_version
    options = layout.options("through_hoodie_server", **extra)
    model, writes = Model.of(layout, commit_time=version == HUDI_0_15), []
    # the server serves tables that exist: Apache Hudi creates it with its first write
    (op, records), rest = sequence[0], sequence[1:]
    write = oracle.write(path, batch(records), {**options, "hoodie.datasource.write.operation": op})[0]
    model.apply(write.instant, op, records)
    writes.append(write)
    with hoodie_server(path) as port:
        remote = {
            "hoodie.embed.timeline.server": "false",
            "hoodie.filesystem.view.type": view_type,
            "hoodie.filesystem.view.remote.host": "127.0.0.1",
            "hoodie.filesystem.view.remote.port": str(port),
            "hoodie.write.markers.type": "TIMELINE_SERVER_BASED",
        }
        mark = oracle.stderr_size()
        for n, (op, records) in enumerate(rest, start=1):
            completed = oracle.write(path, batch(records), {**options, **remote, "hoodie.datasource.write.operation": op})
            model.apply(completed[0].instant, op, records)
            writes.append(completed[0])
            if check_every_write or n == len(rest):
                check_reads(oracle, path, layout, model, writes, f"write {n} ({op}) by Apache Hudi {version} through hoodie's server ({view_type})")
        counted = requests_by_endpoint(port)
        markers = _markers_flushed(port)
    log = oracle.stderr_since(mark)
    fallbacks = [line for line in log.splitlines() if FALLBACK.search(line)]
    assert not fallbacks, "Apache Hudi's log names a fallback:\n" + "\n".join(fallbacks[:10])
    refused = {k: n for k, n in counted.items() if k[1] != "200"}
    assert not refused, f"hoodie's server refused Apache Hudi's requests: {refused}"
    return counted, markers


@pytest.mark.parametrize(("version", "layout", "extra"), CASES, ids=[_id(*c) for c in CASES])
def test_apache_hudi_writes_through_hoodies_timeline_server(
    version: str, layout: Layout, extra: dict[str, str], hudi_oracle: Callable[[str], HudiOracle], tmp_path: Path
) -> None:
    oracle = hudi_oracle(version)
    path = tmp_path / "table"
    sequence = steps("insert")
    counted, markers = _write_through_hoodies_server(oracle, path, layout, extra, "REMOTE_ONLY", sequence)
    served = {endpoint.removeprefix("/v1/hoodie/view/") for endpoint, _ in counted}
    assert set(VIEW_CALLS) <= served, f"view endpoints not called: {sorted(set(VIEW_CALLS) - served)}; called: {sorted(served)}"
    if version == HUDI_1:  # 1.x sends its markers to the view's server; 0.15 makes direct ones
        assert counted.get(("/v1/hoodie/marker/create", "200"), 0) > 0 and markers > 0, counted
    else:
        assert not any(endpoint.startswith("/v1/hoodie/marker/") for endpoint, _ in counted), counted
    check_services(path, layout, extra)


@pytest.mark.parametrize("version", [HUDI_0_15])  # (a version parameter: run beside the other tests of its oracle)
def test_apache_hudi_writes_remote_first_through_hoodies_timeline_server(
    version: str, hudi_oracle: Callable[[str], HudiOracle], tmp_path: Path
) -> None:
    """``REMOTE_FIRST`` (Hudi's ``PriorityBasedFileSystemView``: hoodie's server first, a
    local view when a request fails): every request is answered, none falls back."""
    oracle = hudi_oracle(version)
    layout = Layout("COPY_ON_WRITE", "hive")
    sequence = steps("insert")[:3]  # an insert, an upsert, a delete
    counted, _ = _write_through_hoodies_server(oracle, tmp_path / "table", layout, {**NO_MDT, **CLEAN}, "REMOTE_FIRST", sequence, check_every_write=False)
    views = {endpoint for endpoint, _ in counted if endpoint.startswith("/v1/hoodie/view/")}
    assert {"/v1/hoodie/view/" + e for e in VIEW_CALLS[:2]} <= views and sum(counted.values()) >= len(sequence) - 1, counted
