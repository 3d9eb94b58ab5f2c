"""What a table is registered as: names, columns, partitions and properties.

Names follow Apache Hudi's Hive sync: a copy-on-write table is ``<t>`` (snapshot); a
merge-on-read table is ``<t>_ro`` (read-optimized: base files only), ``<t>_rt``
(snapshot: base files merged with their logs) and ``<t>`` (snapshot, Hudi's "origin"
table); ``hoodie.datasource.hive_sync.skip_ro_suffix`` names the read-optimized table
``<t>`` instead (then there is no origin table), and ``...table.strategy`` RO or RT
registers only that one, as ``<t>``.

Columns are what a read of the table returns (the query layer's output schema: the meta
columns, then the data columns of the latest commit's schema), with the partition
columns last, as Hive and Spark keep them. Partitions are those holding live file
slices now; their values come from their paths as Hudi's extractors read them
(:func:`partition_values`), their location is the partition folder.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from urllib.parse import unquote

import pyarrow as pa

from hoodie.errors import ConfigError, PartitionPathError, TableError
from hoodie.meta_sync.hive_types import hive_type
from hoodie.meta_sync.settings import HIVE_STYLE, NON_PARTITIONED, SyncSettings
from hoodie.query.reader import output_schema
from hoodie.storage.paths import under
from hoodie.table.table import HoodieTable

# the table property Hudi's sync tools record the last instant synced under
LAST_COMMIT_TIME_SYNC = "last_commit_time_sync"
QUERY_TYPE_OPTION = "hoodie.datasource.query.type"
SNAPSHOT = "snapshot"
READ_OPTIMIZED = "read_optimized"


@dataclass(frozen=True)
class CatalogColumn:
    name: str
    type: str  # Hive type name


@dataclass(frozen=True)
class CatalogPartition:
    """One partition: its values (one per partition column, as strings) and folder."""

    values: tuple[str, ...]
    path: str  # relative to the table
    location: str


@dataclass(frozen=True)
class CatalogTable:
    """One catalog table over the hoodie table at ``base_path``."""

    database: str
    name: str
    query_type: str  # snapshot or read_optimized
    base_path: str
    schema: pa.Schema  # columns in catalog order: partition columns last
    partition_columns: tuple[str, ...]
    properties: dict[str, str] = field(default_factory=dict)

    @property
    def qualified_name(self) -> str:
        return f"{self.database}.{self.name}"

    @property
    def options(self) -> dict[str, str]:
        """The data source options a read of it takes (besides the path)."""
        return {QUERY_TYPE_OPTION: self.query_type}

    def columns(self) -> list[CatalogColumn]:
        return [CatalogColumn(f.name, hive_type(f.type, f.name)) for f in self.schema]


@dataclass(frozen=True)
class SyncPlan:
    tables: tuple[CatalogTable, ...]
    partitions: tuple[CatalogPartition, ...]
    instant: str | None  # the latest completed write, recorded as last_commit_time_sync


def plan_sync(table: HoodieTable, settings: SyncSettings) -> SyncPlan:
    """What ``table`` is registered as, by ``settings`` (module docstring)."""
    schema = output_schema(table)
    if schema is None:
        raise TableError(f"{table.base_path} has no completed commit, so no schema to register in a catalog")
    fields = settings.fields(table.config)
    missing = [f for f in fields if schema.get_field_index(f) < 0]
    if missing:
        raise ConfigError(
            f"partition field(s) {', '.join(map(repr, missing))} of the catalog sync are not columns of {table.base_path} "
            f"(its columns: {', '.join(schema.names)}); set hoodie.datasource.hive_sync.partition_fields"
        )
    ordered = pa.schema([f for f in schema if f.name not in fields] + [schema.field(f) for f in fields])
    last = table.timeline.last_completed_write()
    instant = last.timestamp if last is not None else None
    properties = {LAST_COMMIT_TIME_SYNC: instant} if instant is not None else {}
    tables = tuple(
        CatalogTable(settings.database, name, query_type, table.base_path, ordered, fields, {**properties, "hoodie.table.type": table.table_type})
        for name, query_type in table_names(table.table_type, settings.table_name(table.config), settings)
    )
    decode = settings.decode_partition or table.config.url_encode_partitions
    partitions = tuple(_partitions(table, fields, settings.extractor_for(table.config), decode)) if fields else ()
    return SyncPlan(tables, partitions, instant)


def table_names(table_type: str, name: str, settings: SyncSettings) -> list[tuple[str, str]]:
    """(catalog name, query type) of each table registered for a table of ``table_type``."""
    if table_type != "MERGE_ON_READ":
        return [(name, SNAPSHOT)]
    if settings.strategy == "RO":
        return [(name, READ_OPTIMIZED)]
    if settings.strategy == "RT":
        return [(name, SNAPSHOT)]
    ro_name = name if settings.skip_ro_suffix else f"{name}_ro"
    names = [(ro_name, READ_OPTIMIZED), (f"{name}_rt", SNAPSHOT)]
    return names if ro_name == name else [*names, (name, SNAPSHOT)]


def _partitions(table: HoodieTable, fields: Sequence[str], extractor: str, decode: bool) -> list[CatalogPartition]:
    view = table.view()
    live = sorted({s.partition_path for s in view.latest_slices_all()})
    return [
        CatalogPartition(partition_values(path, fields, extractor, decode), path, under(table.base_path, path))
        for path in live
        if path != "" or extractor != NON_PARTITIONED
    ]


def partition_values(path: str, fields: Sequence[str], extractor: str, decode: bool = False) -> tuple[str, ...]:
    """The values of ``fields`` a partition path holds, as Hudi's extractors read them:
    one path segment per field, each ``field=value`` or a bare value
    (MultiPartKeysValueExtractor), or one ``field=value`` segment
    (HiveStylePartitionValueExtractor); percent-decoded when the table encodes them."""
    if extractor == NON_PARTITIONED:
        return ()
    segments = path.split("/")
    if extractor == HIVE_STYLE and (len(segments) != 1 or "=" not in segments[0]):
        raise PartitionPathError(f"partition {path!r} is not one field=value folder, as {HIVE_STYLE} reads partitions")
    if len(segments) != len(fields):
        raise PartitionPathError(
            f"partition {path!r} has {len(segments)} folder(s) but the catalog sync has {len(fields)} partition field(s) "
            f"({', '.join(fields)}); set hoodie.datasource.hive_sync.partition_fields"
        )
    values = [s.split("=", 1)[1] if "=" in s else s for s in segments]
    return tuple(unquote(v) for v in values) if decode else tuple(values)
