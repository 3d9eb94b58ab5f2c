"""Crash tests: a writer in a real subprocess is killed with SIGKILL at several points of
a commit. The table must still read at its last commit (through hoodie and hudi-rs), the
next writer must roll the failed instant back and succeed, and nothing committed is lost."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pyarrow as pa
import pytest

import hoodie
from hoodie.layout import parse_base_file_name
from hoodie.table.table import HoodieTable

OPTS = {
    "hoodie.table.name": "crash",
    "hoodie.datasource.write.recordkey.field": "uuid",
    "hoodie.datasource.write.partitionpath.field": "city",
    "hoodie.datasource.write.precombine.field": "ts",
    "hoodie.index.bloom.num_entries": "1000",
}

CHILD = textwrap.dedent(
    """
    import os, signal, sys
    import pyarrow as pa
    import hoodie
    from hoodie.engine.local import LocalEngine
    from hoodie.writer import handles, client
    from hoodie.timeline.active import ActiveTimeline
    from hoodie.writer.client import WriteClient
    from hoodie.services.for_writers import WRITER_SERVICES

    path, point = sys.argv[1], sys.argv[2]
    opts = eval(sys.argv[3])
    die = lambda: os.kill(os.getpid(), signal.SIGKILL)
    calls = {"n": 0}
    original = handles.write_base_file

    def crashing_write(storage, fpath, table, *a, **k):
        calls["n"] += 1
        if point == "after_markers":
            die()  # the marker exists, the data file does not
        size = original(storage, fpath, table, *a, **k)
        if point == "mid_files" and calls["n"] == 2:
            with open(fpath, "r+b") as f:  # leave a torn file behind, as a crash mid-write does
                f.truncate(size // 2)
            die()
        return size

    handles.write_base_file = crashing_write
    if point == "before_completion":
        ActiveTimeline.transition_to_completed = lambda *a, **k: die()
    if point == "during_rollback":
        from hoodie.services import rollback
        rollback._execute = lambda *a, **k: die()
    batch = pa.table({
        "uuid": [f"k{i}" for i in range(0, 60, 2)] + ["new1", "new2"],
        "city": [["sf", "nyc", "la"][i % 3] for i in range(0, 60, 2)] + ["sf", "tokyo"],
        "ts": [100] * 32,
        "fare": [-1.0] * 32,
    })
    WriteClient(path, opts, services=WRITER_SERVICES, engine=LocalEngine(max_workers=1)).write(batch)
    print("NOT KILLED")
    """
)


def first_batch() -> pa.Table:
    return pa.table({
        "uuid": [f"k{i}" for i in range(60)],
        "city": [["sf", "nyc", "la"][i % 3] for i in range(60)],
        "ts": list(range(60)),
        "fare": [float(i) for i in range(60)],
    })


def run_child(path: str, point: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", CHILD, path, point, repr(OPTS)],
        capture_output=True, text=True, timeout=300, env={**os.environ, "PYTHONHASHSEED": "0"},
    )


def rows(t: pa.Table) -> list[tuple]:
    return sorted((r["uuid"], r["city"], r["ts"], r["fare"]) for r in t.select(["uuid", "city", "ts", "fare"]).to_pylist())


@pytest.mark.slow
@pytest.mark.parametrize("point", ["after_markers", "mid_files", "before_completion"])
def test_killed_writer_leaves_last_commit_and_next_writer_recovers(tmp_path: Path, point: str, hudi_rs_read) -> None:
    path = str(tmp_path / "t")
    first = hoodie.write(first_batch(), path, OPTS)
    committed = rows(hoodie.read(path))

    proc = run_child(path, point)
    assert proc.returncode == -signal.SIGKILL, proc.stdout + proc.stderr

    table = HoodieTable.open(path)
    pending = table.timeline.pending()
    assert len(pending) == 1 and pending[0].action == "commit", "the killed write stays pending"
    failed = pending[0].timestamp
    assert rows(hoodie.read(path)) == committed, "readers see the last commit only"
    assert rows(hudi_rs_read(path)) == committed, "hudi-rs sees the last commit only"

    nxt = hoodie.write(pa.table({"uuid": ["z"], "city": ["sf"], "ts": [1], "fare": [9.0]}), path, OPTS)
    table = HoodieTable.open(path)
    assert not table.timeline.pending()
    rollbacks = table.timeline.completed(["rollback"])
    assert len(rollbacks) == 1
    assert not table.timeline.contains(failed), "the failed instant is removed after its rollback"
    leftovers = [p for p in Path(path).rglob("*.parquet") if parse_base_file_name(p.name).instant == failed]
    assert leftovers == [], f"files of the failed write survived: {leftovers}"
    assert not (Path(path) / ".hoodie" / ".temp" / failed).exists()
    assert rows(hoodie.read(path)) == sorted(committed + [("z", "sf", 1, 9.0)])
    assert rows(hudi_rs_read(path)) == sorted(committed + [("z", "sf", 1, 9.0)])
    assert [i.timestamp for i in table.timeline.completed_writes()] == [first, nxt]


@pytest.mark.slow
def test_rollback_killed_midway_is_resumed(tmp_path: Path, hudi_rs_read) -> None:
    path = str(tmp_path / "t")
    hoodie.write(first_batch(), path, OPTS)
    committed = rows(hoodie.read(path))
    assert run_child(path, "before_completion").returncode == -signal.SIGKILL
    # the next writer dies inside the rollback, after planning it
    assert run_child(path, "during_rollback").returncode == -signal.SIGKILL
    table = HoodieTable.open(path)
    assert [i.action for i in table.timeline.pending()] == ["commit", "rollback"]
    assert rows(hoodie.read(path)) == committed
    hoodie.write(pa.table({"uuid": ["z"], "city": ["sf"], "ts": [1], "fare": [9.0]}), path, OPTS)
    table = HoodieTable.open(path)
    assert not table.timeline.pending()
    assert len(table.timeline.completed(["rollback"])) == 1
    assert rows(hudi_rs_read(path)) == sorted(committed + [("z", "sf", 1, 9.0)])
    # the claims and the commit lock the killed processes held went with the recovery
    assert not list((Path(path) / ".hoodie" / ".aux" / ".claims").glob("*"))
