"""``hoodie streamer``: the command in process (typer's runner) and as a process that is
stopped by a signal, or killed with SIGKILL at random points and started again."""
from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from landing import STREAM_OPTIONS, land, model, table_rows, trips
from readers import hudi_rs_table
from typer.testing import CliRunner

import hoodie
from hoodie.cli.main import app
from hoodie.table import HoodieTable


def _args(src: Path, target: Path, *extra: str) -> list[str]:
    opts = [f"-o{k}={v}" for k, v in {**STREAM_OPTIONS, "hoodie.streamer.source.dfs.root": str(src)}.items()]
    return ["streamer", str(target), "--source-class", "json", *opts, *extra]


def _commits(target: Path) -> int:
    try:
        return len(HoodieTable.open(str(target)).timeline.completed_writes())
    except hoodie.HoodieError:
        return 0


def test_cli_runs_one_batch_and_shows_rows_and_lag(tmp_path):
    src, target = tmp_path / "in", tmp_path / "trips"
    landed = [trips(range(5), 1), trips(range(3, 8), 2)]
    land(src, "a.json", landed[0], mtime_ms=1000)
    land(src, "b.json", landed[1], mtime_ms=2000)
    runner = CliRunner()
    first = runner.invoke(app, _args(src, target, "--source-limit", "1"))
    assert first.exit_code == 0, first.output
    assert "batch 1" in first.stdout and "5 rows" in first.stdout and "1 json file" in first.stdout
    assert "lag: 1 file" in first.stdout
    second = runner.invoke(app, _args(src, target))
    assert "5 rows" in second.stdout and "lag: 0 files" in second.stdout
    third = runner.invoke(app, _args(src, target))
    assert third.exit_code == 0 and "up to date" in third.stderr
    assert _commits(target) == 2
    assert table_rows(hoodie.read(str(target))) == model(landed) == table_rows(hudi_rs_table(target))


def test_cli_flags_and_props_file_become_options(tmp_path):
    src, target = tmp_path / "in", tmp_path / "trips"
    land(src, "a.csv", trips(range(4), 1), "csv", mtime_ms=1000)
    props = tmp_path / "streamer.properties"
    props.write_text(
        "# Hudi's streamer properties\n"
        f"hoodie.streamer.source.dfs.root={src}\nhoodie.datasource.write.recordkey.field=uuid\n"
        "hoodie.datasource.write.partitionpath.field=city\n"
    )
    result = CliRunner().invoke(app, [
        "streamer", str(target), "--source-class", "org.apache.hudi.utilities.sources.CsvDFSSource", "--props", str(props),
        "--target-table", "rides", "--table-type", "MERGE_ON_READ", "--source-ordering-field", "ts", "--op", "insert",
    ])
    assert result.exit_code == 0, result.output
    table = HoodieTable.open(str(target))
    assert table.config.table_type == "MERGE_ON_READ" and table.config.name == "rides"
    assert len(hoodie.read(str(target))) == 4


def test_cli_bad_values_are_one_line_errors(tmp_path):
    runner = CliRunner()
    bad_source = runner.invoke(app, ["streamer", str(tmp_path / "t"), "--source-class", "kafka"])
    assert bad_source.exit_code == 1 and "unknown streamer source 'kafka'" in bad_source.stderr
    bad_option = runner.invoke(app, ["streamer", str(tmp_path / "t"), "--source-class", "json", "-o", "hoodie.streamer.source.dfs.rot=x"])
    assert bad_option.exit_code == 1 and "did you mean hoodie.streamer.source.dfs.root" in bad_option.stderr
    bad_engine = runner.invoke(app, _args(tmp_path, tmp_path / "t", "--engine", "flink"))
    assert bad_engine.exit_code == 1 and "unknown streamer engine 'flink'" in bad_engine.stderr


def _start(src: Path, target: Path, *extra: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "hoodie.cli", *_args(src, target, "--continuous", *extra)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )


def _wait_for(predicate, proc: subprocess.Popen[str], seconds: float = 120) -> None:
    deadline = time.monotonic() + seconds
    while not predicate():
        if proc.poll() is not None:
            raise AssertionError(f"streamer exited with {proc.returncode}: {proc.stderr.read() if proc.stderr else ''}")
        if time.monotonic() > deadline:
            proc.kill()
            raise AssertionError("streamer made no progress")
        time.sleep(0.05)


def test_sigterm_stops_a_continuous_job_cleanly_between_batches(tmp_path):
    src, target = tmp_path / "in", tmp_path / "trips"
    landed = [trips(range(i * 3, i * 3 + 3), i + 1) for i in range(3)]
    for i, rows in enumerate(landed):
        land(src, f"f{i}.json", rows, mtime_ms=1000 + i)
    proc = _start(src, target, "--source-limit", "1")
    _wait_for(lambda: _commits(target) >= 1, proc)
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    assert "stopped after" in err
    table = HoodieTable.open(str(target))
    assert not table.timeline.pending(), "no batch was left half done"
    done = len(table.timeline.completed_writes())
    assert table_rows(hoodie.read(str(target))) == model(landed[:done])


@pytest.mark.slow
def test_sigkill_at_random_points_then_restart_loses_no_batch_and_applies_none_twice(tmp_path):
    # inserts (no lookup of existing keys): a batch applied twice would show its rows twice
    src, target = tmp_path / "in", tmp_path / "trips"
    rng = random.Random(30)
    # enough files that five kills, each after a batch or a few, leave work for the restart
    # however fast the batches go
    landed = [trips(range(i * 5, i * 5 + 5), i + 1) for i in range(60)]
    for i, rows in enumerate(landed):
        land(src, f"f{i:02}.json", rows, mtime_ms=1000 + i)
    kills = 0
    while kills < 5 and _commits(target) < len(landed):
        before = _commits(target)
        proc = _start(src, target, "--source-limit", "1", "--op", "insert")
        _wait_for(lambda before=before: _commits(target) > before, proc)
        time.sleep(rng.uniform(0, 0.3))  # somewhere in a later batch, or between batches
        proc.send_signal(signal.SIGKILL)
        proc.communicate(timeout=60)
        kills += 1
    assert kills >= 2 and _commits(target) < len(landed), "the job was killed before it ended"
    while True:
        finish = subprocess.run([sys.executable, "-m", "hoodie.cli", *_args(src, target, "--op", "insert")], capture_output=True, text=True, timeout=300)
        assert finish.returncode == 0, finish.stderr
        if "up to date" in finish.stderr:
            break
    every_row = sorted(tuple(r[c] for c in ("uuid", "city", "ts", "fare")) for rows in landed for r in rows)
    assert table_rows(hoodie.read(str(target))) == every_row
    assert table_rows(hudi_rs_table(target)) == every_row


def test_cli_options_override_props_and_flags_override_both(tmp_path):
    from hoodie.cli.streamer import settings_from

    props = tmp_path / "p.properties"
    props.write_text("hoodie.table.name=from_props\nhoodie.datasource.write.operation=insert\n")
    settings = settings_from(str(tmp_path / "t"), "json", str(props), ["hoodie.datasource.write.operation=bulk_insert"],
                             {"--target-table": "from_flag"}, None, None)
    assert settings.options["hoodie.table.name"] == "from_flag"
    assert settings.options["hoodie.datasource.write.operation"] == "bulk_insert"
    twice = CliRunner().invoke(app, ["streamer", str(tmp_path / "t"), "--source-class", "json", "-o", "hoodie.table.name=a", "-o", "hoodie.table.name=b"])
    assert twice.exit_code == 1 and "given twice" in twice.stderr


def test_props_file_by_a_storage_url_and_a_missing_one_named(tmp_path):
    from hoodie.cli.streamer import read_props

    props = tmp_path / "p.properties"
    props.write_text("! comment\nhoodie.table.name=by_url\n")
    assert read_props(props.as_uri()) == ["hoodie.table.name=by_url"]
    missing = CliRunner().invoke(app, ["streamer", str(tmp_path / "t"), "--source-class", "json", "--props", str(tmp_path / "none.properties")])
    assert missing.exit_code == 1 and f"cannot read --props {tmp_path / 'none.properties'}" in missing.stderr


def test_cli_bucket_index_options_pass_through_and_compaction_keeps_the_buckets(tmp_path):
    from hoodie.index.bucket import BucketSpec, bucket_ids, bucket_of_file_id

    src, target = tmp_path / "in", tmp_path / "trips"
    landed = [trips(range(30), 1), trips(range(10, 40), 2)]
    land(src, "a.json", landed[0], mtime_ms=1000)
    land(src, "b.json", landed[1], mtime_ms=2000)
    bucket = ["-o", "hoodie.index.type=BUCKET", "-o", "hoodie.bucket.index.num.buckets=3", "--table-type", "MERGE_ON_READ"]
    runner = CliRunner()
    for _ in landed:
        result = runner.invoke(app, _args(src, target, "--source-limit", "1", *bucket))
        assert result.exit_code == 0, result.output
    refused = runner.invoke(app, _args(src, target, *bucket, "-o", "hoodie.index.bucket.engine=CONSISTENT_HASHING"))
    assert refused.exit_code == 1 and "hoodie.index.bucket.engine" in refused.stderr and "CONSISTENT_HASHING" in refused.stderr

    def groups() -> dict[str, list[str]]:
        view = HoodieTable.open(str(target)).view()
        return {p: sorted(g.file_id for g in view.file_groups(p)) for p in view.all_partition_paths()}

    before = groups()
    for command in ("schedule", "run"):
        done = runner.invoke(app, ["compaction", command, str(target), "--force"] if command == "schedule" else ["compaction", command, str(target)])
        assert done.exit_code == 0, done.output
    assert groups() == before and all(len(ids) <= 3 for ids in before.values())
    table = hoodie.read(str(target))
    assert table_rows(table) == model(landed) == table_rows(hudi_rs_table(target))
    files = [bucket_of_file_id(f) for f in table.column("_hoodie_file_name").to_pylist()]
    assert files == bucket_ids(table.column("_hoodie_record_key"), BucketSpec(3, ("uuid",))).tolist()
    assert all(not s.log_files for s in HoodieTable.open(str(target)).view().latest_slices_all())  # compacted
