"""The engine protocol."""
from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol, TypeVar

T = TypeVar("T")
R = TypeVar("R")


@dataclass(frozen=True)
class TaskContext:
    """Identity of the task attempt running a piece of work; feeds Hudi's write token."""

    partition_id: int
    stage_id: int
    attempt_id: int

    @property
    def write_token(self) -> str:
        return f"{self.partition_id}-{self.stage_id}-{self.attempt_id}"


class Engine(Protocol):
    """Runs a function over tasks in parallel and collects the results, in order."""

    name: str
    # whether tasks run in this process and may be handed the driver's objects as they
    # are (threads), rather than receiving pickled copies (executors elsewhere)
    @property
    def shares_memory(self) -> bool: ...

    def map(self, fn: Callable[[T, TaskContext], R], items: Sequence[T], description: str = "") -> list[R]:
        """``[fn(item, ctx) for item in items]`` where ctx identifies the task attempt."""

    @property
    def parallelism(self) -> int:
        """How many tasks run at once."""
