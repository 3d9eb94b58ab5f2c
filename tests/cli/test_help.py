"""Every ``--help`` of the ``hoodie`` command tree: a flag (``--json``, ``--dry-run``,
``--help``) shows no value type beside it, since it takes no value; options that take
one keep their metavar."""
from __future__ import annotations

import re
from pathlib import Path

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


DOCS = Path(__file__).resolve().parents[2] / "docs" / "cli.md"


def test_the_synopsis_of_docs_cli_names_every_option() -> None:
    """docs/cli.md's synopsis has a line for every command, naming each of its options
    (by its long name, or its short one)."""
    text = DOCS.read_text()
    synopsis = text[text.index("```\nhoodie ") + 4:]
    synopsis = synopsis[: synopsis.index("```")]
    entries = re.split(r"\n(?=hoodie )", synopsis.strip())  # a command and its continuation lines
    for path, command in _command_paths(typer.main.get_command(app)):
        if getattr(command, "commands", None):
            continue  # a group: its commands have the lines
        (entry,) = [e for e in entries if re.match(r"hoodie\s+" + r"\s+".join(path) + r"(\s|$)", e)] or [""]
        assert entry, f"no line for hoodie {' '.join(path)} in the synopsis of docs/cli.md"
        for param in command.params:
            names = [o for o in getattr(param, "opts", []) if o.startswith("-")]
            if names:
                assert any(re.search(rf"\[?{re.escape(n)}\b", entry) for n in names), (path, names, entry)
