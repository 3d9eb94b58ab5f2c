"""Terminal output shared by the commands: consoles, progress display, sizes and JSON.

Consoles are created per call so that they follow the current ``sys.stdout`` and
``sys.stderr`` (which test runners swap). Human output goes to stdout; progress, notes and
errors go to stderr, so that ``--json``/``--format csv`` output on stdout stays clean.
Progress displays are transient and only drawn on a terminal. Tables printed with
:func:`print_table` keep their natural width when stdout is not a terminal (a pipe, a
file), so that nothing is folded or cut for ``grep``; on a terminal they fit its width.
"""
from __future__ import annotations

import base64
import datetime as dt
import decimal
import json
import logging
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any, TypeVar

from rich.console import Console, RenderableType
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    SpinnerColumn,
    Task,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
)
from rich.text import Text

from hoodie.engine import Engine, LocalEngine, TaskContext

T = TypeVar("T")
R = TypeVar("R")

_UNITS = ("B", "KiB", "MiB", "GiB", "TiB", "PiB")
MAX_PIPE_WIDTH = 4000  # widest line printed to a pipe


def stdout_console() -> Console:
    """Console for results (markup off: table and file names may contain brackets)."""
    return Console(markup=False, highlight=False)


def stderr_console() -> Console:
    """Console for progress, notes and errors."""
    return Console(stderr=True, markup=False, highlight=False)


def print_table(renderable: RenderableType) -> None:
    """Print a table (or any renderable) on stdout, at full width unless on a terminal."""
    console = stdout_console()
    if not console.is_terminal:
        natural = console.measure(renderable, options=console.options.update_width(MAX_PIPE_WIDTH)).maximum
        if natural > console.width:
            console = Console(markup=False, highlight=False, width=natural)
    console.print(renderable)


def note(message: str) -> None:
    """A one-line remark on stderr (not part of the command's result)."""
    stderr_console().print(Text(message, style="yellow"), soft_wrap=True)


class _NoteHandler(logging.Handler):
    """hoodie's warnings (an empty read's reason, a file read around) as notes."""

    def emit(self, record: logging.LogRecord) -> None:
        note(f"note: {record.getMessage()}")


def warnings_as_notes() -> None:
    """Show the warnings hoodie logs as notes on stderr (once per process)."""
    logger = logging.getLogger("hoodie")
    if not any(isinstance(h, _NoteHandler) for h in logger.handlers):
        logger.addHandler(_NoteHandler(logging.WARNING))


def human_size(n: int | None) -> str:
    """``1536`` → ``1.5 KiB``; bytes below 1 KiB stay exact."""
    if n is None:
        return "-"
    size = float(n)
    for unit in _UNITS:
        if abs(size) < 1024 or unit == _UNITS[-1]:
            return f"{int(size)} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    raise AssertionError("unreachable")


def json_default(value: Any) -> Any:
    """JSON for values ``json`` cannot encode: times as ISO 8601, decimals as strings
    (exact), binary as base64 (as Spark's ``to_json`` does)."""
    if isinstance(value, (dt.datetime, dt.date, dt.time)):
        return value.isoformat()
    if isinstance(value, dt.timedelta):
        return value.total_seconds()
    if isinstance(value, decimal.Decimal):
        return str(value)
    if isinstance(value, (bytes, bytearray, memoryview)):
        return base64.b64encode(bytes(value)).decode("ascii")
    return str(value)


def dumps(value: Any, indent: int | None = 2) -> str:
    return json.dumps(value, indent=indent, default=json_default, ensure_ascii=False)


def print_json(value: Any) -> None:
    """Plain JSON on stdout (no colour codes, no wrapping), for machines."""
    sys.stdout.write(dumps(value) + "\n")
    sys.stdout.flush()


def report_not_run(message: str, reason: str, as_json: bool) -> None:
    """A table service that had nothing to do: ``{"ran": false, "reason": ...}`` in JSON,
    else ``<message>: <reason>``."""
    if as_json:
        print_json({"ran": False, "reason": reason})
    else:
        stdout_console().print(Text(f"{message}: {reason}"), soft_wrap=True)


# --- progress ---------------------------------------------------------------------------------


class _BarColumn(BarColumn):
    """A bar only for tasks with a known total (no pulsing bar for the spinner task)."""

    def render(self, task: Task) -> RenderableType:  # type: ignore[override]  # (also a Text)
        return Text("") if task.total is None else super().render(task)


class _CountColumn(MofNCompleteColumn):
    """``done/total`` only for tasks with a known total."""

    def render(self, task: Task) -> Text:
        return Text("") if task.total is None else super().render(task)


@contextmanager
def progress(description: str) -> Iterator[Progress]:
    """A transient progress display on stderr, headed by a spinner saying ``description``.

    Callers add counted tasks (``add_task(..., total=n)``) for work they can measure.
    Nothing is drawn when stderr is not a terminal.
    """
    console = stderr_console()
    display = Progress(
        SpinnerColumn(),
        TextColumn("{task.description}"),
        _BarColumn(),
        _CountColumn(),
        TimeElapsedColumn(),
        console=console,
        transient=True,
        disable=not console.is_terminal,
    )
    with display:
        display.add_task(description, total=None)
        yield display


class ProgressEngine:
    """An :class:`~hoodie.engine.Engine` that runs tasks on ``inner`` (default: a
    :class:`~hoodie.engine.LocalEngine`) and shows each batch of tasks (one ``map`` call,
    e.g. "read base files") as a counted bar. In-process only: the wrapped tasks refer to
    the display, so they are not picklable for a distributed engine."""

    def __init__(self, display: Progress, inner: Engine | None = None) -> None:
        self._display = display
        self._inner: Engine = inner or LocalEngine()
        self.name = f"{self._inner.name}+progress"

    @property
    def parallelism(self) -> int:
        return self._inner.parallelism

    @property
    def shares_memory(self) -> bool:
        return self._inner.shares_memory

    def map(self, fn: Callable[[T, TaskContext], R], items: Sequence[T], description: str = "") -> list[R]:
        task: TaskID = self._display.add_task(description or "tasks", total=len(items))

        def run(item: T, ctx: TaskContext) -> R:
            try:
                return fn(item, ctx)
            finally:
                self._display.advance(task)

        try:
            return self._inner.map(run, items, description)
        finally:
            self._display.remove_task(task)
