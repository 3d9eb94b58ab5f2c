"""``hoodie.write``, ``hoodie.read`` and ``hoodie.dataset``: the in-process entry points (no JVM)."""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from hoodie.engine.base import Engine
from hoodie.storage.base import Storage

if TYPE_CHECKING:
    import pyarrow.dataset as ds


def write(
    data: pa.Table | pa.RecordBatch,
    path: str,
    options: Mapping[str, Any],
    *,
    engine: Engine | None = None,
    storage: Storage | None = None,
    extra_metadata: Mapping[str, str] | None = None,
) -> str:
    """Write ``data`` to the table at ``path`` as one commit and return its instant time.

    ``options`` are Hudi's (``hoodie.table.name``, ``hoodie.datasource.write.recordkey.field``,
    ``hoodie.datasource.write.operation``, ...); the table is created on first write.
    ``extra_metadata`` (strings) is recorded in the commit's extraMetadata, with the options
    whose key starts with ``hoodie.datasource.write.commitmeta.key.prefix`` (``_``).
    """
    from hoodie.errors import ConfigError
    from hoodie.meta_sync import SyncSettings
    from hoodie.services.for_writers import WRITER_SERVICES
    from hoodie.timeline_server.embedded import process_server_for
    from hoodie.writer.client import WriteClient

    if SyncSettings.of(options).enabled:
        # no catalog in process: saying so beats a write that silently registers nothing
        raise ConfigError(
            "hoodie.datasource.meta.sync.enable / hive_sync.enable registers the table in a Spark catalog: write with "
            "df.write.format('hoodie'), or call hoodie.spark.sync_to_catalog(spark, path) after this write"
        )
    return WriteClient(path, options, services=WRITER_SERVICES, engine=engine, storage=storage, timeline_server=process_server_for).write(
        data, extra_metadata=extra_metadata
    )


def read(
    path: str,
    options: Mapping[str, Any] | None = None,
    *,
    filters: Sequence[Any] | None = None,
    engine: Engine | None = None,
    storage: Storage | None = None,
) -> pa.Table:
    """Read the table at ``path``: snapshot (default), time travel (``as.of.instant``) or
    incremental (``hoodie.datasource.query.type=incremental`` with begin/end instants).

    ``filters`` keep the rows they match, in pyarrow's form (``[("fare", ">", 10)]``, a
    list of such lists for OR); files the metadata table's column statistics rule out are
    not read (``hoodie.enable.data.skipping``)."""
    from hoodie.query import read_table

    return read_table(path, options, storage=storage, engine=engine, filters=filters)


def dataset(path: str, options: Mapping[str, Any] | None = None, storage: Storage | None = None, *, filters: Sequence[Any] | None = None) -> ds.Dataset:
    """The table at ``path`` as a lazy ``pyarrow.dataset.Dataset`` of its snapshot (or
    read-optimized view, time travel or incremental pull, by the same options as
    :func:`read`), for
    DuckDB, Polars and pandas (Daft: :func:`to_daft`): projections and filters reach the Parquet scan,
    partitions and row groups are pruned, and merge-on-read slices with log files are
    merged only as a scan reaches them. ``filters`` (as for :func:`read`) also skip the
    files the metadata table's column statistics rule out, and filter every scan."""
    from hoodie.query.dataset import open_dataset

    return open_dataset(path, options, storage, filters)


def to_daft(path: str, options: Mapping[str, Any] | None = None, storage: Storage | None = None, *, filters: Sequence[Any] | None = None) -> Any:
    """The table at ``path`` as a lazy Daft DataFrame (``daft.DataFrame``), read as
    :func:`dataset` reads it: Daft's projections, filters and limits reach the scan of
    each Parquet fragment and merged slice. Needs the ``daft`` package."""
    from hoodie.query.daft_source import HoodieDaftSource

    return HoodieDaftSource(path, options, storage, filters).read()
