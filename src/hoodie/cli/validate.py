"""``hoodie validate``: which files of the latest slices are missing or damaged.

This module prints what :func:`hoodie.table.validate.validate_table` found (a table of
problems, that none were found, or JSON) on stdout, with a progress bar over the slices on
stderr; the command fails (exit code 1) when anything is missing or damaged, so that
scripts can act on it.
"""
from __future__ import annotations

from dataclasses import asdict

import typer
from rich.table import Table
from rich.text import Text

from hoodie.cli.errors import EXIT_FAILURE
from hoodie.cli.output import print_json, print_table, progress, stdout_console
from hoodie.table import HoodieTable, ValidationReport, validate_table


def validate(table: HoodieTable, as_of: str | None) -> ValidationReport:
    """Run the checks with a progress bar counting slices."""
    with progress(f"validate {table.base_path}") as display:
        count = display.add_task("check file slices", total=None)
        return validate_table(table, as_of, on_slice=lambda _: display.advance(count))


def print_report(report: ValidationReport, as_json: bool) -> None:
    """Print the problems (or that there are none); exit 1 when there are problems."""
    if as_json:
        print_json({"base_path": report.base_path, "as_of": report.as_of, "files_checked": report.files_checked, "ok": report.ok,
                    "problems": [asdict(p) for p in report.problems]})
    elif report.ok:
        # the verdict is the command's result: stdout, like the table of problems
        stdout_console().print(Text(f"{report.files_checked} file(s) of the latest slices checked: none missing or damaged"), soft_wrap=True)
    else:
        out = Table(title=f"{len(report.problems)} problem(s) in {report.files_checked} file(s) checked")
        for column in ("partition", "file", "written by", "problem", "detail"):
            out.add_column(column)
        for p in report.problems:
            out.add_row(p.partition_path or "(non-partitioned)", p.file_name, p.instant, p.kind, p.detail)
        print_table(out)
    if not report.ok:
        raise typer.Exit(EXIT_FAILURE)
