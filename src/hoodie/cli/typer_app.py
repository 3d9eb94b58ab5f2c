"""The typer classes the ``hoodie`` application is built from.

They differ from typer's own in one thing: the help shows no value type beside a flag
(``--json``, ``--dry-run``, ``--help``), which takes no value. Recent typer releases print
the parameter's Python type there (``<bool>``), as if ``--json <bool>`` were the syntax;
an empty metavar, which typer shows in place of the type, leaves the column blank. Options
that take a value keep their metavar (``N``, ``T``, ``KEY=VALUE``) or type.
"""
from __future__ import annotations

from typing import Any

import typer
from typer.core import TyperCommand, TyperGroup

# (parameters are typed Any: typer's parameter classes are click's in some releases and
# its own copy of click's in others)


def _blank_flag_type(param: Any) -> Any:
    if param is not None and getattr(param, "is_flag", False):
        param.metavar = ""
    return param


def _blank_flag_types(params: list[Any]) -> None:
    for param in params:
        _blank_flag_type(param)


class HoodieCommand(TyperCommand):
    """A command whose flags show no value type in its help."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        _blank_flag_types(self.params)

    def get_help_option(self, ctx: Any) -> Any:
        return _blank_flag_type(super().get_help_option(ctx))


class HoodieGroup(TyperGroup):
    """A command group (``hoodie``, ``hoodie compaction``, ...) likewise."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        _blank_flag_types(self.params)

    def get_help_option(self, ctx: Any) -> Any:
        return _blank_flag_type(super().get_help_option(ctx))


class HoodieTyper(typer.Typer):
    """``typer.Typer`` building :class:`HoodieGroup` and :class:`HoodieCommand`."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(cls=HoodieGroup, **kwargs)

    def command(self, *args: Any, **kwargs: Any) -> Any:
        kwargs.setdefault("cls", HoodieCommand)
        return super().command(*args, **kwargs)
