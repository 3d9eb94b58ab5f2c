"""Hudi options given on the command line: ``--option/-o key=value``, repeated.

:func:`parse_options` turns them into a :class:`hoodie.config.HoodieConfig` (which rejects
unknown ``hoodie.*`` keys, naming the closest option, and malformed values with a message
naming the key, the value and what is expected; any other unknown key is refused too);
:func:`service_settings` builds a service's settings from it with the builders of
:mod:`hoodie.services.inline` (which refuse bad values with a ``ConfigError`` naming the
options), and :func:`note_unused` notes options the command does not read.
"""
from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from hoodie.cli.errors import UsageError
from hoodie.cli.output import note
from hoodie.config import HoodieConfig, Option
from hoodie.config import options as o

S = TypeVar("S")

OPTION_FLAG = "--option"

@dataclass(frozen=True)
class CommandConfig(HoodieConfig):
    """A :class:`HoodieConfig` that remembers which options were read, so that the
    command can say which of the given ones had no effect."""

    read_keys: set[str] = field(default_factory=set, compare=False)

    def get(self, opt: Option[Any]) -> Any:
        self.read_keys.add(opt.key)
        return super().get(opt)


def parse_options(values: Sequence[str] | None) -> CommandConfig:
    """``["k=v", ...]`` → a validated config; :class:`UsageError` or
    :class:`hoodie.errors.ConfigError` naming the bad one."""
    raw: dict[str, str] = {}
    for text in values or ():
        key, sep, value = text.partition("=")
        key, value = key.strip(), value.strip()
        if not sep or not key:
            raise UsageError(f"invalid value {text!r} for {OPTION_FLAG}: expected key=value (e.g. -o {o.CLEANER_COMMITS_RETAINED.key}=5)")
        if o.lookup(key) is None and not key.lower().startswith("hoodie."):
            # HoodieConfig keeps keys outside hoodie.* for engines; none means anything here
            close = o.closest_option(key)
            hint = f"; did you mean {close}?" if close else " (Hudi options start with 'hoodie.')"
            raise UsageError(f"unknown option {key} for {OPTION_FLAG}{hint}")
        if key in raw and raw[key] != value:
            raise UsageError(f"{OPTION_FLAG} {key} given twice, as {raw[key]!r} and {value!r}")
        raw[key] = value
    config = CommandConfig.of(raw)
    assert isinstance(config, CommandConfig)
    return config


def service_settings(builder: Callable[[HoodieConfig], S], config: CommandConfig) -> S:
    """``builder(config)`` (e.g. :func:`hoodie.services.inline.clean_settings`)."""
    return builder(config)


def note_unused(config: CommandConfig, command: str, extra_used: Iterable[str] = ()) -> None:
    """Note on stderr each given option that ``command`` did not read."""
    used = config.read_keys | set(extra_used)
    unused = [k for k in config.raw if k not in used]
    for key in unused:
        note(f"note: option {key} has no effect on {command}")
