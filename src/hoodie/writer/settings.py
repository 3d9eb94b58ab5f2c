"""The typed settings of one write, resolved once on the driver and shipped to every task
(picklable), the write a driver has prepared (table, config, key generator, settings, the
table services it runs and the extra metadata its commit records)."""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from hoodie.config import options as o
from hoodie.config.options import HoodieConfig
from hoodie.errors import ConfigError
from hoodie.formats.parquet import BloomSettings, ParquetSettings
from hoodie.index.base import IndexSettings
from hoodie.table.table import HoodieTable
from hoodie.timeline.commit_metadata import STORAGE_CALLS
from hoodie.writer.keygen import KeyGenerator
from hoodie.writer.planner import SizingSettings
from hoodie.writer.table_services import TableServices

TAGGING_OPERATIONS = ("upsert", "delete")


@dataclass(frozen=True)
class WriteSettings:
    """Typed settings of one write, resolved from options and the table."""

    operation: str
    ordering_field: str | None
    combine: bool
    drop_duplicates: bool
    allow_column_drop: bool
    index: IndexSettings
    sizing: SizingSettings
    parquet: ParquetSettings
    bloom: BloomSettings

    @property
    def tags_records(self) -> bool:
        """Whether the write looks its keys up in the index: upsert and delete always;
        insert only to drop keys that already exist (``hoodie.datasource.write.insert.drop.duplicates``)."""
        return self.operation in TAGGING_OPERATIONS or (self.operation == "insert" and self.drop_duplicates)

    @classmethod
    def of(cls, config: HoodieConfig, operation: str) -> WriteSettings:
        combine = {
            "upsert": config.get(o.COMBINE_BEFORE_UPSERT),
            "delete": config.get(o.COMBINE_BEFORE_DELETE),
        }.get(operation, config.get(o.COMBINE_BEFORE_INSERT) or config.get(o.INSERT_DROP_DUPS))
        return cls(
            operation=operation,
            ordering_field=config.get(o.PRECOMBINE_FIELD),
            combine=bool(combine),
            drop_duplicates=bool(config.get(o.INSERT_DROP_DUPS)),
            allow_column_drop=bool(config.get(o.ALLOW_COLUMN_DROP)),
            index=IndexSettings(
                config.get(o.INDEX_TYPE), bool(config.get(o.BLOOM_PRUNE_BY_RANGES)), bool(config.get(o.RECORD_INDEX_UPDATE_PARTITION_PATH))
            ),
            sizing=SizingSettings(
                small_file_limit=config.get(o.SMALL_FILE_LIMIT),
                max_file_size=config.get(o.MAX_FILE_SIZE),
                record_size_estimate=config.get(o.RECORD_SIZE_ESTIMATE),
                auto_split=bool(config.get(o.INSERT_AUTO_SPLIT)),
                insert_split_size=config.get(o.INSERT_SPLIT_SIZE),
                estimation_threshold=config.get(o.RECORD_SIZE_MIN_COMMIT),
            ),
            parquet=ParquetSettings(config.get(o.PARQUET_CODEC), config.get(o.PARQUET_PAGE_SIZE), config.get(o.PARQUET_BLOCK_SIZE)),
            bloom=BloomSettings(config.get(o.BLOOM_NUM_ENTRIES), config.get(o.BLOOM_FPP), config.get(o.BLOOM_FILTER_TYPE), config.get(o.BLOOM_MAX_ENTRIES)),
        )


@dataclass(frozen=True)
class PreparedWrite:
    """A write whose table is open, failed writes rolled back and settings resolved."""

    table: HoodieTable
    config: HoodieConfig
    keygen: KeyGenerator
    settings: WriteSettings
    services: TableServices
    # what the commit records in its extraMetadata besides the schema (commit_extra_metadata)
    extra_metadata: Mapping[str, str] = field(default_factory=dict)


# extraMetadata keys the commit itself writes: a caller's value would replace what readers rely on
RESERVED_EXTRA_METADATA = ("schema", STORAGE_CALLS)


def commit_extra_metadata(config: HoodieConfig, given: Mapping[str, str] | None = None) -> dict[str, str]:
    """The extra metadata a write's commit records: the options whose key starts with
    ``hoodie.datasource.write.commitmeta.key.prefix`` (``_`` by default; as Apache Hudi's
    datasource takes them), then ``given`` (a caller's own, e.g. a streaming checkpoint),
    which wins over an option of the same key. Keys and values are strings; the keys the
    commit writes itself (:data:`RESERVED_EXTRA_METADATA`) are refused."""
    prefix = config.get(o.COMMIT_METADATA_KEY_PREFIX)
    extra = {k: v for k, v in config.raw.items() if k.startswith(prefix)}
    for key, value in (given or {}).items():
        if not isinstance(key, str) or not isinstance(value, str):
            raise ConfigError(f"extra metadata {key!r}: {value!r} must map a string to a string (commit metadata is JSON text)")
        extra[key] = value
    reserved = sorted(set(extra) & set(RESERVED_EXTRA_METADATA))
    if reserved:
        raise ConfigError(f"extra metadata key {reserved[0]!r} is written by the commit itself; choose another key")
    return extra
