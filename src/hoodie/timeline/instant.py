"""Instants: (time, action, state), plus the file names each state has on disk."""
from __future__ import annotations

import functools
from dataclasses import dataclass
from enum import Enum

from hoodie.errors import FormatError, TimelineError
from hoodie.layout import NAME_CACHE_SIZE, InstantTime, is_ascii_digits


class State(str, Enum):
    REQUESTED = "REQUESTED"
    INFLIGHT = "INFLIGHT"
    COMPLETED = "COMPLETED"


class Action:
    """Action names as they appear in timeline file names."""

    COMMIT = "commit"
    DELTA_COMMIT = "deltacommit"
    REPLACE_COMMIT = "replacecommit"
    CLEAN = "clean"
    ROLLBACK = "rollback"
    SAVEPOINT = "savepoint"
    COMPACTION = "compaction"
    LOG_COMPACTION = "logcompaction"
    RESTORE = "restore"
    INDEXING = "indexing"
    CLUSTERING = "clustering"
    SCHEMA_COMMIT = "schemacommit"

    ALL = (
        COMMIT, DELTA_COMMIT, REPLACE_COMMIT, CLEAN, ROLLBACK, SAVEPOINT, COMPACTION,
        LOG_COMPACTION, RESTORE, INDEXING, CLUSTERING, SCHEMA_COMMIT,
    )
    # Actions whose completed instant adds data files to the table.
    WRITE_ACTIONS = (COMMIT, DELTA_COMMIT, REPLACE_COMMIT)
    # Pending actions that complete as a different action.
    COMPLETES_AS = {COMPACTION: COMMIT, LOG_COMPACTION: DELTA_COMMIT, CLUSTERING: REPLACE_COMMIT}


@dataclass(frozen=True, order=False)
class Instant:
    """One instant of the timeline.

    ``completion_time`` is known for completed instants of layout 2 (v8+) tables.
    """

    timestamp: str
    action: str
    state: State
    completion_time: str | None = None

    @property
    def is_completed(self) -> bool:
        return self.state is State.COMPLETED

    @property
    def is_requested(self) -> bool:
        return self.state is State.REQUESTED

    @property
    def is_inflight(self) -> bool:
        return self.state is State.INFLIGHT

    @property
    def time(self) -> InstantTime:
        """The instant time, ordered as Hudi orders instant times."""
        return InstantTime(self.timestamp)

    def sort_key(self) -> tuple[str, int]:
        return (self.time.key, STATE_ORDER[self.state])

    def with_state(self, state: State) -> Instant:
        return Instant(self.timestamp, self.action, state, None)

    # --- file names (layout 1; layout 2 completed names add the completion time) -----------
    def file_name(self, layout_version: int = 1) -> str:
        t, a = self.timestamp, self.action
        if self.state is State.REQUESTED:
            return f"{t}.{a}.requested"
        if self.state is State.INFLIGHT:
            return f"{t}.inflight" if a == Action.COMMIT else f"{t}.{a}.inflight"
        completed = completed_action(a)
        if layout_version >= 2 and self.completion_time:
            return f"{t}_{self.completion_time}.{completed}"
        return f"{t}.{completed}"

    def __str__(self) -> str:
        return f"[{self.timestamp}__{self.action}__{self.state.value}]"


def recorded_instant(timestamp: object, action: object, state: State, source: str) -> Instant:
    """An instant that table metadata names (the target of a rollback or restore plan).

    Its time and action become timeline and marker file names, so anything but a time of
    ASCII digits and a known action is refused with an error naming ``source``."""
    if not (isinstance(timestamp, str) and is_ascii_digits(timestamp)) or action not in Action.ALL:
        raise FormatError(f"{source} names the instant {timestamp!r} (action {action!r}), which is not an instant of a Hudi timeline")
    return Instant(timestamp, str(action), state)


# requested < inflight < completed: of two files of one instant, the later state wins
STATE_ORDER = {State.REQUESTED: 0, State.INFLIGHT: 1, State.COMPLETED: 2}


def completed_action(action: str) -> str:
    """The action an instant completes as (a compaction completes as a commit)."""
    return Action.COMPLETES_AS.get(action, action)


@functools.lru_cache(maxsize=NAME_CACHE_SIZE)
def parse_timeline_file_name(name: str) -> Instant | None:
    """Instant of a timeline file name (layouts 1 and 2); None for a name that is no
    timeline file (``hoodie.properties``, hidden files). Every load of the timeline
    parses its names again: the (immutable) result is kept.

    A name with a timeline suffix (``.commit``, ``.clean.requested``, ``.inflight``, ...)
    whose time is not ASCII digits (fullwidth digits, letters) raises
    :class:`TimelineError` naming the file: skipping it would hide from hoodie a file
    that other readers take for an instant (Hudi 0.x) or fail on (Hudi 1.x)."""
    if name.startswith(".") or "." not in name:
        return None
    head, _, rest = name.partition(".")
    parts = rest.split(".")
    if parts == ["inflight"]:
        action, state = Action.COMMIT, State.INFLIGHT
    elif len(parts) == 1 and parts[0] in Action.ALL:
        action, state = parts[0], State.COMPLETED
    elif len(parts) == 2 and parts[0] in Action.ALL and parts[1] in ("requested", "inflight"):
        action, state = parts[0], State.REQUESTED if parts[1] == "requested" else State.INFLIGHT
    else:
        return None
    time, _, completion = head.partition("_")
    if not is_ascii_digits(time) or ("_" in head and not is_ascii_digits(completion)):
        raise TimelineError(f"timeline file {name!r} does not start with an instant time of ASCII digits (yyyyMMddHHmmssSSS[_completion time])")
    return Instant(time, action, state, (completion or None) if state is State.COMPLETED else None)
