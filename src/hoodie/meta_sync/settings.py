"""Hudi's meta-sync options, parsed once: whether to sync, and where to.

``hoodie.datasource.meta.sync.enable`` or ``hoodie.datasource.hive_sync.enable`` turns
it on; ``hoodie.datasource.hive_sync.database`` / ``.table`` / ``.partition_fields`` /
``.partition_extractor_class`` / ``.skip_ro_suffix`` / ``.table.strategy`` /
``.auto_create_database`` and ``hoodie.meta.sync.decode_partition`` /
``.metadata_file_listing`` say how, with Hudi's defaults (the table's name and partition
fields; the extractor inferred from the partition fields).
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from hoodie.config import options as o
from hoodie.config.options import HoodieConfig
from hoodie.config.table_config import TableConfig
from hoodie.errors import ConfigError

MULTI_PART = "MultiPartKeysValueExtractor"
HIVE_STYLE = "HiveStylePartitionValueExtractor"
NON_PARTITIONED = "NonPartitionedExtractor"
_EXTRACTORS = (MULTI_PART, HIVE_STYLE, NON_PARTITIONED)


@dataclass(frozen=True)
class SyncSettings:
    """Where and how a table is registered."""

    enabled: bool
    database: str
    table: str | None  # None: the table's own name
    partition_fields: tuple[str, ...] | None  # None: the table's partition fields
    extractor: str | None  # None: inferred from the partition fields
    skip_ro_suffix: bool = False
    strategy: str = "ALL"
    auto_create_database: bool = True
    decode_partition: bool = False  # percent-decode partition values (also when the table encodes them)
    metadata_listing: bool = True  # find partitions through the metadata table

    @classmethod
    def of(cls, options: Mapping[str, Any] | None) -> SyncSettings:
        return cls.from_config(HoodieConfig.of(options))

    @classmethod
    def from_config(cls, config: HoodieConfig) -> SyncSettings:
        """The settings of options already checked (a caller that needs the config too)."""
        extractor = config.get(o.SYNC_PARTITION_EXTRACTOR)
        if extractor is not None:
            # Hudi takes a class name (org.apache.hudi.hive.MultiPartKeysValueExtractor)
            short = extractor.rsplit(".", 1)[-1]
            if short not in _EXTRACTORS:
                raise ConfigError(
                    f"unsupported {o.SYNC_PARTITION_EXTRACTOR.key}={extractor!r}: expected one of {', '.join(_EXTRACTORS)}"
                )
            extractor = short
        fields = config.get(o.SYNC_PARTITION_FIELDS) if config.has(o.SYNC_PARTITION_FIELDS) else None
        table = config.get(o.SYNC_TABLE)
        return cls(
            enabled=bool(config.get(o.META_SYNC_ENABLE) or config.get(o.HIVE_SYNC_ENABLE)),
            database=_identifier(config.get(o.SYNC_DATABASE), o.SYNC_DATABASE.key),
            table=_identifier(table, o.SYNC_TABLE.key) if table else None,
            partition_fields=fields,
            extractor=extractor,
            skip_ro_suffix=config.get(o.SYNC_SKIP_RO_SUFFIX),
            strategy=config.get(o.SYNC_TABLE_STRATEGY),
            auto_create_database=config.get(o.SYNC_AUTO_CREATE_DATABASE),
            decode_partition=config.get(o.SYNC_DECODE_PARTITION),
            metadata_listing=config.get(o.SYNC_METADATA_LISTING),
        )

    def table_name(self, config: TableConfig) -> str:
        return self.table or _identifier(config.name, "hoodie.table.name")

    def fields(self, config: TableConfig) -> tuple[str, ...]:
        return self.partition_fields if self.partition_fields is not None else config.partition_fields

    def extractor_for(self, config: TableConfig) -> str:
        """The extractor given, or the one Hudi infers: none without partition fields,
        hive-style for one field of a hive-style table, else one segment per field."""
        if self.extractor is not None:
            return self.extractor
        fields = self.fields(config)
        if not fields:
            return NON_PARTITIONED
        return HIVE_STYLE if len(fields) == 1 and config.hive_style_partitioning else MULTI_PART


def _identifier(name: str, key: str) -> str:
    # the names go into SQL and the metastore: letters, digits and underscores, as Hive allows
    if not name or not all(c.isalnum() or c == "_" for c in name) or not name.isascii():
        raise ConfigError(f"{key}={name!r} cannot name a catalog table or database: use letters, digits and underscores")
    return name
