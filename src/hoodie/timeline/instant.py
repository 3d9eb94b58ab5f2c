"""Instants: (time, action, state), plus the file names each state has on disk."""
from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from hoodie.errors import FormatError
from hoodie.layout import compare_key


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

    def sort_key(self) -> tuple[str, int]:
        return (compare_key(self.timestamp), _STATE_ORDER[self.state])

    def with_state(self, state: State) -> Instant:
        return Instant(self.timestamp, self.action, state, None)

    # --- file names (layout 1; layout 2 completed names add the completion time) -----------
    def file_name(self, layout_version: int = 1) -> str:
        t, a = self.timestamp, self.action
        if self.state is State.REQUESTED:
            return f"{t}.{a}.requested"
        if self.state is State.INFLIGHT:
            return f"{t}.inflight" if a == Action.COMMIT else f"{t}.{a}.inflight"
        completed_action = Action.COMPLETES_AS.get(a, a)
        if layout_version >= 2 and self.completion_time:
            return f"{t}_{self.completion_time}.{completed_action}"
        return f"{t}.{completed_action}"

    def __str__(self) -> str:
        return f"[{self.timestamp}__{self.action}__{self.state.value}]"


def recorded_instant(timestamp: object, action: object, state: State, source: str) -> Instant:
    """An instant that table metadata names (the target of a rollback or restore plan).

    Its time and action become timeline and marker file names, so anything but a time of
    ASCII digits and a known action is refused with an error naming ``source``."""
    if not (isinstance(timestamp, str) and timestamp.isascii() and timestamp.isdigit()) or action not in Action.ALL:
        raise FormatError(f"{source} names the instant {timestamp!r} (action {action!r}), which is not an instant of a Hudi timeline")
    return Instant(timestamp, str(action), state)


_STATE_ORDER = {State.REQUESTED: 0, State.INFLIGHT: 1, State.COMPLETED: 2}


def parse_timeline_file_name(name: str) -> Instant | None:
    """Instant of a timeline file name (layouts 1 and 2); None for anything else."""
    if name.startswith(".") or "." not in name:
        return None
    head, _, rest = name.partition(".")
    completion = None
    if "_" in head:
        head, _, completion = head.partition("_")
        if not completion.isdigit():
            return None
    if not head.isdigit():
        return None
    parts = rest.split(".")
    if parts == ["inflight"]:
        return Instant(head, Action.COMMIT, State.INFLIGHT)
    if len(parts) == 1 and parts[0] in Action.ALL:
        return Instant(head, parts[0], State.COMPLETED, completion)
    if len(parts) == 2 and parts[0] in Action.ALL and parts[1] in ("requested", "inflight"):
        return Instant(head, parts[0], State.REQUESTED if parts[1] == "requested" else State.INFLIGHT)
    return None
