"""A Spark standalone cluster on 127.0.0.1 (a master and a worker started from the pyspark
package's ``bin/spark-class``, executors in JVMs of their own): an upsert and the demo
pipeline run on it, their executors' markers going through the driver's embedded
timeline server. The drivers are processes of their own (this test process already has
its local session)."""
from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pyspark
import pytest

pytestmark = [pytest.mark.slow, pytest.mark.spark]

DRIVER = '''
import json, re, sys, urllib.request
import pyarrow as pa
from hoodie.spark import local_session
from hoodie.timeline_server import embedded
spark = local_session("hoodie-cluster-test", master=sys.argv[1])
path = sys.argv[2]
opts = {"hoodie.table.name": "trips", "hoodie.datasource.write.recordkey.field": "uuid",
        "hoodie.datasource.write.partitionpath.field": "city", "hoodie.datasource.write.precombine.field": "ts",
        "hoodie.write.markers.type": "TIMELINE_SERVER_BASED"}  # a local path defaults to direct markers
first = pa.table({"uuid": [f"u{i}" for i in range(40)], "city": [["sf", "la", "nyc"][i % 3] for i in range(40)],
                  "ts": [1] * 40, "fare": [float(i) for i in range(40)]})
spark.createDataFrame(first.to_pandas()).write.format("hoodie").options(**opts).save(path)
upsert = pa.table({"uuid": ["u1", "new"], "city": ["la", "sf"], "ts": [2, 2], "fare": [-1.0, -2.0]})
spark.createDataFrame(upsert.to_pandas()).write.format("hoodie").options(**opts).mode("append").save(path)
server = embedded._SERVERS["spark:" + spark.sparkContext.applicationId]
metrics = urllib.request.urlopen(f"http://{server.host}:{server.port}/metrics", timeout=10).read().decode()
flushed = int(re.search(r"hoodie_timeline_server_markers_flushed_total ([0-9]+)", metrics).group(1))
executors = [e.host() for e in spark.sparkContext._jsc.sc().statusTracker().getExecutorInfos()]
rows = {r["uuid"]: r["fare"] for r in spark.read.format("hoodie").load(path).select("uuid", "fare").collect()}
print(json.dumps({"flushed": flushed, "executors": len(executors), "rows": len(rows), "u1": rows["u1"], "new": rows["new"]}))
spark.stop()
'''


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _wait_for(log: Path, text: str, proc: subprocess.Popen[bytes], seconds: float = 90) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if log.exists() and text in log.read_text(errors="replace"):
            return
        if proc.poll() is not None:
            break
        time.sleep(0.5)
    raise AssertionError(f"{text!r} not in {log}: {log.read_text(errors='replace')[-3000:] if log.exists() else 'no log'}")


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    home = Path(pyspark.__file__).parent
    logs = tmp_path_factory.mktemp("cluster")
    env = {
        **os.environ,
        "SPARK_HOME": str(home),
        "SPARK_LOCAL_IP": "127.0.0.1",  # the daemons and their web UIs bind to loopback
        "SPARK_MASTER_OPTS": "-Dspark.master.rest.enabled=false",
        "SPARK_WORKER_DIR": str(logs / "work"),
    }
    port = _free_port()
    spark_class = str(home / "bin" / "spark-class")
    procs: list[subprocess.Popen[bytes]] = []
    try:
        master_log = logs / "master.log"
        with open(master_log, "wb") as out:
            procs.append(subprocess.Popen(
                [spark_class, "org.apache.spark.deploy.master.Master", "--host", "127.0.0.1", "--port", str(port), "--webui-port", "0"],
                env=env, stdout=out, stderr=subprocess.STDOUT,
            ))
        _wait_for(master_log, "I have been elected leader", procs[0])
        worker_log = logs / "worker.log"
        with open(worker_log, "wb") as out:
            procs.append(subprocess.Popen(
                [spark_class, "org.apache.spark.deploy.worker.Worker", f"spark://127.0.0.1:{port}", "--host", "127.0.0.1",
                 "--cores", "2", "--memory", "2g", "--webui-port", "0"],
                env=env, stdout=out, stderr=subprocess.STDOUT,
            ))
        _wait_for(worker_log, "Successfully registered with master", procs[1])
        yield f"spark://127.0.0.1:{port}"
    finally:
        for proc in reversed(procs):  # stopped by PID (spark-class execs the JVM)
            if proc.poll() is None:
                os.kill(proc.pid, signal.SIGTERM)
                try:
                    proc.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    proc.kill()


def test_an_upsert_on_a_standalone_cluster_goes_through_the_timeline_server(cluster: str, tmp_path: Path) -> None:
    result = subprocess.run([sys.executable, "-c", DRIVER, cluster, str(tmp_path / "trips")], capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr[-3000:]
    out = json.loads(result.stdout.strip().splitlines()[-1])
    assert out["executors"] >= 2  # the driver and an executor JVM of the worker
    assert out["flushed"] >= 4, out  # the executors' markers reached the server
    assert (out["rows"], out["u1"], out["new"]) == (41, -1.0, -2.0)


def test_the_demo_runs_on_a_standalone_cluster(cluster: str, tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "hoodie.demo", "--master", cluster, "--path", str(tmp_path / "demo"), "--batches", "4"],
        capture_output=True, text=True, timeout=600,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert f"Spark at {cluster}" in result.stdout
    assert "snapshot:" in result.stdout
