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
from hoodie.index.bucket import BUCKET, BucketSpec
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
        insert only to drop keys that already exist (``hoodie.datasource.write.insert.drop.duplicates``);
        every write with the bucket index, which places every record in its bucket's file group."""
        if self.index.bucket is not None:
            return True
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
                config.get(o.INDEX_TYPE),
                bool(config.get(o.BLOOM_PRUNE_BY_RANGES)),
                bool(config.get(o.RECORD_INDEX_UPDATE_PARTITION_PATH)),
                bucket=bucket_spec(config, operation),
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


def bucket_spec(config: HoodieConfig, operation: str) -> BucketSpec | None:
    """BUCKET's number of buckets and hash fields (by default the record key fields), None
    for other index types; refused options are errors (:func:`check_bucket_options`)."""
    if config.get(o.INDEX_TYPE) != BUCKET:
        return None
    hash_fields = check_bucket_options(config, operation)
    return BucketSpec(config.get(o.BUCKET_INDEX_NUM_BUCKETS), hash_fields)


def check_bucket_options(config: HoodieConfig, operation: str) -> tuple[str, ...]:
    """The bucket index's hash fields, checked as Apache Hudi checks them (some of the
    record key fields, when those are known), with its engine (SIMPLE only) and the
    operation (no insert dropping duplicates: the index knows a key's file group, not
    whether the key is stored there). Also run before a table is created, so a refused
    write leaves nothing behind."""
    config.get(o.BUCKET_INDEX_ENGINE)  # CONSISTENT_HASHING is refused, naming the option
    record_key = config.get(o.RECORD_KEY_FIELD)
    key_fields = tuple(record_key) if record_key else ()
    given: tuple[str, ...] | None = config.get(o.BUCKET_INDEX_HASH_FIELD)
    hash_fields = given or key_fields
    outside = [f for f in hash_fields if f not in key_fields]
    if outside and key_fields:
        raise ConfigError(
            f"{o.BUCKET_INDEX_HASH_FIELD.key}={','.join(hash_fields)!r} must be a subset of the record key fields "
            f"({','.join(key_fields)}): {', '.join(outside)} is not one"
        )
    if operation == "insert" and config.get(o.INSERT_DROP_DUPS):
        raise ConfigError(
            f"{o.INSERT_DROP_DUPS.key}=true with {o.INDEX_TYPE.key}=BUCKET: the bucket index places keys without knowing which "
            "the table holds; write with operation upsert instead (an existing key is then updated, not duplicated)"
        )
    return tuple(hash_fields)


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
