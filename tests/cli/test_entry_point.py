"""The installed ``hoodie`` console script, run as a separate process."""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest


def hoodie_script() -> str:
    """The ``hoodie`` script of this interpreter's environment (else the one on PATH)."""
    beside = Path(sys.executable).parent / "hoodie"
    if beside.exists():
        return str(beside)
    found = shutil.which("hoodie")
    if found is None:
        pytest.skip("the hoodie console script is not installed (pip install -e .)")
    return found


def test_console_script(table):
    script = hoodie_script()
    timeline = subprocess.run([script, "timeline", table.path, "--json"], capture_output=True, text=True, timeout=120)
    assert timeline.returncode == 0, timeline.stderr
    assert [r["instant"] for r in json.loads(timeline.stdout)] == [table.insert, table.upsert, table.delete]

    read = subprocess.run([script, "read", table.path, "-f", "csv", "-c", "id"], capture_output=True, text=True, timeout=120)
    assert read.returncode == 0, read.stderr
    assert sorted(read.stdout.split()) == ["1", "3", "4", "5", "id"]


def test_console_script_error(tmp_path):
    missing = tmp_path / "missing"
    proc = subprocess.run([hoodie_script(), "show", str(missing)], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1
    assert proc.stderr.strip() == f"error: no Hudi table at {missing} (missing .hoodie/hoodie.properties)"
    assert "Traceback" not in proc.stderr
    assert proc.stdout == ""
