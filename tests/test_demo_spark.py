"""The README's main command: the demo pipeline on local Spark, run as a user runs it
(its own process and Spark session), leaves a table hudi-rs reads with the trips the
demo expects."""
from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
from readers import hudi_rs_table


@pytest.mark.slow
def test_demo_on_spark(tmp_path: Path) -> None:
    path = tmp_path / "trips"
    proc = subprocess.run(
        [sys.executable, "-m", "hoodie.demo", "--path", str(path), "--batches", "4"],
        capture_output=True, text=True, timeout=600,
    )
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-4000:]
    found = re.search(r"snapshot: (\d+) trips \((\d+) expected\)", proc.stdout)
    assert found and found.group(1) == found.group(2) == "230", proc.stdout[-2000:]
    assert "incremental pull of" in proc.stdout and "DELETE" in proc.stdout
    assert hudi_rs_table(path).num_rows == 230
