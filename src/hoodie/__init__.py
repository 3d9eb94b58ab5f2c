"""hoodie: Apache Hudi tables from Python and PySpark.

Public entry points:

* :func:`hoodie.write` / :func:`hoodie.read` — the in-process engine (no JVM);
* :func:`hoodie.dataset` / :func:`hoodie.to_daft` — a table's snapshot as a lazy
  ``pyarrow.dataset`` (DuckDB, Polars, pandas) or a lazy Daft DataFrame;
* :class:`hoodie.HoodieTable` — open a table, inspect its timeline and file groups;
* ``hoodie.spark.register(spark)`` — ``df.write.format("hoodie")`` and
  ``spark.read.format("hoodie")`` for PySpark.

Beyond these, each package's ``__init__`` is its public API (the ``hoodie`` command uses
nothing else): :mod:`hoodie.services` (clean, compact, archive, savepoints, restore),
:mod:`hoodie.table` (tables, file groups and slices, views, validation),
:mod:`hoodie.timeline` (instants, commit metadata, compaction plans), :mod:`hoodie.config`
(every option), :mod:`hoodie.engine`, :mod:`hoodie.storage` and :mod:`hoodie.errors`.
"""
from __future__ import annotations

from typing import Any

__all__ = ["HoodieError", "HoodieTable", "dataset", "read", "to_daft", "write"]
__version__ = "0.1.0"


def __getattr__(name: str) -> Any:
    # Imported lazily so that executors importing hoodie.formats do not load the whole stack.
    if name in ("read", "write", "dataset", "to_daft"):
        from hoodie import api

        return getattr(api, name)
    if name == "HoodieTable":
        from hoodie.table.table import HoodieTable

        return HoodieTable
    if name == "HoodieError":
        from hoodie.errors import HoodieError

        return HoodieError
    raise AttributeError(f"module 'hoodie' has no attribute {name!r}")
