"""Queries over a table: snapshot, time travel, read-optimized and incremental.

:mod:`planner` decides which file slices a query reads (timeline and file-system view
only); :mod:`slices` turns them into one Engine task per slice: :mod:`reader` reads a
base file into the query schema, :mod:`merge` merges a merge-on-read slice (base file
and log files, replayed by :mod:`log_scan` under the rules of :mod:`merge_rules` and
:mod:`ordering`, seeing the instants an :class:`~.instants.InstantFilter` admits);
:mod:`snapshot` and :mod:`incremental` put these together; :func:`read_table` is
``hoodie.read(path, options)``: it parses Hudi's read options and dispatches. The query
layer never writes.
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pyarrow as pa

from hoodie.config import options as opts
from hoodie.config.options import HoodieConfig
from hoodie.engine import Engine
from hoodie.errors import ConfigError
from hoodie.query.incremental import read_incremental
from hoodie.query.instants import InstantFilter
from hoodie.query.merge import (
    MergedSlice,
    MergeStats,
    merge_slice,
    merge_slice_for_compaction,
    read_slice,
    stored_meta_schema,
)
from hoodie.query.merge_rules import MergeConfig, MergeMode
from hoodie.query.planner import (
    IncrementalPlan,
    as_instant,
    plan_incremental,
    plan_snapshot,
)
from hoodie.query.snapshot import read_optimized, read_snapshot
from hoodie.storage.base import Storage
from hoodie.table.table import HoodieTable

__all__ = [
    "IncrementalPlan",
    "InstantFilter",
    "MergeConfig",
    "MergeMode",
    "MergeStats",
    "MergedSlice",
    "merge_slice",
    "merge_slice_for_compaction",
    "plan_incremental",
    "plan_snapshot",
    "read_incremental",
    "read_optimized",
    "read_slice",
    "read_snapshot",
    "read_table",
    "stored_meta_schema",
]


def _instant_option(config: HoodieConfig, option: opts.Option[Any]) -> str | None:
    raw = config.get(option)
    if raw is None:
        return None
    try:
        # Any all-digit value is taken as is: "0" and "000" are the usual way to say
        # "from the beginning" in incremental pulls.
        return as_instant(str(raw))
    except ValueError:
        raise ConfigError(
            f"invalid value {raw!r} for option {option.key}: expected an instant time "
            "(yyyyMMddHHmmssSSS) or a timestamp (yyyy-MM-dd HH:mm:ss[.SSS])"
        ) from None


def read_table(
    path: str,
    options: Mapping[str, str] | None = None,
    storage: Storage | None = None,
    engine: Engine | None = None,
) -> pa.Table:
    """``hoodie.read(path, options)``: read the table at ``path`` as Hudi's options say.

    ``hoodie.datasource.query.type`` picks ``snapshot`` (default; with ``as.of.instant``
    for time travel), ``read_optimized`` (base files only) or ``incremental`` (needs
    ``hoodie.datasource.read.begin.instanttime``; ``...end.instanttime`` is optional).
    """
    config = HoodieConfig.of(options)
    query_type = config.get(opts.QUERY_TYPE)
    as_of = _instant_option(config, opts.AS_OF_INSTANT)
    begin = _instant_option(config, opts.BEGIN_INSTANT)
    end = _instant_option(config, opts.END_INSTANT)
    if query_type == "incremental":
        if begin is None:
            raise ConfigError(
                f"an incremental query needs option {opts.BEGIN_INSTANT.key} "
                "(the instant after which changes are pulled; use 0 for the beginning)"
            )
        if as_of is not None:
            raise ConfigError(f"option {opts.AS_OF_INSTANT.key} (time travel) cannot be used with an incremental query")
        table = HoodieTable.open(path, storage)
        return read_incremental(table, begin, end, engine=engine)
    if begin is not None or end is not None:
        key = opts.BEGIN_INSTANT.key if begin is not None else opts.END_INSTANT.key
        raise ConfigError(f"option {key} needs {opts.QUERY_TYPE.key}=incremental (it is {query_type})")
    table = HoodieTable.open(path, storage)
    if query_type == "read_optimized":
        return read_optimized(table, as_of, engine=engine)
    return read_snapshot(table, as_of, engine=engine)
