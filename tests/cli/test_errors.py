"""Failures end as one red line on stderr and exit code 1, never a traceback."""
from __future__ import annotations

from pathlib import Path

import pytest

import hoodie
from hoodie import __version__


@pytest.mark.parametrize("command", [["timeline"], ["show"], ["read"], ["show", "--as-of", "20240101"]])
def test_no_table_at_the_path(cli, tmp_path, command):
    missing = tmp_path / "nowhere"
    result = cli(command[0], str(missing), *command[1:])
    assert result.exit_code == 1
    assert result.stderr.strip() == f"error: no Hudi table at {missing} (missing .hoodie/hoodie.properties)"
    assert result.stdout == ""


def test_a_file_instead_of_a_table(cli, tmp_path):
    f = tmp_path / "plain.txt"
    f.write_text("x")
    result = cli("show", str(f))
    assert result.exit_code == 1
    assert str(f) in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_bad_as_of_for_show(cli, table):
    result = cli("show", table.path, "--as-of", "2024-02-30")
    assert result.exit_code == 1
    assert "invalid instant '2024-02-30' for --as-of" in result.stderr


def test_unsupported_table_version(cli, own_table):
    props = Path(own_table.path) / ".hoodie" / "hoodie.properties"
    props.write_text(props.read_text().replace("hoodie.table.version=6", "hoodie.table.version=5"))
    result = cli("timeline", own_table.path)
    assert result.exit_code == 1
    assert "table version 5 is not supported" in result.stderr


def test_incremental_begin_before_the_archived_timeline(cli, own_table):
    # Pretend the first commit was archived: an incremental pull from before the active
    # timeline cannot be answered and hoodie says which instant is unknown.
    hoodie_dir = Path(own_table.path) / ".hoodie"
    for f in hoodie_dir.glob(f"{own_table.insert}.*"):
        f.rename(hoodie_dir / "archived" / f.name)
    (hoodie_dir / "archived" / ".commits_.archive.1_1-0-1").write_bytes(b"")
    result = cli("read", own_table.path, "--begin", "20000101000000000")
    assert result.exit_code == 1
    assert "20000101000000000" in result.stderr and "archived" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_hoodie_errors_are_reported_without_traceback(cli, table, monkeypatch):
    def broken_read(path, options=None, **kwargs):
        raise hoodie.HoodieError("line one\nline two")

    monkeypatch.setattr(hoodie, "read", broken_read)
    result = cli("read", table.path)
    assert result.exit_code == 1
    assert result.stderr == "error: line one line two\n"


def test_version(cli):
    result = cli("version")
    assert result.exit_code == 0
    assert result.stdout.splitlines()[0] == f"hoodie {__version__}"
    assert cli("--version").stdout == result.stdout


def test_help_lists_the_commands(cli):
    result = cli("--help")
    assert result.exit_code == 0
    for command in ("timeline", "show", "read", "version", "compaction", "clean", "archive", "savepoint", "restore", "explain"):
        assert command in result.stdout
    for group, commands in (("compaction", ("schedule", "run", "show")), ("savepoint", ("create", "delete", "list"))):
        sub = cli(group, "--help")
        assert sub.exit_code == 0
        assert all(c in sub.stdout for c in commands)
