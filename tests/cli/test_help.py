"""Every ``--help`` of the ``hoodie`` command tree: a flag (``--json``, ``--dry-run``,
``--help``) shows no value type beside it, since it takes no value; options that take
one keep their metavar."""
from __future__ import annotations

import re

import typer

from hoodie.cli.main import app


def _command_paths(command, path=()):  # type: ignore[no-untyped-def]
    yield path, command
    for name, sub in sorted(getattr(command, "commands", {}).items()):
        yield from _command_paths(sub, (*path, name))


def test_no_flag_shows_a_value_type(cli) -> None:
    commands = list(_command_paths(typer.main.get_command(app)))
    assert len(commands) > 15  # the whole tree, groups and their commands
    for path, command in commands:
        result = cli(*path, "--help")
        assert result.exit_code == 0, (path, result.output)
        # typer's wording of a boolean's type (recent releases, and older ones)
        assert "<bool>" not in result.stdout and "BOOLEAN" not in result.stdout, (path, result.stdout)
        # ... and no flag shows a value of any kind: each row goes from its names to its help
        for flag in [*[p for p in command.params if getattr(p, "is_flag", False)], command.get_help_option(typer.Context(command))]:
            row = next(line for line in result.stdout.splitlines() if f" {flag.opts[0]} " in line)
            names = [*flag.opts, *flag.secondary_opts]
            assert re.fullmatch(rf"[│ *]*(?:(?:{'|'.join(map(re.escape, names))})\s+)+[A-Z].*", row), (path, row)


def test_options_with_a_value_keep_their_metavar(cli) -> None:
    out = cli("timeline", "--help").stdout
    assert re.search(r"--limit\s+-n\s+N\s+Show only the newest N", out), out
    assert re.search(r"--option\s+-o\s+KEY=VALUE", cli("clean", "--help").stdout)
