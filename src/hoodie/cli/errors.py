"""How the CLI reports failures: one red line on stderr and exit code 1, no traceback.

This module owns :class:`UsageError` (a command-line value the CLI itself rejects) and
:func:`reporting_errors`, the context manager every command body runs in. Errors hoodie
raises (:class:`hoodie.errors.HoodieError`) and operating-system errors about the given
path are reported the same way; anything else is a bug and keeps its traceback.
"""
from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager

import typer
from rich.text import Text

from hoodie.cli.output import stderr_console
from hoodie.errors import HoodieError

EXIT_FAILURE = 1


class UsageError(Exception):
    """A command-line value is invalid; the message names the option and the value."""


def error_line(error: BaseException) -> str:
    """The one-line message shown for ``error`` (newlines folded into spaces)."""
    if isinstance(error, OSError) and error.strerror:
        where = f": {error.filename}" if error.filename else ""
        message = f"{error.strerror}{where}"
    else:
        message = str(error) or type(error).__name__
    return " ".join(message.split())


def report_error(error: BaseException) -> None:
    """Print ``error`` as ``error: <message>`` in red on stderr, on a single line."""
    stderr_console().print(Text(f"error: {error_line(error)}", style="bold red"), soft_wrap=True)


@contextmanager
def reporting_errors() -> Iterator[None]:
    """Run a command body; report expected failures and exit with code 1."""
    try:
        yield
    except BrokenPipeError:
        # The reader of our output went away (``hoodie read t | head``): stop quietly.
        _silence_stdout()
        raise typer.Exit(EXIT_FAILURE) from None
    except (HoodieError, UsageError, OSError) as e:
        report_error(e)
        raise typer.Exit(EXIT_FAILURE) from None


def _silence_stdout() -> None:
    """Point stdout at /dev/null so that flushing it at exit raises no second error."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):
        pass  # not a real file descriptor (e.g. captured output in tests)
