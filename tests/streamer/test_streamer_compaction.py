"""A merge-on-read target compacted as Apache Hudi's streamer compacts it: inline in a job
run once, asynchronously beside the batches in a continuous job (in an OS process of its
own with the in-process engine), never with ``--disable-compaction``; an explicit
``hoodie.compact.inline`` is kept."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

from landing import STREAM_OPTIONS, land, model, table_rows, trips
from readers import hudi_rs_table
from typer.testing import CliRunner

import hoodie
from hoodie.cli.main import app
from hoodie.streamer import ArrowEngine, BatchResult, Streamer, StreamerSettings
from hoodie.table import HoodieTable

MOR = {"hoodie.datasource.write.table.type": "MERGE_ON_READ", "hoodie.compact.inline.max.delta.commits": "2"}


def _landed(src: Path, files: int) -> list[list[dict]]:
    landed = [trips(range(6), i + 1) for i in range(files)]  # every batch updates every key: logs
    for i, rows in enumerate(landed):
        land(src, f"f{i}.json", rows, mtime_ms=1000 + i)
    return landed


def _streamer(src: Path, target: Path, compaction: bool = True, **options: str) -> Streamer:
    opts = {**STREAM_OPTIONS, **MOR, "hoodie.streamer.source.dfs.root": str(src), **options}
    return Streamer(StreamerSettings(str(target), "json", opts, source_limit=1, compaction=compaction), ArrowEngine())


def _compactions(target: Path) -> list[str]:
    timeline = HoodieTable.open(str(target)).timeline
    return [i.timestamp for i in timeline.completed(["commit"]) if timeline.commit_metadata(i).compacted]


def _check(target: Path, landed: list[list[dict]]) -> None:
    assert not HoodieTable.open(str(target)).timeline.pending(), "a compaction or batch left pending"
    assert table_rows(hoodie.read(str(target))) == model(landed) == table_rows(hudi_rs_table(target))


def test_a_job_run_once_compacts_inline_when_due(tmp_path: Path) -> None:
    src, target = tmp_path / "in", tmp_path / "trips"
    landed = _landed(src, 4)
    streamer = _streamer(src, target)
    for _ in landed:
        (result,) = streamer.run(continuous=False)
        assert result.compaction is None and streamer.compactor is None, "run once: nothing asynchronous"
    assert _compactions(target), "a compaction ran inline after a batch"
    _check(target, landed)


def test_a_continuous_job_compacts_beside_its_batches_in_a_process_of_its_own(tmp_path: Path) -> None:
    src, target = tmp_path / "in", tmp_path / "trips"
    landed = _landed(src, 6)
    streamer = _streamer(src, target)
    stop = threading.Event()
    children: list[int | None] = []

    def on_batch(result: BatchResult | None) -> None:
        assert streamer.compactor is not None
        children.append(streamer.compactor.process_id)
        if result is None or result.number == len(landed):
            stop.set()

    results = streamer.run(continuous=True, stop=stop, on_batch=on_batch)
    assert len(results) == len(landed)
    started = [r.compaction for r in results if r.compaction is not None]
    assert started, "no compaction started beside the batches"
    assert {os.getpid()}.isdisjoint(c for c in children if c is not None), "compacted in the batches' process"
    assert not streamer.compactor.running(), "the stopped job waited for its compaction"
    assert set(started) <= set(_compactions(target))
    assert all(HoodieTable.open(str(target)).timeline.commit_metadata(i).extra_metadata.get("deltastreamer.checkpoint.key") is None
               for i in HoodieTable.open(str(target)).timeline.completed(["commit"]))
    _check(target, landed)


def test_disable_compaction_never_compacts(tmp_path: Path) -> None:
    src, target = tmp_path / "in", tmp_path / "trips"
    landed = _landed(src, 4)
    once = _streamer(src, target, compaction=False)
    for _ in range(2):
        once.run(continuous=False)
    stop = threading.Event()
    continuous = _streamer(src, target, compaction=False)
    continuous.run(continuous=True, stop=stop, on_batch=lambda r: stop.set() if r is None or r.number == 2 else None)
    assert continuous.compactor is None and _compactions(target) == []
    _check(target, landed)


def test_an_explicit_inline_option_is_kept(tmp_path: Path) -> None:
    src, target = tmp_path / "in", tmp_path / "trips"
    landed = _landed(src, 4)
    once = _streamer(src, target, **{"hoodie.compact.inline": "false"})
    for _ in range(2):
        once.run(continuous=False)
    assert _compactions(target) == [], "hoodie.compact.inline=false given: no inline compaction"
    stop = threading.Event()
    inline = _streamer(src, target, **{"hoodie.compact.inline": "true"})
    results = inline.run(continuous=True, stop=stop, on_batch=lambda r: stop.set() if r is None or r.number == 2 else None)
    assert inline.compactor is None and all(r.compaction is None for r in results)
    assert _compactions(target), "hoodie.compact.inline=true given: inline even when continuous"
    _check(target, landed)


def test_the_cli_flag_and_a_continuous_job_that_shows_its_compactions(tmp_path: Path) -> None:
    src, target = tmp_path / "in", tmp_path / "trips"
    opts = [f"-o{k}={v}" for k, v in {**STREAM_OPTIONS, **MOR, "hoodie.streamer.source.dfs.root": str(src)}.items()]
    landed = _landed(src, 4)
    disabled = CliRunner().invoke(app, ["streamer", str(target), "--source-class", "json", *opts, "--source-limit", "1", "--disable-compaction"])
    assert disabled.exit_code == 0, disabled.output
    proc = subprocess.Popen(
        [sys.executable, "-m", "hoodie.cli", "streamer", str(target), "--source-class", "json", *opts, "--source-limit", "1", "--continuous"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    try:
        deadline = time.monotonic() + 120
        while not _compactions(target):
            assert proc.poll() is None and time.monotonic() < deadline, "no compaction completed beside the job"
            time.sleep(0.05)
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:  # a failed check leaves no job running
            proc.kill()
            proc.communicate()
    assert proc.returncode == 0, err
    assert "started beside the next batches" in err and "stopped after" in err
    _check(target, landed)
