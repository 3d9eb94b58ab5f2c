"""Fixtures for the CLI tests: a real copy-on-write table written in three commits, tables
for the table-service commands (merge-on-read with log files, copy-on-write with a longer
history; inline cleaning and archival off), and a runner that invokes the ``hoodie`` typer
app in-process."""
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


#: for tests about a table without a metadata table (writes keep one by default)
WITHOUT_MDT = {"hoodie.metadata.enable": "false"}


def write_three_commits(path: Path, extra: dict[str, str] | None = None) -> WrittenTable:
    """Commit 1 inserts ids 1-4 (partitions a, b); commit 2 updates id 1 and inserts id 5;
    commit 3 deletes id 2. The snapshot then holds ids 1, 3, 4, 5. ``extra``: more options."""
    base = str(path)
    options = {**OPTIONS, **(extra or {})}
    c1 = hoodie.write(
        pa.table({"id": [1, 2, 3, 4], "p": ["a", "a", "b", "b"], "ts": [1, 1, 1, 1], "v": ["x", "y", "z", "w"]}),
        base,
        options,
    )
    c2 = hoodie.write(pa.table({"id": [1, 5], "p": ["a", "b"], "ts": [2, 2], "v": ["X", "N"]}), base, options)
    c3 = hoodie.write(
        pa.table({"id": [2], "p": ["a"], "ts": [3], "v": ["y"]}),
        base,
        {**options, "hoodie.datasource.write.operation": "delete"},
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


@pytest.fixture
def table_without_mdt(tmp_path: Path) -> WrittenTable:
    """The three commits written with ``hoodie.metadata.enable=false``: no metadata table."""
    return write_three_commits(tmp_path / "t", WITHOUT_MDT)


Invoke = Callable[..., Result]


# Table-service tests decide themselves when services run.
NO_INLINE_SERVICES = {"hoodie.clean.automatic": "false", "hoodie.archive.automatic": "false"}
MOR_OPTIONS = {**OPTIONS, **NO_INLINE_SERVICES, "hoodie.datasource.write.table.type": "MERGE_ON_READ"}
COW_OPTIONS = {**OPTIONS, **NO_INLINE_SERVICES}


@dataclass(frozen=True)
class History:
    """A table and the instants of its commits, oldest first."""

    path: str
    commits: list[str]


def write_history(path: Path, options: dict[str, str], updates: int) -> History:
    """Commit 1 inserts ids 1-4 (partitions a, b); each of the ``updates`` commits after
    it updates ids 1 (in a) and 3 (in b). In a merge-on-read table every update appends a
    log file to both file groups; in a copy-on-write table it adds a slice to both."""
    base = str(path)
    commits = [
        hoodie.write(pa.table({"id": [1, 2, 3, 4], "p": ["a", "a", "b", "b"], "ts": [1, 1, 1, 1], "v": ["x", "y", "z", "w"]}), base, options)
    ]
    for i in range(updates):
        commits.append(hoodie.write(pa.table({"id": [1, 3], "p": ["a", "b"], "ts": [i + 2] * 2, "v": [f"u{i}"] * 2}), base, options))
    return History(base, commits)


def rows(path: str, options: dict[str, str] | None = None) -> list[dict]:
    """The table's data rows (no meta columns), sorted by id."""
    data = hoodie.read(path, options or {})
    return data.select(["id", "p", "ts", "v"]).sort_by("id").to_pylist()


@pytest.fixture
def mor(tmp_path: Path) -> History:
    """A merge-on-read table: one commit with base files, then 2 delta commits of log files
    (3 delta commits in all)."""
    return write_history(tmp_path / "mor", MOR_OPTIONS, 2)


@pytest.fixture
def cow(tmp_path: Path) -> History:
    """A copy-on-write table of 5 commits, 5 slices per file group."""
    return write_history(tmp_path / "cow", COW_OPTIONS, 4)


@pytest.fixture
def cow_without_mdt(tmp_path: Path) -> History:
    """``cow`` written with ``hoodie.metadata.enable=false``: its archival is not held
    back until a metadata table compacts."""
    return write_history(tmp_path / "cow", {**COW_OPTIONS, **WITHOUT_MDT}, 4)


@pytest.fixture
def mor_without_mdt(tmp_path: Path) -> History:
    """``mor`` written with ``hoodie.metadata.enable=false``."""
    return write_history(tmp_path / "mor", {**MOR_OPTIONS, **WITHOUT_MDT}, 2)


@pytest.fixture
def cli() -> Invoke:
    """``cli("timeline", path)`` runs ``hoodie timeline <path>`` in-process; the result
    keeps stdout and stderr apart. Exceptions the app does not handle are re-raised.
    ``input=`` is what the command reads on stdin (answers to prompts)."""

    def invoke(*args: str, input: str | None = None) -> Result:
        result = CliRunner().invoke(app, list(args), input=input)
        if result.exception is not None and not isinstance(result.exception, SystemExit):
            raise result.exception
        return result

    return invoke


def one_line_error(result: Result) -> str:
    """The message of a failed command, checked to be one ``error:`` line on stderr with
    exit code 1 and nothing on stdout."""
    assert result.exit_code == 1, (result.exit_code, result.output)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    assert "Traceback" not in result.stderr
    assert result.stdout == ""
    return lines[0][len("error: "):]


@pytest.fixture(name="rows")
def rows_fixture() -> Callable[..., list[dict]]:
    """:func:`rows`, for tests (conftest is not importable under --import-mode=importlib)."""
    return rows


@pytest.fixture(name="one_line_error")
def one_line_error_fixture() -> Callable[[Result], str]:
    """:func:`one_line_error`, for tests."""
    return one_line_error


@pytest.fixture(name="write_history")
def write_history_fixture() -> Callable[..., History]:
    """:func:`write_history`, for tests that build their own table."""
    return write_history


def upsert(path: str, ids: list[int], ts: int, value: str) -> str:
    """Commit an upsert of ``ids`` to the table at ``path`` (ids 1 and 2 in partition a,
    the others in b, as :func:`write_history` wrote them), with the options of its table
    type, and without a metadata table when the table has none; returns the instant."""
    table = hoodie.HoodieTable.open(path)
    options = MOR_OPTIONS if table.table_type == "MERGE_ON_READ" else COW_OPTIONS
    options = options if table.config.metadata_partitions else {**options, **WITHOUT_MDT}
    parts = ["a" if i in (1, 2) else "b" for i in ids]
    return hoodie.write(pa.table({"id": ids, "p": parts, "ts": [ts] * len(ids), "v": [value] * len(ids)}), path, options)


@pytest.fixture(name="upsert")
def upsert_fixture() -> Callable[..., str]:
    """:func:`upsert`, for tests."""
    return upsert
