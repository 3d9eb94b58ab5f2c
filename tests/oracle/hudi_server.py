"""Apache Hudi's own timeline server (``org.apache.hudi.timeline.service.TimelineService``,
from the oracle's Spark bundle) as a child process, to compare its answers with hoodie's
server on the same tables.

It runs on a plain JVM (no Spark): the bundle and the Hadoop jars of the oracle's PySpark,
on 127.0.0.1 and a free port, with marker requests on, its in-memory view, and
``KeepTimelineServer.java`` (run in Java's source-file mode) keeping the JVM alive. :func:`ask` sends one request, as
Apache Hudi's ``RemoteHoodieTableFileSystemView`` does, to either server.
"""
from __future__ import annotations

import contextlib
import http.client
import json
import os
import signal
import socket
import subprocess
import time
import urllib.parse
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from hudi_oracle import OracleSetup

START_TIMEOUT = 120
# TimelineService's main, in a JVM kept alive (1.x's main returns once the server runs)
LAUNCHER = Path(__file__).resolve().parent / "KeepTimelineServer.java"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _spark_jars(setup: OracleSetup) -> Path:
    """The jars folder of the oracle's PySpark (Hadoop's client jars, logging)."""
    venv = setup.python.parent.parent
    found = sorted(venv.glob("lib/python*/site-packages/pyspark/jars"))
    assert found, f"no pyspark/jars under {venv}"
    return found[0]


def ask(port: int, endpoint: str, params: dict[str, str], method: str = "GET") -> tuple[int, Any]:
    """(status, JSON answer or the raw text) of one request to a server on 127.0.0.1."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    try:
        conn.request(method, f"{endpoint}?{urllib.parse.urlencode(params)}")
        response = conn.getresponse()
        body = response.read().decode(errors="replace")
    finally:
        conn.close()
    try:
        return response.status, json.loads(body) if body else None
    except ValueError:
        return response.status, body


@contextlib.contextmanager
def hudi_timeline_server(setup: OracleSetup, workdir: Path) -> Iterator[int]:
    """Apache Hudi's timeline server of ``setup``'s version, running: its port. Its log is
    ``workdir/hudi-timeline-server.log``."""
    workdir.mkdir(parents=True, exist_ok=True)
    port = _free_port()
    log_path = workdir / "hudi-timeline-server.log"
    classpath = f"{setup.jar}{os.pathsep}{_spark_jars(setup)}/*"
    # (the in-memory view: the spillable one sizes objects with JOL, which Java 17 refuses)
    command = ["java", "-Xmx512m", "-cp", classpath, str(LAUNCHER), "--server-port", str(port), "--view-storage", "MEMORY", "--enable-marker-requests"]
    env = {k: v for k, v in os.environ.items() if k not in ("CLASSPATH", "HADOOP_CONF_DIR")}
    with open(log_path, "wb") as log:
        proc = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, cwd=workdir, env=env, start_new_session=True)
    try:
        deadline = time.monotonic() + START_TIMEOUT
        while True:
            if proc.poll() is not None:
                raise RuntimeError(f"Apache Hudi's timeline server exited ({proc.returncode}):\n{log_path.read_text(errors='replace')[-4000:]}")
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=1):
                    break
            except OSError:
                if time.monotonic() > deadline:
                    raise RuntimeError(f"Apache Hudi's timeline server did not listen within {START_TIMEOUT}s") from None
                time.sleep(0.5)
        yield port
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
