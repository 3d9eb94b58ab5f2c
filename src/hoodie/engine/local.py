"""In-process engine: tasks run in a thread pool of this Python process."""
from __future__ import annotations

import itertools
import os
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

from hoodie.engine.base import TaskContext

T = TypeVar("T")
R = TypeVar("R")

_stage_ids = itertools.count(1)


class LocalEngine:
    """Runs tasks on threads (pyarrow and Parquet I/O release the GIL)."""

    name = "local"
    shares_memory = True

    def __init__(self, max_workers: int | None = None) -> None:
        self._max_workers = max_workers or max(1, min(8, os.cpu_count() or 1))

    @property
    def parallelism(self) -> int:
        return self._max_workers

    def map(self, fn: Callable[[T, TaskContext], R], items: Sequence[T], description: str = "") -> list[R]:
        stage = next(_stage_ids)
        contexts = [TaskContext(i, stage, i) for i in range(len(items))]
        if self._max_workers == 1 or len(items) <= 1:
            return [fn(item, ctx) for item, ctx in zip(items, contexts)]
        with ThreadPoolExecutor(self._max_workers, thread_name_prefix="hoodie-task") as pool:
            return list(pool.map(fn, items, contexts))
