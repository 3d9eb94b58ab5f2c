"""Without the shared conformance data every test over it is skipped with the reason (the
folder that is missing and ``HOODIE_SHARED_DIR``), never pytest's bare "got empty
parameter set"."""
from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# every module with a test parametrized over the conformance tables, base files or log files
PARAMETRIZED_OVER_SHARED_DATA = [
    "tests/formats/test_avro_schema.py",
    "tests/formats/test_bloom.py",
    "tests/formats/test_log_format.py",
    "tests/query/test_conformance_cow.py",
    "tests/query/test_conformance_mor.py",
    "tests/query/test_conformance_reads.py",
    "tests/spark/test_mor_spark_more.py",
    "tests/spark/test_read.py",
    "tests/writer/test_keygen_conformance.py",
]


def test_every_skip_without_shared_data_says_why(tmp_path: Path) -> None:
    empty = tmp_path / "shared"
    empty.mkdir()
    env = {**os.environ, "HOODIE_SHARED_DIR": str(empty)}
    # only the tests over shared data run (the Spark session is never started for them)
    result = subprocess.run(
        [sys.executable, "-m", "pytest", *PARAMETRIZED_OVER_SHARED_DATA, "-q", "-rs", "-p", "no:cacheprovider",
         "-k", "no-conformance-data or conformance"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=900,
    )
    out = result.stdout
    assert result.returncode == 0, out + result.stderr
    reasons = [line for line in out.splitlines() if line.startswith("SKIPPED")]
    assert "got empty parameter set" not in out, out
    missing = f"{empty / 'conformance'} not found (set HOODIE_SHARED_DIR)"
    parametrized = [r for r in reasons if "no conformance" in r]
    # one skipped case per parametrized test (16 of them), each naming what is missing
    assert sum(int(re.match(r"SKIPPED \[(\d+)\]", r).group(1)) for r in parametrized) >= 16, out  # type: ignore[union-attr]
    assert all(missing in r for r in parametrized), out
    # the fixtures' skips (and any other) name the folder too
    assert all(str(empty) in r for r in reasons), out
