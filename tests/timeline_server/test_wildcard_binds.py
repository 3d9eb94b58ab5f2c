"""A timeline server binds to every interface only when told to, whatever spelling of the
wildcard address it is given: the decision is made on the address the name resolves to,
for ``hoodie timeline-server``, the embedded server of a process and the embedded server
of a Spark application (tests/spark/test_timeline_server_spark.py)."""
from __future__ import annotations

import http.client
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pyarrow as pa
import pytest
from table_options import trip_options

import hoodie
from hoodie.config.options import HoodieConfig
from hoodie.errors import ConfigError
from hoodie.timeline_server import TimelineServer
from hoodie.timeline_server import embedded as embedded_module
from hoodie.timeline_server.server import bind_addresses, is_wildcard

# every spelling the issue found slipping past the guard, and the plain ones
WILDCARD_SPELLINGS = ["0", "0x0", "000.000.000.000", "::0", "0:0:0:0:0:0:0:0", "0.0.0.0", "::", "", "::ffff:0.0.0.0"]


@pytest.mark.parametrize("host", WILDCARD_SPELLINGS)
def test_every_spelling_of_the_wildcard_is_refused_naming_the_flag(host: str) -> None:
    with pytest.raises(ConfigError, match="--allow-wildcard") as refused:
        TimelineServer(host)
    assert repr(host) in str(refused.value) and "every interface" in str(refused.value)


@pytest.mark.parametrize("host", ["127.0.0.1", "localhost", "127.1", "0177.0.0.1"])
def test_loopback_in_any_spelling_is_no_wildcard(host: str) -> None:
    assert bind_addresses(host) and not any(is_wildcard(a) for a in bind_addresses(host))
    with TimelineServer(host) as server:
        conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
        conn.request("GET", "/health")
        assert conn.getresponse().status == 200


def test_a_wildcard_binds_every_interface_when_allowed() -> None:
    with TimelineServer("0x0", allow_wildcard=True) as server:
        conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
        conn.request("GET", "/health")
        assert conn.getresponse().status == 200


def test_a_name_that_does_not_resolve_is_refused_naming_it() -> None:
    with pytest.raises(ConfigError, match="no-such-host.invalid"):
        TimelineServer("no-such-host.invalid")


def _table(tmp_path: Path) -> str:
    table = str(tmp_path / "t")
    hoodie.write(pa.table({"uuid": ["x"], "city": ["sf"], "ts": [1]}), table, trip_options())
    return table


@pytest.mark.parametrize("host", ["0", "0x0", "000.000.000.000", "::0", "0:0:0:0:0:0:0:0"])
def test_the_command_refuses_a_wildcard_in_any_spelling(tmp_path: Path, host: str) -> None:
    command = [sys.executable, "-m", "hoodie.cli", "timeline-server", "--table", _table(tmp_path), "--host", host, "--port", "0"]
    result = subprocess.run(command, capture_output=True, text=True, timeout=60)
    assert result.returncode == 1
    assert "--allow-wildcard" in result.stderr + result.stdout and "every interface" in result.stderr + result.stdout


@pytest.fixture
def no_embedded(monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, TimelineServer]]:
    servers: dict[str, TimelineServer] = {}
    monkeypatch.setattr(embedded_module, "_SERVERS", servers)
    yield servers
    for server in servers.values():
        server.stop()


@pytest.mark.parametrize("host", ["0", "0x0", "::0"])
def test_the_embedded_server_refuses_a_wildcard_naming_its_option(no_embedded: dict[str, TimelineServer], host: str) -> None:
    with pytest.raises(ConfigError, match="hoodie.embed.timeline.server.allow.wildcard=true"):
        embedded_module.embedded_server("test-app", host, HoodieConfig.of({}))
    assert no_embedded == {}
    server, started = embedded_module.embedded_server("test-app", "0x0", HoodieConfig.of({"hoodie.embed.timeline.server.allow.wildcard": "true"}))
    assert started and server.running
