"""Table services killed midway (SIGKILL of a real subprocess) leave the table readable
as it was; the next run finishes the job and nothing committed is lost."""
from __future__ import annotations

import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pyarrow as pa
import pytest
from readers import hudi_rs_table, sorted_tuples

import hoodie
from hoodie.services.clean_plan import CleanSettings
from hoodie.services.cleaning import clean, pending_cleans
from hoodie.services.compaction import pending_compactions, run_compaction
from hoodie.table.table import HoodieTable

MOR = {
    "hoodie.table.name": "t",
    "hoodie.datasource.write.recordkey.field": "k",
    "hoodie.datasource.write.partitionpath.field": "p",
    "hoodie.datasource.write.precombine.field": "ts",
    "hoodie.datasource.write.table.type": "MERGE_ON_READ",
    "hoodie.index.bloom.num_entries": "500",
    "hoodie.clean.automatic": "false",
    "hoodie.archive.automatic": "false",
    "hoodie.metadata.enable": "false",  # (the services run through the library, on tables opened plainly)
}


def rows(path: str) -> list[tuple]:
    return sorted_tuples(hoodie.read(path), ["k", "p", "ts"])


def hudi_rs(path: str) -> list[tuple]:
    return sorted_tuples(hudi_rs_table(path), ["k", "p", "ts"])


def build(path: str, writes: int = 4) -> None:
    hoodie.write(pa.table({"k": [f"k{i}" for i in range(20)], "p": ["a", "b", "c", "d"] * 5, "ts": [0] * 20}), path, MOR)
    for ts in range(1, writes):
        hoodie.write(
            pa.table(
                {"k": [f"k{i}" for i in range(ts, 20, 3)], "p": [["a", "b", "c", "d"][i % 4] for i in range(ts, 20, 3)], "ts": [ts] * len(range(ts, 20, 3))}
            ),
            path,
            MOR,
        )


def kill_child(script: str, path: str) -> None:
    proc = subprocess.run([sys.executable, "-c", textwrap.dedent(script), path], capture_output=True, text=True, timeout=300)
    assert proc.returncode == -signal.SIGKILL, proc.stdout + proc.stderr


@pytest.mark.slow
def test_compaction_killed_midway_is_redone(tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    build(path)
    before = rows(path)
    kill_child(
        """
        import os, signal, sys
        from hoodie.engine.local import LocalEngine
        from hoodie.services import compaction as c
        from hoodie.table.table import HoodieTable
        real, calls = c.write_base_file, []
        def dying(*a, **k):
            calls.append(1)
            size = real(*a, **k)
            if len(calls) == 2:
                os.kill(os.getpid(), signal.SIGKILL)
            return size
        c.write_base_file = dying
        table = HoodieTable.open(sys.argv[1])
        instant, _ = c.schedule_compaction(table, c.CompactionSettings(strategy=c.UNBOUNDED_STRATEGY), require_threshold=False)
        c.run_compaction(HoodieTable.open(sys.argv[1]), instant, engine=LocalEngine(1))
        """,
        path,
    )
    ((inst, _),) = pending_compactions(HoodieTable.open(path))
    assert inst.is_inflight
    assert rows(path) == before == hudi_rs(path), "a half-done compaction is invisible"
    hoodie.write(pa.table({"k": ["k0"], "p": ["a"], "ts": [99]}), path, MOR)  # writers go on meanwhile
    run_compaction(HoodieTable.open(path))
    expected = sorted([r for r in before if r[0] != "k0"] + [("k0", "a", 99)])
    assert rows(path) == expected == hudi_rs(path)
    assert not pending_compactions(HoodieTable.open(path))
    # the killed attempt was rolled back by a rollback instant (the write's logs on the
    # slice the compaction opens were left alone), then the compaction ran again
    rollbacks = [i for i in HoodieTable.open(path).timeline.instants if i.action == "rollback"]
    assert [i.is_completed for i in rollbacks] == [True] and rollbacks[0].timestamp > inst.timestamp


@pytest.mark.slow
def test_clean_killed_midway_is_finished(tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    cow = {**MOR, "hoodie.datasource.write.table.type": "COPY_ON_WRITE"}
    for ts in range(6):
        hoodie.write(pa.table({"k": ["a", "b", "c"], "p": ["a", "b", "c"], "ts": [ts] * 3}), path, cow)
    before = rows(path)
    latest = HoodieTable.open(path).timeline.completed_writes()[-1].timestamp
    kill_child(
        """
        import os, signal, sys
        from hoodie.services.cleaning import clean
        from hoodie.services.clean_plan import CleanSettings
        from hoodie.storage.local import LocalStorage
        from hoodie.table.table import HoodieTable
        real, calls = LocalStorage.delete, []
        def dying(self, path):
            calls.append(path)
            if len(calls) == 3:
                os.kill(os.getpid(), signal.SIGKILL)
            return real(self, path)
        LocalStorage.delete = dying
        clean(HoodieTable.open(sys.argv[1]), CleanSettings(commits_retained=1))
        """,
        path,
    )
    (pending,) = pending_cleans(HoodieTable.open(path))
    assert rows(path) == before == hudi_rs(path)
    assert rows(path) == sorted((r["k"], r["p"], r["ts"]) for r in hoodie.read(path, {"as.of.instant": latest}).to_pylist())
    result = clean(HoodieTable.open(path), CleanSettings(commits_retained=1))
    assert result.ran and result.resumed and result.instant == pending.timestamp
    assert not pending_cleans(HoodieTable.open(path))
    assert rows(path) == before == hudi_rs(path)
    assert len(list(Path(path).rglob("*.parquet"))) <= 6
