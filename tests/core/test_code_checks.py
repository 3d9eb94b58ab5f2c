"""The drawing as a test: the layers of ``docs/architecture.md`` (import-linter), the type
checker (mypy) and the linter (ruff), with their settings in ``pyproject.toml``, run on
the whole package as part of the suite. A deliberate upward import in a copy of the
package shows the layer contract is not a test that cannot fail."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent


def run(tool: str, *args: str, cwd: Path = ROOT, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(BIN / tool), *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=900)


def test_the_layers_hold() -> None:
    result = run("lint-imports", "--config", str(ROOT / "pyproject.toml"))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 broken" in result.stdout


def test_an_upward_import_breaks_the_layers(tmp_path: Path) -> None:
    """storage/ (a foundation) importing cli/ (the edge) is reported, module and line."""
    package = tmp_path / "src" / "hoodie"
    shutil.copytree(ROOT / "src" / "hoodie", package, ignore=shutil.ignore_patterns("__pycache__"))
    base = package / "storage" / "base.py"
    base.write_text(base.read_text() + "\nimport hoodie.cli.main  # upward, on purpose\n")
    env = {**os.environ, "PYTHONPATH": str(tmp_path / "src")}
    result = run("lint-imports", "--config", str(ROOT / "pyproject.toml"), "--no-cache", cwd=tmp_path, env=env)
    assert result.returncode != 0, result.stdout
    assert "hoodie.storage is not allowed to import hoodie.cli" in result.stdout, result.stdout
    assert "hoodie.storage.base -> hoodie.cli.main" in result.stdout, result.stdout


def test_types_check() -> None:
    result = run("mypy", "--config-file", str(ROOT / "pyproject.toml"))
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.parametrize("what", ["src", "tests", "bench"])
def test_lint_is_clean(what: str) -> None:
    result = run("ruff", "check", "--no-cache", what)
    assert result.returncode == 0, result.stdout + result.stderr
