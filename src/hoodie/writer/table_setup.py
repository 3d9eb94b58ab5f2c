"""The driver-side setup of a write, the same for every engine: open the table a write
targets or create it, reconcile user options with the table, roll back failed writes, and
resolve the write's settings and the schema it will commit.

A path that holds a different table (other name, other keys, other partitioning) is an
error naming both values; options the user left out are taken from the table's
``hoodie.properties``, as Hudi does.
"""
from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any

import pyarrow as pa

from hoodie.config import options as o
from hoodie.config.options import HoodieConfig
from hoodie.config.table_config import TableConfig
from hoodie.errors import ConfigError, FileAlreadyExistsError, TableError, UnsupportedTableError
from hoodie.formats.avro_schema import arrow_to_avro_schema, avro_schema_json
from hoodie.formats.meta_columns import data_fields, stored_layout
from hoodie.index.base import RECORD_INDEX, SliceReading
from hoodie.index.bucket import BucketSpec
from hoodie.index.bucket_table import bucket_table_properties, check_bucket_count, check_recorded, recorded_options
from hoodie.metadata_table.index_lookup import MetadataBloomSource, RecordIndexLocator, has_bloom_filters, has_record_index
from hoodie.metadata_table.listing import listed_through_metadata, metadata_listing
from hoodie.metadata_table.settings import MetadataSettings
from hoodie.metadata_table.sync import initialise as initialise_metadata_table
from hoodie.metadata_table.sync import prepare_metadata_table
from hoodie.storage.base import Storage
from hoodie.table.home import check_home
from hoodie.table.slice_reader.instants import InstantFilter
from hoodie.table.slice_reader.merge_rules import MergeConfig, MergeMode
from hoodie.table.table import HoodieTable
from hoodie.timeline.instant import Action
from hoodie.writer.keygen import KeyGenerator
from hoodie.writer.schema import INTERNAL_PREFIX, reconcile
from hoodie.writer.settings import PreparedWrite, WriteSettings, bucket_spec, commit_extra_metadata
from hoodie.writer.table_services import TableServices

# hoodie.properties key -> write option it provides a default for
_TABLE_TO_OPTION = {
    "hoodie.table.recordkey.fields": o.RECORD_KEY_FIELD.key,
    "hoodie.table.partition.fields": o.PARTITION_PATH_FIELD.key,
    "hoodie.table.keygenerator.class": o.KEYGEN_CLASS.key,
    "hoodie.datasource.write.hive_style_partitioning": o.HIVE_STYLE.key,
    "hoodie.datasource.write.partitionpath.urlencode": o.URL_ENCODE.key,
    "hoodie.keygen.timebased.timestamp.type": o.TS_TYPE.key,
    "hoodie.keygen.timebased.output.dateformat": o.TS_OUTPUT_FORMAT.key,
    "hoodie.keygen.timebased.input.dateformat": o.TS_INPUT_FORMAT.key,
    "hoodie.keygen.timebased.timezone": o.TS_TIMEZONE.key,
    "hoodie.keygen.timebased.input.timezone": o.TS_INPUT_TIMEZONE.key,
    "hoodie.keygen.timebased.output.timezone": o.TS_OUTPUT_TIMEZONE.key,
    "hoodie.keygen.timebased.timestamp.scalar.time.unit": o.TS_SCALAR_UNIT.key,
    "hoodie.populate.meta.fields": o.POPULATE_META_FIELDS.key,
}


def effective_config(config: HoodieConfig, table_config: TableConfig, path: str) -> HoodieConfig:
    """User options completed from, and checked against, an existing table."""
    defaults: dict[str, str] = {}
    for table_key, option_key in _TABLE_TO_OPTION.items():
        if table_key in table_config.props:
            defaults[option_key] = table_config.props[table_key]
    if table_config.precombine_field:
        defaults[o.PRECOMBINE_FIELD.key] = table_config.precombine_field
    defaults.update(recorded_options(table_config.props))
    defaults[o.TABLE_TYPE.key] = table_config.table_type
    if "hoodie.table.keygenerator.class" not in table_config.props and table_config.keygen_class:
        defaults[o.KEYGEN_CLASS.key] = table_config.keygen_class
    name = config.get(o.TABLE_NAME)
    if name is not None and name != table_config.name:
        raise TableError(f"{path} holds table {table_config.name!r}, not {name!r}")
    _same(config, o.RECORD_KEY_FIELD, table_config.record_key_fields, path)
    _same(config, o.PARTITION_PATH_FIELD, table_config.partition_fields, path)
    if config.has(o.TABLE_TYPE) and config.get(o.TABLE_TYPE) != table_config.table_type:
        raise TableError(f"{path} is a {table_config.table_type} table, not {config.get(o.TABLE_TYPE)}")
    check_recorded(config, table_config.props, path)
    return config.with_defaults(defaults)


def _same(config: HoodieConfig, opt: o.Option, table_value: tuple[str, ...], path: str) -> None:
    if config.has(opt):
        given = tuple(config.get(opt) or ())
        if given != tuple(table_value):
            raise TableError(f"{path}: {opt.key}={','.join(given)!r} but the table uses {','.join(table_value)!r}")


def new_table_properties(config: HoodieConfig, keygen: KeyGenerator, create_schema: str | None, bucket: BucketSpec | None = None) -> dict[str, str]:
    """The ``hoodie.properties`` of a new table; a bucket-indexed one records its bucket
    options (:mod:`hoodie.index.bucket_table`), which later writes are checked against."""
    name = config.get(o.TABLE_NAME)
    if not name:
        raise ConfigError(f"missing required option {o.TABLE_NAME.key} to create a table")
    table_type = config.get(o.TABLE_TYPE)
    props = {
        "hoodie.table.name": name,
        "hoodie.table.type": table_type,
        "hoodie.table.version": "6",
        "hoodie.timeline.layout.version": "1",
        "hoodie.table.timeline.timezone": "UTC",
        "hoodie.archivelog.folder": "archived",
        "hoodie.table.base.file.format": "PARQUET",
        "hoodie.populate.meta.fields": "true",
        "hoodie.datasource.write.drop.partition.columns": "false",
        **keygen.table_properties(),
    }
    db = config.get(o.DATABASE_NAME)
    if db:
        props["hoodie.database.name"] = db
    precombine = config.get(o.PRECOMBINE_FIELD)
    if precombine:
        props["hoodie.table.precombine.field"] = precombine
    if table_type == "MERGE_ON_READ":
        props["hoodie.compaction.payload.class"] = "org.apache.hudi.common.model.DefaultHoodieRecordPayload"
        props["hoodie.compaction.record.merger.strategy"] = "eeb8d96f-b1e4-49fd-bbf8-28ac514178e5"
    if create_schema:
        props["hoodie.table.create.schema"] = create_schema
    if bucket is not None:
        props.update(bucket_table_properties(bucket))
    return props


def open_or_create(
    path: str,
    storage: Storage,
    config: HoodieConfig,
    keygen_for_create: Callable[[HoodieConfig], KeyGenerator],
    create_schema: str | None,
    bucket: BucketSpec | None = None,
) -> tuple[HoodieTable, HoodieConfig]:
    """The target table and the effective write config."""
    if not HoodieTable.exists(path, storage):
        try:
            check_home(path, storage, config.get(o.CREATE_BESIDE_FOREIGN_FILES))
            keygen = keygen_for_create(config)
            return HoodieTable.create(path, new_table_properties(config, keygen, create_schema, bucket), storage), config
        except (FileAlreadyExistsError, TableError):
            if not HoodieTable.exists(path, storage):
                raise
            # another writer created the table meanwhile (its folders are what check_home
            # found, or its hoodie.properties is in place): this write goes to that table
    table = HoodieTable.open(path, storage)
    if table.config.version != 6:
        raise UnsupportedTableError(f"{path} is a version {table.config.version} table; hoodie writes version 6 only")
    if not table.config.populate_meta_fields:
        raise UnsupportedTableError(f"{path} has hoodie.populate.meta.fields=false; hoodie writes tables with meta fields only")
    return table, effective_config(config, table.config, path)


def resolve_operation(config: HoodieConfig, operation: str | None) -> str:
    op = (operation or config.get(o.OPERATION) or "upsert").lower()
    o.OPERATION.convert(op)
    return op


def validate_options(config: HoodieConfig) -> None:
    mode = config.get(o.CONCURRENCY_MODE)
    if mode != o.SINGLE_WRITER:
        raise ConfigError(
            f"{o.CONCURRENCY_MODE.key}={mode} is not supported yet: hoodie takes one writer at a time per table ({o.SINGLE_WRITER}); "
            "a second writer rolls back the first one's unfinished write"
        )


def prepare_write(
    path: str,
    options: Mapping[str, Any] | None,
    operation: str | None,
    batch_schema: pa.Schema,
    storage: Storage,
    services: TableServices,
    check_new_table_batch: Callable[[KeyGenerator], None] | None = None,
    extra_metadata: Mapping[str, str] | None = None,
) -> PreparedWrite:
    """Driver-side setup shared by every engine: table, effective config, recovery (an
    interrupted restore finished, failed writes rolled back by ``services``), and the
    extra metadata the commit will record (:func:`~hoodie.writer.settings.commit_extra_metadata`:
    prefixed options and ``extra_metadata``).

    ``check_new_table_batch`` is called with the key generator before a table that does
    not exist yet is created, so that a batch refused for its keys or partition values
    leaves no table behind (on an existing table the pipeline checks them before it writes).
    """
    config = HoodieConfig.of(options)
    validate_options(config)
    services.check_settings(config)
    extra = commit_extra_metadata(config, extra_metadata)  # refused before anything is written
    op = resolve_operation(config, operation)
    bucket = bucket_spec(config, op)  # refused bucket options leave no table behind
    create_schema = (
        avro_schema_json(arrow_to_avro_schema(pa.schema(data_fields(batch_schema)), config.get(o.TABLE_NAME) or "table")) if op != "delete" else None
    )

    def keygen_for_create(create_config: HoodieConfig) -> KeyGenerator:
        keygen = KeyGenerator.from_config(create_config)
        if check_new_table_batch is not None:
            check_new_table_batch(keygen)
        return keygen

    table, config = open_or_create(path, storage, config, keygen_for_create, create_schema, bucket)
    validate_options(config)
    keygen = KeyGenerator.from_config(config)
    # the metadata table: deleted when disabled, else updated by every completion from
    # here on (recovery's rollbacks too), then built where it is missing
    metadata = MetadataSettings.of(config)
    check_index_needs(config, metadata, path)
    table = services.recover(prepare_metadata_table(table, metadata))
    settings = WriteSettings.of(config, op)
    if settings.index.bucket is not None and not recorded_options(table.config.props):
        # a table that does not record its number of buckets (Apache Hudi's): one footer
        check_bucket_count(table, settings.index.bucket)
    table = initialise_metadata_table(table, metadata)
    # the write's views (and its inline services') list through the metadata table it keeps;
    # recovery and initialisation list storage
    table = listed_through_metadata(table, metadata_listing(config))
    return PreparedWrite(table, config, keygen, with_index_sources(settings, table, config), services, extra)


def check_index_needs(config: HoodieConfig, metadata: MetadataSettings, path: str) -> None:
    """RECORD_INDEX lives in the metadata table: a write that would delete it (metadata
    off, or its record_index partition off) is refused before anything changes."""
    if config.get(o.INDEX_TYPE) != RECORD_INDEX:
        return
    if not metadata.enable:
        raise ConfigError(
            f"{o.INDEX_TYPE.key}=RECORD_INDEX looks keys up in the metadata table's record index, but "
            f"{o.METADATA_ENABLE.key} is off for this write of {path} (which would delete the metadata table): "
            f"set {o.METADATA_ENABLE.key}=true"
        )
    if not metadata.record_index:
        raise ConfigError(
            f"{o.INDEX_TYPE.key}=RECORD_INDEX looks keys up in the metadata table's record index, but "
            f"{o.METADATA_RECORD_INDEX_ENABLE.key} is off for this write of {path} (which would drop that partition, "
            f"or never build it): set {o.METADATA_RECORD_INDEX_ENABLE.key}=true"
        )


def with_index_sources(settings: WriteSettings, table: HoodieTable, config: HoodieConfig) -> WriteSettings:
    """The write's index wired to the metadata table: RECORD_INDEX to its record index
    (which must be complete: built first when ``hoodie.metadata.record.index.enable``),
    BLOOM with ``hoodie.bloom.index.use.metadata`` to its bloom filters when complete;
    BLOOM and SIMPLE on a merge-on-read table to the reading of log files' keys."""
    index = settings.index
    if not index.is_global:
        index = replace(index, slice_reading=log_key_reading(table))
        settings = replace(settings, index=index)
    if index.index_type == RECORD_INDEX:
        if not has_record_index(table):
            raise ConfigError(
                f"{o.INDEX_TYPE.key}=RECORD_INDEX needs a complete record_index partition in the metadata table of {table.base_path} "
                f"(hoodie.table.metadata.partitions: {','.join(table.config.metadata_partitions) or 'none'}): "
                f"set {o.METADATA_RECORD_INDEX_ENABLE.key}=true to build it first"
            )
        return replace(settings, index=replace(index, locator=RecordIndexLocator(table)))
    if index.index_type == "BLOOM" and config.get(o.BLOOM_INDEX_USE_METADATA) and has_bloom_filters(table):
        return replace(settings, index=replace(index, bloom_source=MetadataBloomSource(table)))
    return settings


def log_key_reading(table: HoodieTable) -> SliceReading | None:
    """How the index reads the keys of a merge-on-read table's log files (some keys live
    only there: :mod:`hoodie.index.log_keys`); None on a copy-on-write table, one without
    a schema yet, or one whose custom merge no reader applies (its logs are not merged)."""
    if table.config.table_type != "MERGE_ON_READ":
        return None
    schema = table.data_schema()
    merge = MergeConfig.for_table(table.config)
    if schema is None or merge.mode is MergeMode.CUSTOM:
        return None
    uncompacted = frozenset(i.timestamp for i in table.timeline.completed_writes() if i.action != Action.COMMIT)
    return SliceReading(stored_layout(schema), merge, InstantFilter.of_timeline(table.timeline), uncompacted)


def table_schema_after(prepared: PreparedWrite, batch_schema: pa.Schema) -> pa.Schema:
    """The data schema the commit will record (a delete batch never changes it)."""
    current = prepared.table.data_schema()
    if prepared.settings.operation == "delete":
        if current is None:
            return pa.schema(data_fields(batch_schema))
        return current
    incoming = pa.schema([f for f in data_fields(batch_schema) if not f.name.startswith(INTERNAL_PREFIX)])
    return reconcile(current, incoming, prepared.settings.allow_column_drop)
