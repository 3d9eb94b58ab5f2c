"""``SparkEngine``: the :class:`~hoodie.engine.Engine` protocol on a SparkContext.

Each item becomes one Spark task (``parallelize(items, len(items))``), so a list of
planned tasks (tagging, reading base files, writing buckets) runs with Spark's
scheduling, retries and executors, and the results come back in order. The task
identity handed to the function is Spark's own, which is what write tokens are made of.
"""
from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import TypeVar

from pyspark import TaskContext as SparkTaskContext
from pyspark.sql import SparkSession

from hoodie.engine.base import TaskContext

T = TypeVar("T")
R = TypeVar("R")


def current_task_context(partition_id: int | None = None) -> TaskContext:
    """The identity of the Spark task attempt running this code (executors only).

    The attempt part is Spark's ``taskAttemptId`` (unique within the application), as in
    Hudi's ``SparkTaskContextSupplier``: ``attemptNumber`` restarts at 0 when a stage is
    re-attempted, so two attempts of one task could otherwise produce the same file name.
    ``partition_id`` replaces Spark's partition id where one task does several units of
    work that Hudi would give a Spark partition each (see ``tasks.write_bucket_task``).
    """
    ctx = SparkTaskContext.get()
    if ctx is None:
        raise RuntimeError("current_task_context() called outside a Spark task")
    return TaskContext(ctx.partitionId() if partition_id is None else partition_id, ctx.stageId(), ctx.taskAttemptId())


def _call_in_task(fn: Callable[[T, TaskContext], R], item: T) -> R:
    return fn(item, current_task_context())


class SparkEngine:
    """Runs engine tasks as Spark tasks of ``spark``'s SparkContext, one task per item."""

    name = "spark"
    shares_memory = False

    def __init__(self, spark: SparkSession) -> None:
        self.spark = spark

    @property
    def parallelism(self) -> int:
        return self.spark.sparkContext.defaultParallelism

    def map(self, fn: Callable[[T, TaskContext], R], items: Sequence[T], description: str = "") -> list[R]:
        """``[fn(item, ctx) for item in items]`` as Spark tasks; results in item order."""
        items = list(items)
        if not items:
            return []
        sc = self.spark.sparkContext
        previous = sc.getLocalProperty("spark.job.description")
        if description:
            sc.setJobDescription(f"hoodie: {description}")
        try:
            return sc.parallelize(items, len(items)).map(functools.partial(_call_in_task, fn)).collect()
        finally:
            sc.setLocalProperty("spark.job.description", previous)  # type: ignore[arg-type]
