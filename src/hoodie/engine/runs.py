"""Cutting work into consecutive runs of bounded size.

Work that costs per call more than per record is done a run at a time (write handles
sharing one encoding pass, merges sharing one log decode): this module owns how a
sequence is cut into such runs, so that every caller bounds them the same way. Nothing
here runs anything.
"""
from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import TypeVar

T = TypeVar("T")

__all__ = ["bounded_runs", "grouped_runs"]


def bounded_runs(items: Iterable[T], weight: Callable[[T], int], limit: int, max_items: int | None = None) -> list[list[T]]:
    """``items`` in order, cut into consecutive runs whose weights add up to at most
    ``limit`` and that hold at most ``max_items`` items each; an item heavier than
    ``limit`` is a run of its own."""
    runs: list[list[T]] = []
    total = 0
    for item in items:
        w = weight(item)
        if not runs or total + w > limit or (max_items is not None and len(runs[-1]) >= max_items):
            runs.append([])
            total = 0
        runs[-1].append(item)
        total += w
    return runs


def grouped_runs(
    items: Sequence[T], weight: Callable[[T], int], limit: int, max_items: int, parallelism: int, tasks_per_worker: int
) -> list[list[T]]:
    """``items`` cut into :func:`bounded_runs` to run as one engine task each, as long as
    every one of ``parallelism`` workers still gets ``tasks_per_worker`` tasks to balance
    (runs are shortened for that, down to single items)."""
    size = min(max_items, len(items) // (tasks_per_worker * max(1, parallelism)))
    if size < 2:
        return [[item] for item in items]
    return bounded_runs(items, weight, limit, max_items=size)
