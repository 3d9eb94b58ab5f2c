"""Fixtures for the CLI tests: a real copy-on-write table written in three commits, and a
runner that invokes the ``hoodie`` typer app in-process."""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa
import pytest
from typer.testing import CliRunner, Result

import hoodie
from hoodie.cli.main import app

OPTIONS = {
    "hoodie.table.name": "t",
    "hoodie.datasource.write.recordkey.field": "id",
    "hoodie.datasource.write.partitionpath.field": "p",
    "hoodie.datasource.write.precombine.field": "ts",
}


@dataclass(frozen=True)
class WrittenTable:
    """A table and the instants of its three commits: insert, upsert, delete."""

    path: str
    insert: str
    upsert: str
    delete: str


def write_three_commits(path: Path) -> WrittenTable:
    """Commit 1 inserts ids 1-4 (partitions a, b); commit 2 updates id 1 and inserts id 5;
    commit 3 deletes id 2. The snapshot then holds ids 1, 3, 4, 5."""
    base = str(path)
    c1 = hoodie.write(
        pa.table({"id": [1, 2, 3, 4], "p": ["a", "a", "b", "b"], "ts": [1, 1, 1, 1], "v": ["x", "y", "z", "w"]}),
        base,
        OPTIONS,
    )
    c2 = hoodie.write(pa.table({"id": [1, 5], "p": ["a", "b"], "ts": [2, 2], "v": ["X", "N"]}), base, OPTIONS)
    c3 = hoodie.write(
        pa.table({"id": [2], "p": ["a"], "ts": [3], "v": ["y"]}),
        base,
        {**OPTIONS, "hoodie.datasource.write.operation": "delete"},
    )
    return WrittenTable(base, c1, c2, c3)


@pytest.fixture(scope="module")
def table(tmp_path_factory: pytest.TempPathFactory) -> WrittenTable:
    """Shared by the tests of a module, which must not change it."""
    return write_three_commits(tmp_path_factory.mktemp("cli") / "t")


@pytest.fixture
def own_table(tmp_path: Path) -> WrittenTable:
    """A table of the test's own, which it may change."""
    return write_three_commits(tmp_path / "t")


Invoke = Callable[..., Result]


@pytest.fixture
def cli() -> Invoke:
    """``cli("timeline", path)`` runs ``hoodie timeline <path>`` in-process; the result
    keeps stdout and stderr apart. Exceptions the app does not handle are re-raised."""

    def invoke(*args: str) -> Result:
        result = CliRunner().invoke(app, list(args))
        if result.exception is not None and not isinstance(result.exception, SystemExit):
            raise result.exception
        return result

    return invoke
