"""Hudi options given on the command line: ``--option/-o key=value``, repeated.

:func:`parse_options` turns them into a :class:`hoodie.config.HoodieConfig` (which rejects
unknown ``hoodie.*`` keys and malformed values with a message naming the key);
:func:`service_settings` builds a service's settings from it with the builders of
:mod:`hoodie.services.inline`, reporting settings the services refuse (``ValueError``,
e.g. ``hoodie.keep.min.commits`` not below ``hoodie.keep.max.commits``) as a usage error
that names the options, and noting options the command does not read.
"""
from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from hoodie.cli.errors import UsageError
from hoodie.cli.output import note
from hoodie.config import options as o
from hoodie.config.options import HoodieConfig, Option

S = TypeVar("S")

OPTION_FLAG = "--option"

# Fields of the services' settings classes, as their ValueErrors name them → Hudi's keys.
_SETTING_KEYS = {
    "commits_retained": o.CLEANER_COMMITS_RETAINED.key,
    "file_versions_retained": o.CLEANER_FILE_VERSIONS_RETAINED.key,
    "hours_retained": o.CLEANER_HOURS_RETAINED.key,
    "min_commits": o.KEEP_MIN_COMMITS.key,
    "max_commits": o.KEEP_MAX_COMMITS.key,
    "batch_size": o.ARCHIVAL_BATCH.key,
    "max_delta_commits": o.COMPACT_MAX_DELTA_COMMITS.key,
    "target_io_mb": o.COMPACTION_TARGET_IO.key,
}
_SETTING_NAME = re.compile(r"\b(" + "|".join(_SETTING_KEYS) + r")\b")


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
        if o.lookup(key) is None and not key.startswith("hoodie."):
            # HoodieConfig keeps keys outside hoodie.* for engines; none means anything here
            raise UsageError(f"unknown option {key} for {OPTION_FLAG} (Hudi options start with 'hoodie.')")
        if key in raw and raw[key] != value:
            raise UsageError(f"{OPTION_FLAG} {key} given twice, as {raw[key]!r} and {value!r}")
        raw[key] = value
    config = CommandConfig.of(raw)
    assert isinstance(config, CommandConfig)
    return config


def service_settings(builder: Callable[[HoodieConfig], S], config: CommandConfig) -> S:
    """``builder(config)`` (e.g. :func:`hoodie.services.inline.clean_settings`); a value
    the settings refuse becomes a :class:`UsageError` naming the options."""
    try:
        return builder(config)
    except ValueError as e:
        message = _SETTING_NAME.sub(lambda m: _SETTING_KEYS[m.group(1)], str(e))
        raise UsageError(f"invalid options: {message}") from None


def note_unused(config: CommandConfig, command: str, extra_used: Iterable[str] = ()) -> None:
    """Note on stderr each given option that ``command`` did not read."""
    used = config.read_keys | set(extra_used)
    unused = [k for k in config.raw if k not in used]
    for key in unused:
        note(f"note: option {key} has no effect on {command}")
