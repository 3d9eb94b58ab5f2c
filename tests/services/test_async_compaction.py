"""Asynchronous compaction in a process of its own (services/async_compaction.py,
services/compaction_process.py): a merge-on-read table written by batches while a child
process compacts it ends as the batches make it; a killed child leaves a pending
compaction that the next batch runs again; a failed one is a warning and ``last_error``.
"""
from __future__ import annotations

import json
import logging
import os
import random
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest
from modeling import Model, model_options, random_batch, table_rows, to_arrow
from readers import hudi_rs_table

import hoodie
from hoodie.engine.local import LocalEngine
from hoodie.errors import ConcurrentWriteError, ConfigError, DamagedTableError, HoodieError
from hoodie.services import compaction_process
from hoodie.services.async_compaction import AsyncCompactor
from hoodie.services.compaction import CompactionSettings, pending_compactions, schedule_compaction
from hoodie.services.compaction_process import CompactionProcess
from hoodie.storage.local import LocalStorage
from hoodie.table.table import HoodieTable
from hoodie.timeline.instant import Action
from hoodie.timeline.write_claims import commit_lock
from hoodie.writer import transaction

OPTIONS = {
    **model_options("BLOOM", "MERGE_ON_READ"),
    "hoodie.compact.inline": "false",
    "hoodie.compact.inline.max.delta.commits": "2",
    "hoodie.compaction.strategy": "org.apache.hudi.table.action.compact.strategy.UnBoundedCompactionStrategy",
}


class Batches:
    """Random upserts and deletes written to a table and to its model."""

    def __init__(self, path: str, seed: int) -> None:
        self.path, self.model, self.rng, self.next_id = path, Model(), random.Random(seed), [0]

    def write(self) -> str:
        op, rows = random_batch(self.rng, self.model, self.next_id)
        self.model.apply(op, rows)
        return hoodie.write(to_arrow(rows), self.path, {**OPTIONS, "hoodie.datasource.write.operation": op})

    def update(self, count: int, ts: int) -> str:
        """An upsert of ``count`` stored keys only: logs on their file groups."""
        rows = [{**self.model.rows[k], "ts": ts, "note": "upd"} for k in list(self.model.rows)[:count]]
        self.model.apply("upsert", rows)
        return hoodie.write(to_arrow(rows), self.path, {**OPTIONS, "hoodie.datasource.write.operation": "upsert"})

    @classmethod
    def with_logs(cls, path: str, seed: int) -> Batches:
        """A table of a few random writes, then updates: log files to compact."""
        batches = cls(path, seed)
        for _ in range(3):
            batches.write()
        batches.update(30, 500)
        return batches

    def check(self) -> None:
        snapshot = hoodie.read(self.path)
        assert snapshot.num_rows == len(self.model.rows), "a key is in the table twice"
        assert table_rows(snapshot) == self.model.rows
        assert table_rows(hudi_rs_table(self.path)) == self.model.rows


def schedule_now(path: str) -> str:
    """A compaction of every slice with logs, scheduled now."""
    settings = CompactionSettings(strategy=OPTIONS["hoodie.compaction.strategy"])
    instant, _ = schedule_compaction(HoodieTable.open(path), settings, require_threshold=False)
    assert instant is not None
    return instant


def compact_in_child(path: str, instant: str, outcomes: list[BaseException | None]) -> None:
    """Compaction ``instant`` run to its end in a compaction process, which then ends."""
    child = CompactionProcess(path, OPTIONS)
    child.run(instant, outcomes.append)
    child.close(120)


def completed_compactions(path: str) -> list[str]:
    timeline = HoodieTable.open(path).timeline
    return [i.timestamp for i in timeline.completed([Action.COMMIT]) if timeline.commit_metadata(i).compacted]


def test_batches_commit_while_a_child_process_compacts(tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    batches = Batches(path, seed=7)
    beside: list[str] = []  # batches committed while a compaction process ran
    with AsyncCompactor(path, OPTIONS) as compactor:
        assert compactor.separate_process
        for _ in range(200):  # until two compactions completed beside the batches
            child = compactor.process_id
            instant = batches.write()
            if child is not None and compactor.process_id == child:
                beside.append(instant)
            compactor.after_batch()
            assert compactor.process_id != os.getpid()
            if len(completed_compactions(path)) >= 2 and beside:
                break
    assert not compactor.running() and compactor.last_error is None
    assert beside, "no batch committed while the compaction process ran"
    assert len(completed_compactions(path)) >= 2
    assert not pending_compactions(HoodieTable.open(path))
    batches.check()


def wait_until(condition, what: str, seconds: float = 120.0) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, f"gave up waiting for {what}"
        time.sleep(0.02)


def test_a_killed_compaction_process_is_run_again_after_the_next_batch(tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    batches = Batches.with_logs(path, seed=11)
    compactor = AsyncCompactor(path, OPTIONS)
    # the commit lock held here keeps the child from completing: it is killed with its
    # base files written and its compaction inflight
    with commit_lock(LocalStorage(), path, "test"):
        instant = compactor.after_batch()
        assert instant is not None and compactor.process_id is not None
        inflight = Path(path, ".hoodie", f"{instant}.compaction.inflight")
        wait_until(inflight.exists, "the compaction to start")
        os.kill(compactor.process_id, signal.SIGKILL)
        assert compactor.wait(120)
    assert isinstance(compactor.last_error, HoodieError)
    assert "killed by SIGKILL" in str(compactor.last_error) and instant in str(compactor.last_error)
    assert [p[0].timestamp for p in pending_compactions(HoodieTable.open(path))] == [instant]
    batches.check()  # the killed attempt shows nowhere

    batches.write()
    assert compactor.after_batch() == instant, "the pending compaction is taken first"
    assert compactor.close(120)
    assert compactor.last_error is None
    assert instant in completed_compactions(path)
    assert not pending_compactions(HoodieTable.open(path))
    batches.write()
    batches.check()


def test_a_compaction_process_with_a_niceness_runs_at_a_lower_priority(tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    batches = Batches.with_logs(path, seed=19)
    compactor = AsyncCompactor(path, OPTIONS, niceness=7)
    with commit_lock(LocalStorage(), path, "test"):  # the child waits to complete, alive
        instant = compactor.after_batch()
        assert instant is not None and compactor.process_id is not None
        wait_until(Path(path, ".hoodie", f"{instant}.compaction.inflight").exists, "the compaction to start")
        assert os.getpriority(os.PRIO_PROCESS, compactor.process_id) == min(19, os.getpriority(os.PRIO_PROCESS, 0) + 7)
    assert compactor.close(120) and compactor.last_error is None
    batches.check()


def test_a_failed_compaction_process_is_a_warning_with_its_error(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    path = str(tmp_path / "t")
    Batches.with_logs(path, seed=3)
    compactor = AsyncCompactor(path, {**OPTIONS, "hoodie.compact.inline.max.delta.commits": "1000"})
    instant = schedule_now(path)
    _, plan = pending_compactions(HoodieTable.open(path))[0]
    op = plan.operations[0]
    Path(path, op.partition_path, op.log_files[0]).unlink()  # a log the plan names is gone
    with caplog.at_level(logging.WARNING, logger="hoodie.services.async_compaction"):
        assert compactor.after_batch() == instant
        assert compactor.close(120)
    assert isinstance(compactor.last_error, DamagedTableError), repr(compactor.last_error)
    assert any(f"async compaction {instant}" in r.getMessage() and "failed" in r.getMessage() for r in caplog.records)
    assert [p[0].timestamp for p in pending_compactions(HoodieTable.open(path))] == [instant]


def test_a_write_that_saw_the_compaction_pending_commits_after_its_completion(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The compaction completes in another process between the write's planning and its
    commit: the write's logs are on the slices after the compaction, so it commits."""
    path = str(tmp_path / "t")
    batches = Batches.with_logs(path, seed=5)
    compactor = AsyncCompactor(path, {**OPTIONS, "hoodie.compact.inline.max.delta.commits": "1000"})
    instant = schedule_now(path)
    real_commit = transaction.WriteTransaction.commit
    outcomes: list[BaseException | None] = []

    def compaction_completes_first(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        compact_in_child(path, instant, outcomes)
        return real_commit(self, *args, **kwargs)

    monkeypatch.setattr(transaction.WriteTransaction, "commit", compaction_completes_first)
    batches.update(30, 1000)  # the file groups the compaction rewrites
    monkeypatch.undo()
    assert outcomes == [None]
    assert instant in completed_compactions(path)
    assert compactor.after_batch() is None
    batches.check()


def test_a_write_that_did_not_see_the_compaction_is_refused_when_it_completed_first(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Only a compaction the write saw pending is let through: one scheduled and completed
    after the write loaded the table (its logs planned onto the slices before it, which the
    compaction's base files would hide) makes the write a conflict, and nothing is lost."""
    path = str(tmp_path / "t")
    batches = Batches.with_logs(path, seed=6)
    real_begin = transaction.WriteTransaction.begin.__func__  # type: ignore[attr-defined]
    instants: list[str] = []
    outcomes: list[BaseException | None] = []

    def compaction_first(cls, *args, **kwargs):  # type: ignore[no-untyped-def]
        instants.append(schedule_now(path))
        compact_in_child(path, instants[0], outcomes)
        return real_begin(cls, *args, **kwargs)

    monkeypatch.setattr(transaction.WriteTransaction, "begin", classmethod(compaction_first))
    stored = dict(batches.model.rows)
    rows = [{**stored[k], "ts": 2000, "note": "lost?"} for k in list(stored)[:30]]
    with pytest.raises(ConcurrentWriteError) as caught:
        hoodie.write(to_arrow(rows), path, {**OPTIONS, "hoodie.datasource.write.operation": "upsert"})
    monkeypatch.undo()
    assert outcomes == [None]
    assert f"write {instants[0]} of another writer completed" in str(caught.value)
    assert instants[0] in completed_compactions(path)
    batches.check()


def test_a_request_that_cannot_be_sent_starts_no_process(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    started: list[object] = []
    monkeypatch.setattr(compaction_process.subprocess, "Popen", lambda *a, **k: started.append(a))
    with pytest.raises(TypeError, match="not JSON serializable"):
        CompactionProcess(str(tmp_path / "t"), {"hoodie.some.option": object()})
    assert started == [], "a child started, waiting for a request that never comes"


def test_where_the_compaction_runs() -> None:
    assert AsyncCompactor("/data/t", {}).separate_process
    assert not AsyncCompactor("memory://t", {}).separate_process, "another process would see another memory"
    assert not AsyncCompactor("/data/t", {}, LocalEngine()).separate_process
    with pytest.raises(ConfigError, match="LocalEngine"):
        AsyncCompactor("/data/t", {}, LocalEngine(), separate_process=True)
    with pytest.raises(ConfigError, match="niceness of 5 needs the compaction of memory://t in a process of its own"):
        AsyncCompactor("memory://t", {}, niceness=5)
    with pytest.raises(ConfigError, match="0 to 19 .*got 20"):
        AsyncCompactor("/data/t", {}, niceness=20)
    with pytest.raises(ConfigError, match="background priority needs the compaction of memory://t in a process of its own"):
        AsyncCompactor("memory://t", {}, background=True)
    with pytest.raises(ConfigError, match="SCHED_IDLE.*niceness 3"):
        AsyncCompactor("/data/t", {}, niceness=3, background=True)


def test_an_ending_interpreter_waits_for_its_compaction_process(tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    batches = Batches.with_logs(path, seed=13)
    script = textwrap.dedent(
        """
        import json, sys
        from hoodie.services.async_compaction import AsyncCompactor
        compactor = AsyncCompactor(sys.argv[1], json.loads(sys.argv[2]))
        print(compactor.after_batch(), compactor.process_id)
        """
    )  # and the script ends at once, without close()
    done = subprocess.run([sys.executable, "-c", script, path, json.dumps(OPTIONS)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    instant, child = done.stdout.split()
    assert instant in completed_compactions(path)
    with pytest.raises(ProcessLookupError):
        os.kill(int(child), 0)  # gone, not left behind
    batches.check()


def test_a_compaction_process_whose_writer_was_killed_finishes_and_says_so(tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    batches = Batches.with_logs(path, seed=17)
    script = textwrap.dedent(
        """
        import json, os, signal, sys
        from hoodie.services.async_compaction import AsyncCompactor
        compactor = AsyncCompactor(sys.argv[1], json.loads(sys.argv[2]))
        print(compactor.after_batch(), flush=True)
        os.kill(os.getpid(), signal.SIGKILL)
        """
    )
    # the child shares the writer's standard error: the run ends once both closed it
    done = subprocess.run([sys.executable, "-c", script, path, json.dumps(OPTIONS)], capture_output=True, text=True, timeout=300)
    assert done.returncode == -signal.SIGKILL, done.stderr
    instant = done.stdout.strip()
    assert f"the process that started compaction {instant} of {path}" in done.stderr and "goes on to its end alone" in done.stderr
    assert instant in completed_compactions(path)
    batches.check()


def test_one_compaction_process_runs_the_compactions_one_after_another(tmp_path: Path) -> None:
    """The child stays up between compactions (no interpreter start, no imports again),
    and ends with close()."""
    path = str(tmp_path / "t")
    batches = Batches.with_logs(path, seed=23)
    compactor = AsyncCompactor(path, OPTIONS)
    children, instants = [], []
    for ts in (600, 700):
        instants.append(compactor.after_batch())
        children.append(compactor.process_id)
        assert compactor.wait(120) and compactor.last_error is None
        batches.update(30, ts)
        batches.update(30, ts + 1)  # hoodie.compact.inline.max.delta.commits=2: due again
    assert None not in instants and None not in children
    assert children[0] == children[1], "a new process for the second compaction"
    assert set(instants) <= set(completed_compactions(path))
    assert compactor.close(120)
    with pytest.raises(ProcessLookupError):
        os.kill(children[0], 0)  # ended by close(), not left behind
    batches.check()


def test_a_background_compaction_process_runs_under_sched_idle_from_its_start(tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    batches = Batches.with_logs(path, seed=29)
    compactor = AsyncCompactor(path, OPTIONS, background=True)
    with commit_lock(LocalStorage(), path, "test"):  # the child waits to complete, alive
        instant = compactor.after_batch()
        assert instant is not None and compactor.process_id is not None
        assert os.sched_getscheduler(compactor.process_id) == os.SCHED_IDLE
        wait_until(Path(path, ".hoodie", f"{instant}.compaction.inflight").exists, "the compaction to start")
    assert compactor.close(120) and compactor.last_error is None
    assert instant in completed_compactions(path)
    batches.check()


def test_a_priority_the_system_refuses_is_an_error_and_leaves_no_process(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    children: list[subprocess.Popen] = []
    real_popen = subprocess.Popen

    def popen(*args, **kwargs):  # type: ignore[no-untyped-def]
        children.append(real_popen(*args, **kwargs))
        return children[-1]

    def refused(*args: object) -> None:
        raise PermissionError(1, "Operation not permitted")

    monkeypatch.setattr(compaction_process.subprocess, "Popen", popen)
    monkeypatch.setattr(compaction_process.os, "sched_setscheduler", refused)
    with pytest.raises(ConfigError, match="CPU priority asked for \\(SCHED_IDLE\\).*not permitted"):
        CompactionProcess(str(tmp_path / "t"), OPTIONS, background=True)
    assert len(children) == 1 and children[0].poll() is not None, "a child left running"


def test_the_batches_process_does_not_check_the_metadata_table_after_each_batch(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Scheduling completes nothing: the check of the metadata table (and its rebuild when
    another writer left it unusable) is the compaction run's, in the child, not the
    parent's after every batch."""
    from hoodie.services import opening

    path = str(tmp_path / "t")
    batches = Batches.with_logs(path, seed=31)
    checked: list[str] = []
    real = opening.prepare_for_services
    monkeypatch.setattr(opening, "prepare_for_services", lambda table, settings: checked.append(table.base_path) or real(table, settings))
    with AsyncCompactor(path, OPTIONS) as compactor:
        instant = compactor.after_batch()
        assert instant is not None and compactor.wait(120) and compactor.last_error is None
        assert compactor.after_batch() is None, "nothing due right after a compaction"
    assert checked == [], "the batches' process checked the metadata table"
    assert instant in completed_compactions(path)
    batches.check()


def test_a_background_thread_holds_the_commit_lock_at_the_lowest_normal_priority() -> None:
    """Priority inversion: a SCHED_IDLE holder of the commit lock would make the batches'
    commits wait while other processes keep the cores busy."""
    seen: dict[str, int] = {}

    def background_thread() -> None:
        os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))
        with compaction_process.out_of_idle_policy():
            seen["inside"] = os.sched_getscheduler(0)
            seen["niceness"] = os.getpriority(os.PRIO_PROCESS, threading.get_native_id())
        seen["after"] = os.sched_getscheduler(0)

    def normal_thread() -> None:
        with compaction_process.out_of_idle_policy():
            seen["normal"] = os.sched_getscheduler(0)

    for target in (background_thread, normal_thread):
        thread = threading.Thread(target=target)
        thread.start()
        thread.join()
    assert seen == {"inside": os.SCHED_OTHER, "niceness": 19, "after": os.SCHED_IDLE, "normal": os.SCHED_OTHER}
    assert os.sched_getscheduler(0) == os.SCHED_OTHER, "this thread untouched"
