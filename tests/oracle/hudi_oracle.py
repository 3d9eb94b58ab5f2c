"""Apache Hudi as a test oracle: a long-lived child process (``driver.py``, run by the
oracle's own PySpark 3.5 with a Hudi Spark bundle) that writes and reads tables on
request, so that many steps share one JVM.

:func:`set_up` runs ``scripts/oracle_setup.sh`` (Maven Central and PyPI, cached across
runs); :class:`HudiOracle` starts the driver and talks to it, one JSON line each way, with
the data in Parquet files under its work folder. Every request has a timeout; when the
child dies or stops answering, the error carries the tail of its stderr.
"""
from __future__ import annotations

import contextlib
import json
import os
import queue
import signal
import subprocess
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

#: the Hudi versions the tests compare with: 0.15 writes table version 6, as hoodie
#: does; 1.2 writes version 9 (its bundle for Spark 3.5: the Spark 4 bundles of the 1.x
#: line are not on Maven Central)
HUDI_0_15 = "0.15.0"
HUDI_1 = "1.2.0"

ROOT = Path(__file__).resolve().parents[2]
SETUP = ROOT / "scripts" / "oracle_setup.sh"
DRIVER = Path(__file__).resolve().parent / "driver.py"
#: exit status of the set-up script when Maven Central or PyPI cannot be reached
UNREACHABLE = 3
# a first set-up downloads a bundle (~100 MB) and PySpark (~300 MB)
SETUP_TIMEOUT = 540  # (under the suite's own per-test timeout, so the message is this one)
START_TIMEOUT = 180
REQUEST_TIMEOUT = 300


class OracleUnavailable(Exception):
    """Apache Hudi could not be fetched (no Maven Central or PyPI): tests skip."""


class OracleError(Exception):
    """Apache Hudi refused a request, died or did not answer in time."""


class OracleRefused(OracleError):
    """Apache Hudi answered a request with an error (its process goes on)."""


@dataclass(frozen=True)
class OracleSetup:
    hudi_version: str
    python: Path
    jar: Path


@dataclass(frozen=True)
class Completed:
    """A completed write on a table's timeline: its instant time and action, and when it
    completed (table versions 8 and 9 name it; on version 6 it is the instant time)."""

    instant: str
    action: str
    completion: str


def set_up(hudi_version: str, env: dict[str, str] | None = None) -> OracleSetup:
    """The bundle and interpreter of ``hudi_version``, fetched on first use (``env``: the
    set-up script's environment, this process's by default)."""
    try:
        done = subprocess.run(
            ["bash", str(SETUP), hudi_version], capture_output=True, text=True, timeout=SETUP_TIMEOUT, check=False, env=env
        )
    except subprocess.TimeoutExpired as exc:
        raise OracleUnavailable(f"Apache Hudi {hudi_version} set-up took over {SETUP_TIMEOUT}s") from exc
    if done.returncode == UNREACHABLE:
        raise OracleUnavailable(done.stderr.strip().splitlines()[-1])
    if done.returncode != 0:
        raise RuntimeError(f"{SETUP.name} {hudi_version} failed ({done.returncode}):\n{done.stderr}")
    found = dict(line.split("=", 1) for line in done.stdout.splitlines() if "=" in line)
    return OracleSetup(hudi_version, Path(found["python"]), Path(found["jar"]))


def _child_env() -> dict[str, str]:
    # hoodie's own Spark and sources must not leak into the oracle's interpreter
    drop = ("SPARK_HOME", "SPARK_CONF_DIR", "PYTHONPATH", "PYSPARK_PYTHON", "PYSPARK_DRIVER_PYTHON", "PYSPARK_SUBMIT_ARGS")
    env = {k: v for k, v in os.environ.items() if k not in drop}
    env["SPARK_LOCAL_IP"] = "127.0.0.1"  # a local session: no interface lookup
    return env


class HudiOracle:
    """One Apache Hudi process: :meth:`write` and :meth:`read` tables, :meth:`read_hfile`;
    :meth:`close`."""

    def __init__(self, setup: OracleSetup, workdir: Path, start_timeout: float = START_TIMEOUT) -> None:
        self.setup = setup
        self.workdir = workdir
        workdir.mkdir(parents=True, exist_ok=True)
        self._stderr_path = workdir / "driver.stderr"
        self._count = 0
        with open(self._stderr_path, "wb") as stderr:
            self._proc = subprocess.Popen(
                [str(setup.python), str(DRIVER), str(setup.jar), str(workdir)],
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=stderr, text=True, cwd=workdir,
                env=_child_env(), start_new_session=True,  # its own process group: the JVM goes with it
            )
        self._answers: queue.Queue[str | None] = queue.Queue()
        threading.Thread(target=self._pump, daemon=True, name="hudi-oracle-answers").start()
        self.spark_version = self._answer(start_timeout, "start")["spark"]

    @property
    def pid(self) -> int:
        return self._proc.pid

    @property
    def running(self) -> bool:
        return self._proc.poll() is None

    def _pump(self) -> None:
        assert self._proc.stdout is not None
        for line in self._proc.stdout:
            self._answers.put(line)
        self._answers.put(None)  # the child closed stdout: it is gone

    def stderr_size(self) -> int:
        """How much the process has written to its stderr so far (a mark for :meth:`stderr_since`)."""
        return self._stderr_path.stat().st_size if self._stderr_path.exists() else 0

    def stderr_since(self, mark: int) -> str:
        """What the process wrote to its stderr after ``mark`` (Spark's and Hudi's log)."""
        with open(self._stderr_path, "rb") as f:
            f.seek(mark)
            return f.read().decode(errors="replace")

    def stderr_tail(self, lines: int = 40) -> str:
        text = self._stderr_path.read_text(errors="replace") if self._stderr_path.exists() else ""
        return "\n".join(text.splitlines()[-lines:])

    def _fail(self, what: str) -> OracleError:
        return OracleError(f"Apache Hudi {self.setup.hudi_version} {what}; its stderr ends with:\n{self.stderr_tail()}")

    def _answer(self, timeout: float, what: str) -> dict[str, Any]:
        try:
            line = self._answers.get(timeout=timeout)
        except queue.Empty:
            self.kill()  # its state is unknown: no later request may use it
            raise self._fail(f"did not answer {what} within {timeout}s (killed)") from None
        if line is None:
            raise self._fail(f"died during {what} (exit status {self._proc.wait()})")
        answer: dict[str, Any] = json.loads(line)
        if not answer["ok"]:
            raise OracleRefused(f"Apache Hudi {self.setup.hudi_version} refused {what}: {answer['error']}")
        return answer

    def _request(self, request: dict[str, Any], timeout: float = REQUEST_TIMEOUT) -> dict[str, Any]:
        if self._proc.poll() is not None:
            raise self._fail(f"is not running (exit status {self._proc.returncode})")
        assert self._proc.stdin is not None
        self._proc.stdin.write(json.dumps(request) + "\n")
        self._proc.stdin.flush()
        return self._answer(timeout, f"{request['op']} of {request.get('path')}")

    def _scratch(self, kind: str) -> Path:
        self._count += 1
        return self.workdir / f"{self._count:04d}-{kind}"

    def write(self, path: str | Path, data: pa.Table, options: dict[str, str], mode: str = "append") -> list[Completed]:
        """Apache Hudi writes ``data`` into the table at ``path``
        (``df.write.format("hudi").options(options).mode(mode)``); the writes it
        completed, in order (a commit and any inline compaction or clustering)."""
        data_file = self._scratch("batch.parquet")
        pq.write_table(data, data_file)
        answer = self._request({"op": "write", "path": str(path), "data": str(data_file), "options": options, "mode": mode})
        data_file.unlink()
        return [Completed(t, action, completion or t) for t, action, completion in answer["instants"]]

    def read(self, path: str | Path, options: dict[str, str] | None = None, where: str | None = None) -> pa.Table:
        """Apache Hudi's read of the table at ``path`` (``spark.read.format("hudi")``),
        filtered by the SQL condition ``where`` if given."""
        out = self._scratch("read")
        answer = self._request({"op": "read", "path": str(path), "options": options or {}, "out": str(out), "where": where})
        return pa.concat_tables([pq.read_table(f) for f in answer["files"]]) if answer["files"] else pa.table({})

    def read_hfile(self, path: str | Path, info: list[str], meta: list[str], lookups: list[str]) -> dict[str, Any]:
        """Apache Hudi's own HFile reader (hudi-io ``HFileReaderImpl``) on the file at
        ``path``: ``count``, ``entries`` ([key, value hex] in order), the ``info`` entries
        and ``meta`` blocks asked for (hex or None), and per lookup key (sorted) its
        ``seekTo`` code with the [key, value hex] at the cursor (see ``driver.py``)."""
        return self._request({"op": "hfile", "path": str(path), "info": info, "meta": meta, "lookups": lookups})

    def validate_metadata(self, path: str | Path) -> dict[str, Any]:
        """Apache Hudi's validation of the metadata table of the table at ``path`` against
        its data (``hudi_validator.py``): ``differences`` (each a dict of ``check``,
        ``partition``, ``metadata``, ``storage``) and ``counts`` (what each check compared)."""
        return self._request({"op": "validate_metadata", "path": str(path)})

    def close(self, timeout: float = 60) -> None:
        """Stops Spark and the process; kills its process group if it does not end in time."""
        if self._proc.poll() is None:
            try:
                assert self._proc.stdin is not None
                self._proc.stdin.write(json.dumps({"op": "stop"}) + "\n")
                self._proc.stdin.close()
                self._proc.wait(timeout)
            except (OSError, subprocess.TimeoutExpired):
                pass
        self.kill()

    def kill(self) -> None:
        """Kills the driver and its JVM (their process group, by the driver's PID)."""
        with contextlib.suppress(ProcessLookupError):  # (nothing left of it)
            os.killpg(self._proc.pid, signal.SIGKILL)
        self._proc.wait()
