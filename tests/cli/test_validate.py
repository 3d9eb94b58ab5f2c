"""``hoodie validate``: every file of the latest slices checked against the commit
metadata; missing and damaged files are listed and the command fails, a healthy table
(hoodie's own, and every conformance table Apache Hudi wrote) passes."""
from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa

import hoodie
from hoodie import HoodieTable

MOR = {
    "hoodie.table.name": "t",
    "hoodie.datasource.write.recordkey.field": "id",
    "hoodie.datasource.write.partitionpath.field": "p",
    "hoodie.datasource.write.precombine.field": "ts",
    "hoodie.datasource.write.table.type": "MERGE_ON_READ",
}


def _damaged_table(path: Path) -> tuple[str, str, str]:
    """A merge-on-read table whose latest insert lost its base file and whose latest
    update's log file lost its last half; returns (instant, base name, log name)."""
    base = str(path)
    hoodie.write(pa.table({"id": list(range(20)), "p": ["a"] * 10 + ["b"] * 10, "ts": [1] * 20}), base, MOR)
    hoodie.write(pa.table({"id": list(range(10)), "p": ["a"] * 10, "ts": [2] * 10}), base, MOR)  # updates: a log in a
    instant = hoodie.write(pa.table({"id": [100], "p": ["c"], "ts": [1]}), base, MOR)  # an insert: a base file in c
    table = HoodieTable.open(base)
    stats = {s.partitionPath: s for i in table.timeline.completed_writes() for s in table.commit_metadata(i).write_stats()}
    base_file, log_file = path / stats["c"].path, path / stats["a"].path
    base_file.unlink()
    data = log_file.read_bytes()
    log_file.write_bytes(data[: len(data) // 2])
    return instant, base_file.name, log_file.name


def test_validate_lists_missing_and_truncated_files(tmp_path: Path, cli) -> None:
    instant, base_name, log_name = _damaged_table(tmp_path / "t")
    result = cli("validate", str(tmp_path / "t"), "--json")
    assert result.exit_code == 1
    report = json.loads(result.stdout)
    kinds = {(p["file_name"], p["kind"]) for p in report["problems"]}
    # the cut also leaves the last committed block without its end: corrupt where committed
    assert kinds == {(base_name, "missing"), (log_name, "truncated"), (log_name, "corrupt")}
    assert next(p for p in report["problems"] if p["kind"] == "missing")["instant"] == instant
    human = cli("validate", str(tmp_path / "t"))
    assert human.exit_code == 1 and base_name in human.stdout and "truncated" in human.stdout


def test_validate_passes_a_healthy_table(tmp_path: Path, cli) -> None:
    base = str(tmp_path / "t")
    hoodie.write(pa.table({"id": [1, 2], "p": ["a", "b"], "ts": [1, 1]}), base, MOR)
    hoodie.write(pa.table({"id": [1], "p": ["a"], "ts": [2]}), base, MOR)
    result = cli("validate", base, "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["ok"] is True


def test_every_conformance_table_validates(conformance_catalog, conformance_table, cli) -> None:
    for case in conformance_catalog:
        result = cli("validate", str(conformance_table(case)), "--json")
        assert result.exit_code == 0, f"{case.name}: {result.output}"


def test_the_verdict_is_on_stdout(tmp_path: Path, cli) -> None:
    """Healthy or not, what validate found is its result (stdout); stderr stays empty."""
    base = str(tmp_path / "t")
    hoodie.write(pa.table({"id": [1, 2], "p": ["a", "b"], "ts": [1, 1]}), base, MOR)
    healthy = cli("validate", base)
    assert healthy.exit_code == 0
    assert healthy.stdout == "2 file(s) of the latest slices checked: none missing or damaged\n"
    assert healthy.stderr == ""
    _, base_name, _ = _damaged_table(tmp_path / "damaged")
    damaged = cli("validate", str(tmp_path / "damaged"))
    assert damaged.exit_code == 1
    assert "problem(s) in" in damaged.stdout and base_name in damaged.stdout
    assert damaged.stderr == ""
