"""Which engine a streamer runs on, by name: ``in-process`` or ``spark``, or the import
path ``module:Class`` of any :class:`~hoodie.streamer.loop.BatchEngine` whose class has
a ``for_streamer()`` constructor.

Spark's engine lives above this layer (``hoodie.spark.streamer``), and the command line
beside Spark may not import it, so both name it: the module is imported by its path
when asked for, as ``hoodie.compaction.strategy`` takes a class by its import path.
"""
from __future__ import annotations

import importlib

from hoodie.errors import ConfigError
from hoodie.streamer.arrow_engine import ArrowEngine
from hoodie.streamer.loop import BatchEngine

IN_PROCESS, SPARK = "in-process", "spark"
ENGINES = {SPARK: "hoodie.spark.streamer:SparkStreamerEngine"}


def engine_for(name: str) -> BatchEngine:
    """The engine ``name`` names (see the module docstring)."""
    if name == IN_PROCESS:
        return ArrowEngine()
    target = ENGINES.get(name, name)
    module_name, sep, class_name = target.partition(":")
    if not sep:
        raise ConfigError(f"unknown streamer engine {name!r}: expected {IN_PROCESS}, {SPARK} or an import path module:Class")
    try:
        engine_class = getattr(importlib.import_module(module_name), class_name)
    except (ImportError, AttributeError) as e:
        raise ConfigError(f"streamer engine {name!r} cannot be loaded from {target}: {e}") from e
    engine: BatchEngine = engine_class.for_streamer()
    return engine
