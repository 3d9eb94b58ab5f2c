"""Parallel execution of picklable tasks.

The write, query and service layers describe their work as lists of picklable tasks and
hand them to an :class:`Engine`. :class:`LocalEngine` runs them in this process;
``hoodie.spark.engine.SparkEngine`` runs them as Spark tasks. Nothing here imports pyspark.
"""
from __future__ import annotations

from hoodie.engine.base import Engine, TaskContext
from hoodie.engine.local import LocalEngine

__all__ = ["Engine", "LocalEngine", "TaskContext"]
