"""A path whose scheme hoodie cannot open is one short error line naming the scheme and
what is missing, from the Python API (a :class:`StorageError`) and the CLI (no
traceback): S3 without its library, HDFS without Java and libhdfs, unknown schemes."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pytest

import hoodie
from hoodie.errors import StorageError

ROOT = Path(__file__).resolve().parents[2]
S3_MISSING = "s3:// paths need the Python package s3fs, which is not installed (pip install s3fs)"
HIDE_S3FS = "import sys; sys.modules['s3fs'] = None  # as if s3fs were not installed\n"


@pytest.fixture
def without_s3fs(monkeypatch: pytest.MonkeyPatch) -> None:
    """Importing s3fs fails, whether or not it is installed (fsspec imports it on use)."""
    monkeypatch.setitem(sys.modules, "s3fs", None)


def test_s3_without_its_library_from_the_api(without_s3fs: None) -> None:
    with pytest.raises(StorageError) as read:
        hoodie.read("s3://bucket/x")
    assert str(read.value) == S3_MISSING
    with pytest.raises(StorageError, match="pip install s3fs"):
        hoodie.write(pa.table({"id": [1]}), "s3://bucket/x", {"hoodie.table.name": "t", "hoodie.datasource.write.recordkey.field": "id"})
    with pytest.raises(StorageError, match="pip install s3fs"):
        hoodie.HoodieTable.open("s3://bucket/x")


def test_an_unknown_scheme() -> None:
    with pytest.raises(StorageError) as read:
        hoodie.read("nosuch://bucket/x")
    assert str(read.value) == "unsupported storage scheme nosuch:// (fsspec knows no such protocol)"


def _run(code: str, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), **(env or {})}
    return subprocess.run([sys.executable, "-c", code, *args], env=env, capture_output=True, text=True, timeout=300)


CLI = "import sys; from hoodie.cli.main import app; app(sys.argv[1:], prog_name='hoodie')\n"


def _one_line_error(result: subprocess.CompletedProcess[str]) -> str:
    assert result.returncode == 1, result.stderr
    assert result.stdout == ""
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    assert len(lines[0]) < 200, lines[0]
    return lines[0][len("error: "):]


def test_s3_without_its_library_from_the_cli() -> None:
    """The issue's reproduction: ``hoodie read s3://bucket/x`` (a 122-line traceback)."""
    assert _one_line_error(_run(HIDE_S3FS + CLI, "read", "s3://bucket/x")) == S3_MISSING


def test_hdfs_without_java_from_the_cli_and_the_api(tmp_path: Path) -> None:
    """``hoodie read hdfs://nn/x`` printed one 15 KB line (pyarrow's every attempt to find
    libjvm); now one short line says what HDFS needs."""
    no_java = {"JAVA_HOME": str(tmp_path / "no-java"), "HADOOP_HOME": str(tmp_path / "no-hadoop")}
    message = _one_line_error(_run(CLI, "read", "hdfs://nn/x", env=no_java))
    assert message.startswith("hdfs:// storage could not be opened: ")
    assert message.endswith("(pyarrow's HDFS needs Java and Hadoop's libhdfs: JAVA_HOME, HADOOP_HOME)")
    api = _run("import hoodie\ntry:\n    hoodie.read('hdfs://nn/x')\nexcept hoodie.HoodieError as e:\n    print(type(e).__name__, e)", env=no_java)
    assert api.returncode == 0, api.stderr
    assert api.stdout.strip() == f"StorageError {message}"
