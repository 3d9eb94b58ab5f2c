"""Every user-facing option, declared once with Hudi's key, type, default and doc."""
from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from hoodie.config.names import closest_name
from hoodie.config.values import boolean, field_list, int_in, lower, number_in, only_value, upper
from hoodie.errors import ConfigError

T = TypeVar("T")


@dataclass(frozen=True)
class Option(Generic[T]):
    """One option: ``key`` is Hudi's name; ``aliases`` are older names that mean the same."""

    key: str
    default: T  # an option with no default has an Optional type: Option[str | None]
    parse: Callable[[str], T]
    doc: str
    aliases: tuple[str, ...] = ()
    choices: tuple[str, ...] = ()

    def convert(self, raw: Any) -> T:
        try:
            value = self.parse(raw) if isinstance(raw, str) else self.parse(str(raw).lower() if isinstance(raw, bool) else str(raw))
        except (ValueError, TypeError) as e:
            raise ConfigError(f"invalid value {raw!r} for option {self.key}: {e}") from None
        if self.choices and value not in self.choices:
            raise ConfigError(f"invalid value {raw!r} for option {self.key}: expected one of {', '.join(self.choices)}")
        return value


OPTIONS: dict[str, Option[Any]] = {}


def _opt(key: str, default: T, parse: Callable[[str], T], doc: str, aliases: tuple[str, ...] = (), choices: tuple[str, ...] = ()) -> Option[T]:
    o = Option(key, default, parse, doc, aliases, choices)
    OPTIONS[key] = o
    return o


# --- table identity -----------------------------------------------------------------------
TABLE_NAME = _opt("hoodie.table.name", None, str, "Table name (required to create a table).", ("hoodie.datasource.write.table.name",))
DATABASE_NAME = _opt("hoodie.database.name", "", str, "Database name, part of the table checksum.")
TABLE_TYPE = _opt(
    "hoodie.datasource.write.table.type",
    "COPY_ON_WRITE",
    upper,
    "COPY_ON_WRITE or MERGE_ON_READ.",
    ("hoodie.table.type",),
    ("COPY_ON_WRITE", "MERGE_ON_READ"),
)
CREATE_BESIDE_FOREIGN_FILES = _opt(
    "hoodie.table.create.allow.foreign.files",
    False,
    boolean,
    "Create a table in a folder that already holds files of no Hudi table (another format's table, CSV files); "
    "refused by default, naming what was found.",
)

# --- keys and partitions ------------------------------------------------------------------
RECORD_KEY_FIELD = _opt("hoodie.datasource.write.recordkey.field", None, field_list, "Comma-separated record key field(s).", ("hoodie.table.recordkey.fields",))
PARTITION_PATH_FIELD: Option[tuple[str, ...]] = _opt(
    "hoodie.datasource.write.partitionpath.field",
    (),
    field_list,
    "Comma-separated partition path field(s); empty for a non-partitioned table.",
    ("hoodie.table.partition.fields",),
)
PRECOMBINE_FIELD = _opt(
    "hoodie.datasource.write.precombine.field",
    None,
    str,
    "Ordering field: the record with the larger value wins.",
    ("hoodie.table.precombine.field", "hoodie.payload.ordering.field", "hoodie.table.ordering.fields"),
)
KEYGEN_CLASS = _opt(
    "hoodie.datasource.write.keygenerator.class",
    None,
    str,
    "Key generator class (Simple, Complex, Nonpartitioned, TimestampBased).",
    ("hoodie.table.keygenerator.class",),
)
KEYGEN_TYPE = _opt(
    "hoodie.datasource.write.keygenerator.type",
    None,
    upper,
    "Key generator type: SIMPLE, COMPLEX, NON_PARTITION, TIMESTAMP.",
    ("hoodie.table.keygenerator.type",),
    ("SIMPLE", "COMPLEX", "NON_PARTITION", "TIMESTAMP", "CUSTOM"),
)
HIVE_STYLE = _opt("hoodie.datasource.write.hive_style_partitioning", False, boolean, "Write partition directories as field=value.")
URL_ENCODE = _opt("hoodie.datasource.write.partitionpath.urlencode", False, boolean, "Percent-encode partition path values.")
TS_TYPE = _opt(
    "hoodie.keygen.timebased.timestamp.type",
    None,
    upper,
    "Timestamp key generator input type.",
    ("hoodie.deltastreamer.keygen.timebased.timestamp.type",),
    ("UNIX_TIMESTAMP", "EPOCHMILLISECONDS", "EPOCHMICROSECONDS", "DATE_STRING", "SCALAR"),
)
TS_INPUT_FORMAT = _opt(
    "hoodie.keygen.timebased.input.dateformat",
    "",
    str,
    "Input date format (Java pattern) for DATE_STRING.",
    ("hoodie.deltastreamer.keygen.timebased.input.dateformat",),
)
TS_OUTPUT_FORMAT = _opt(
    "hoodie.keygen.timebased.output.dateformat",
    "yyyy-MM-dd",
    str,
    "Output date format (Java pattern) of the partition path.",
    ("hoodie.deltastreamer.keygen.timebased.output.dateformat",),
)
TS_TIMEZONE = _opt(
    "hoodie.keygen.timebased.timezone",
    None,
    str,
    "Time zone of the timestamp key generator, in which DATE_STRING values are read and partition dates written "
    "(UTC when neither this nor the input/output time zones are set).",
    ("hoodie.deltastreamer.keygen.timebased.timezone",),
)
TS_INPUT_TIMEZONE = _opt(
    "hoodie.keygen.timebased.input.timezone",
    None,
    str,
    "Time zone DATE_STRING values without an offset are read in, when hoodie.keygen.timebased.timezone is not set (UTC if neither).",
    ("hoodie.deltastreamer.keygen.timebased.input.timezone",),
)
TS_OUTPUT_TIMEZONE = _opt(
    "hoodie.keygen.timebased.output.timezone",
    None,
    str,
    "Time zone partition dates are written in, when hoodie.keygen.timebased.timezone is not set "
    "(otherwise DATE_STRING values' own zone, and UTC for epoch values).",
    ("hoodie.deltastreamer.keygen.timebased.output.timezone",),
)
TS_SCALAR_UNIT = _opt(
    "hoodie.keygen.timebased.timestamp.scalar.time.unit",
    "SECONDS",
    upper,
    "Unit of SCALAR timestamps.",
    (),
    ("SECONDS", "MILLISECONDS", "MICROSECONDS", "DAYS"),
)
CONSISTENT_LOGICAL_TS = _opt("hoodie.datasource.write.keygenerator.consistent.logical.timestamp.enabled", False, boolean, "Accepted for compatibility.")

# --- write --------------------------------------------------------------------------------
OPERATION = _opt(
    "hoodie.datasource.write.operation",
    "upsert",
    lower,
    "Write operation.",
    (),
    ("upsert", "insert", "bulk_insert", "delete", "insert_overwrite", "insert_overwrite_table"),
)
COMMIT_METADATA_KEY_PREFIX = _opt(
    "hoodie.datasource.write.commitmeta.key.prefix",
    "_",
    str,
    "Options whose key starts with this prefix are written into the commit's extraMetadata (key and value as given), "
    "as Apache Hudi's datasource does; such keys are not checked as options.",
)
POPULATE_META_FIELDS = _opt("hoodie.populate.meta.fields", True, boolean, "Fill the five _hoodie_ meta columns.")
COMBINE_BEFORE_INSERT = _opt("hoodie.combine.before.insert", False, boolean, "Deduplicate a batch by key before insert/bulk_insert.")
COMBINE_BEFORE_UPSERT = _opt("hoodie.combine.before.upsert", True, boolean, "Deduplicate a batch by key before upsert.")
COMBINE_BEFORE_DELETE = _opt("hoodie.combine.before.delete", True, boolean, "Deduplicate a batch by key before delete.")
INSERT_DROP_DUPS = _opt("hoodie.datasource.write.insert.drop.duplicates", False, boolean, "On insert, drop incoming records whose key already exists.")
PAYLOAD_CLASS = _opt(
    "hoodie.datasource.write.payload.class",
    "org.apache.hudi.common.model.DefaultHoodieRecordPayload",
    str,
    "Merge payload (event-time semantics).",
    ("hoodie.compaction.payload.class",),
)
SMALL_FILE_LIMIT = _opt("hoodie.parquet.small.file.limit", 104857600, int_in(0), "Files smaller than this receive inserts first (bytes; 0 disables).")
MAX_FILE_SIZE = _opt("hoodie.parquet.max.file.size", 125829120, int_in(1), "Target size of a base file (bytes).")
RECORD_SIZE_ESTIMATE = _opt("hoodie.copyonwrite.record.size.estimate", 1024, int_in(1), "Record size estimate before any commit exists (bytes).")
INSERT_SPLIT_SIZE = _opt("hoodie.copyonwrite.insert.split.size", 500000, int_in(1), "Records per new file group when auto split is off.")
INSERT_AUTO_SPLIT = _opt("hoodie.copyonwrite.insert.auto.split", True, boolean, "Size new file groups from the average record size.")
RECORD_SIZE_MIN_COMMIT = _opt(
    "hoodie.record.size.estimation.threshold",
    1.0,
    number_in(0),
    "Use a past commit for the record size only if it wrote more than threshold × small.file.limit bytes.",
)
PARQUET_CODEC = _opt(
    "hoodie.parquet.compression.codec",
    "gzip",
    lower,
    "Parquet compression codec (gzip at zlib's default level 6, as Apache Hudi writes).",
    (),
    ("gzip", "snappy", "zstd", "lz4", "brotli", "uncompressed", "none"),
)
PARQUET_BLOCK_SIZE = _opt("hoodie.parquet.block.size", 125829120, int_in(1), "Parquet row group size (bytes).")
PARQUET_PAGE_SIZE = _opt("hoodie.parquet.page.size", 1048576, int_in(1), "Parquet page size (bytes).")
LOG_BLOCK_FORMAT = _opt(
    "hoodie.logfile.data.block.format",
    "avro",
    lower,
    "Data block format of merge-on-read log files: avro (Hudi's default) or parquet.",
    (),
    ("avro", "parquet"),
)
MARKERS_TYPE: Option[str | None] = _opt(
    "hoodie.write.markers.type",
    None,
    upper,
    "DIRECT (a marker file per data file) or TIMELINE_SERVER_BASED (marker names batched into a few MARKERS files by "
    "the embedded timeline server); unset: TIMELINE_SERVER_BASED for Spark writes, DIRECT in process.",
    (),
    ("DIRECT", "TIMELINE_SERVER_BASED"),  # markers.DIRECT, markers.TIMELINE_SERVER_BASED (config sits below markers)
)
EMBED_TIMELINE_SERVER = _opt(
    "hoodie.embed.timeline.server", True, boolean, "Run a timeline server in the writing driver (timeline-server-based markers need it)."
)
EMBED_TIMELINE_SERVER_PORT = _opt("hoodie.embed.timeline.server.port", 0, int_in(0, 65535), "Port of the embedded timeline server (0: a free port).")
EMBED_TIMELINE_SERVER_ALLOW_WILDCARD = _opt(
    "hoodie.embed.timeline.server.allow.wildcard",
    False,
    boolean,
    "Let the embedded timeline server bind when spark.driver.host resolves to a wildcard address (0.0.0.0 or ::, every interface).",
)
MARKERS_BATCH_INTERVAL_MS = _opt(
    "hoodie.markers.timeline_server_based.batch.interval_ms",
    0,
    int_in(0),
    "How often the timeline server writes the marker names it received; 0 (hoodie's default): as soon as they arrive and one of "
    "num_threads batch slots is free (group commit), so that a task never waits a whole interval for its marker.",
)
MARKERS_BATCH_THREADS = _opt(
    "hoodie.markers.timeline_server_based.batch.num_threads", 20, int_in(1), "MARKERS files (and threads writing them) per marker directory."
)
MARKERS_DIR_MAX_BYTES = _opt(
    "hoodie.markers.timeline_server_based.dir.max_bytes",
    32 * 1024 * 1024,
    int_in(1024),
    "Bytes of marker names (as the MARKERS files hold them, a line each) the timeline server keeps for one marker directory, "
    "that is one instant: about 300,000 markers of a hundred characters. A marker past it is refused and the write fails "
    "with an error naming this option.",
)
VIEW_REMOTE_HOST = _opt(
    "hoodie.filesystem.view.remote.host",
    "localhost",
    str,
    "Host of a standalone timeline server (hoodie timeline-server) that writes use instead of an embedded one.",
)
VIEW_REMOTE_PORT = _opt("hoodie.filesystem.view.remote.port", 26754, int_in(1, 65535), "Port of that standalone timeline server.")
VIEW_REMOTE_TOKEN = _opt("hoodie.filesystem.view.remote.token", "", str, "Token of that standalone timeline server (it prints it when it makes one).")
VIEW_REMOTE_TIMEOUT_SECS = _opt(
    "hoodie.filesystem.view.remote.timeout.secs",
    5,
    int_in(1),
    "Seconds a call to the timeline server (a view or marker request) may take, its retries included, before the client "
    "gives up and falls back as for a server that is gone (Hudi's default is 300 a request; a server that stops answering "
    "would hold every write that long).",
)
VIEW_REMOTE_RETRY_MAX = _opt(
    "hoodie.filesystem.view.remote.retry.max_numbers",
    3,
    int_in(0),
    "Retries of a timeline-server call refused or answered with a server error, within its timeout (a call that gets no "
    "answer in time is not retried).",
)
VIEW_REMOTE_RETRY_INTERVAL_MS = _opt(
    "hoodie.filesystem.view.remote.retry.initial_interval_ms", 100, int_in(0), "Wait before the first retry of a timeline-server call (growing linearly)."
)
VIEW_REMOTE_RETRY_MAX_INTERVAL_MS = _opt(
    "hoodie.filesystem.view.remote.retry.max_interval_ms", 2000, int_in(0), "Longest wait between two retries of a timeline-server call."
)
VIEW_TYPE: Option[str | None] = _opt(
    "hoodie.filesystem.view.type",
    None,
    upper,
    "Where file-system views come from. On a timeline server, the store of its views: MEMORY, SPILLABLE_DISK (memory up to "
    "hoodie.filesystem.view.spillable.mem, the rest on local disk) or EMBEDDED_KV_STORE (RocksDB). For a write's clients: "
    "REMOTE_FIRST (the timeline server, a local view if it fails; the default when a write has a server), REMOTE_ONLY, or a "
    "store type (local views; the default without a server).",
    (),
    ("MEMORY", "SPILLABLE_DISK", "EMBEDDED_KV_STORE", "REMOTE_ONLY", "REMOTE_FIRST"),
)
VIEW_SECONDARY_TYPE = _opt(
    "hoodie.filesystem.view.secondary.type",
    "MEMORY",
    upper,
    "The local view a REMOTE_FIRST client falls back to (built from listings of the partitions it needs).",
    (),
    ("MEMORY", "SPILLABLE_DISK", "EMBEDDED_KV_STORE"),
)
VIEW_SPILLABLE_MEM = _opt(
    "hoodie.filesystem.view.spillable.mem", 100 * 1024 * 1024, int_in(0), "Bytes of partition listings a SPILLABLE_DISK view keeps in memory."
)
VIEW_SPILLABLE_DIR = _opt(
    "hoodie.filesystem.view.spillable.dir", "", str, "Local directory a SPILLABLE_DISK view spills to (empty: the system's temporary directory)."
)
VIEW_ROCKSDB_BASE_PATH = _opt(
    "hoodie.filesystem.view.rocksdb.base.path", "/tmp/hoodie_timeline_rocksdb", str, "Local directory of EMBEDDED_KV_STORE views' RocksDB databases."
)
VIEW_INCREMENTAL_SYNC = _opt(
    "hoodie.filesystem.view.incr.timeline.sync.enable",
    True,
    boolean,
    "Bring a timeline server's views up to date from the metadata of new instants (false: list every partition again after any change).",
)
ALLOW_COLUMN_DROP = _opt("hoodie.datasource.write.schema.allow.auto.evolution.column.drop", False, boolean, "Allow a batch to omit table columns.")
UPSERT_PARALLELISM = _opt("hoodie.upsert.shuffle.parallelism", 0, int_in(0), "Shuffle parallelism for upsert (0 = automatic).")
INSERT_PARALLELISM = _opt("hoodie.insert.shuffle.parallelism", 0, int_in(0), "Shuffle parallelism for insert (0 = automatic).")
BULK_INSERT_PARALLELISM = _opt("hoodie.bulkinsert.shuffle.parallelism", 0, int_in(0), "Shuffle parallelism for bulk_insert (0 = automatic).")
DELETE_PARALLELISM = _opt("hoodie.delete.shuffle.parallelism", 0, int_in(0), "Shuffle parallelism for delete (0 = automatic).")
METADATA_ENABLE = _opt(
    "hoodie.metadata.enable",
    True,
    boolean,
    "Writes: maintain the metadata table (.hoodie/metadata): initialise it from one listing when the table has none, "
    "and apply every action to it before the action completes; false deletes an existing one. Reads, services, the "
    "CLI and the timeline server's views: list partitions and files through an existing one whose files partition is "
    "complete (no partition folder is listed) and use its column statistics for data skipping. On by default, as in "
    "Apache Hudi.",
)
METADATA_VALIDATE = _opt(
    "hoodie.metadata.validate",
    False,
    boolean,
    "Compare every listing the metadata table gives with a listing of storage; a difference is a MetadataOutOfSyncError "
    "naming the partition and the files (lists storage besides: for checking, not for speed).",
)
FAIL_ON_TIMELINE_ARCHIVING = _opt("hoodie.fail.on.timeline.archiving", True, boolean, "Accepted for compatibility.")

# --- Structured Streaming sink (df.writeStream.format("hoodie")) -------------------------------
STREAMING_CHECKPOINT_IDENTIFIER = _opt(
    "hoodie.datasource.write.streaming.checkpoint.identifier",
    "default_single_writer",
    str,
    "Streaming sink: the writer's name in the commit's _hudi_streaming_sink_checkpoint (writer -> last batch id); "
    "a batch id already committed under it is skipped. Give each streaming query writing one table its own.",
)
STREAMING_RETRY_COUNT = _opt(
    "hoodie.datasource.write.streaming.retry.count", 3, int_in(0), "Streaming sink: attempts at a micro-batch whose write failed."
)
STREAMING_RETRY_INTERVAL_MS = _opt(
    "hoodie.datasource.write.streaming.retry.interval.ms",
    2000,
    int_in(0),
    "Streaming sink: wait before the second attempt at a failed micro-batch (milliseconds), doubled before each further one.",
)
STREAMING_IGNORE_FAILED_BATCH = _opt(
    "hoodie.datasource.write.streaming.ignore.failed.batch",
    False,
    boolean,
    "Streaming sink: a micro-batch that still fails after its retries is logged and left out (its rows are not written) "
    "instead of stopping the query.",
)
ASYNC_COMPACT_ENABLE = _opt(
    "hoodie.datasource.compaction.async.enable",
    True,
    boolean,
    "Streaming sink into a merge-on-read table: after a micro-batch, schedule a compaction when due and run it on a "
    "background thread of the driver (one at a time) instead of inline; batch writes are not affected.",
)

# --- metadata table -----------------------------------------------------------------------
METADATA_COLUMN_STATS_ENABLE = _opt(
    "hoodie.metadata.index.column.stats.enable", False, boolean, "Keep the metadata table's column_stats partition (with hoodie.metadata.enable)."
)
METADATA_COLUMN_STATS_COLUMNS: Option[tuple[str, ...]] = _opt(
    "hoodie.metadata.index.column.stats.column.list",
    (),
    field_list,
    "Comma-separated columns whose statistics column_stats keeps, a struct's field by its dotted path (empty: every "
    "top-level column of the writer's schema, the meta columns included, as Apache Hudi 0.15; a struct, list or map "
    "column then has statistics in log files only, without min and max).",
)
METADATA_COLUMN_STATS_FILE_GROUPS = _opt(
    "hoodie.metadata.index.column.stats.file.group.count", 2, int_in(1), "File groups of the column_stats partition, fixed when it is built."
)
METADATA_BLOOM_FILTER_ENABLE = _opt(
    "hoodie.metadata.index.bloom.filter.enable", False, boolean, "Keep the metadata table's bloom_filters partition (with hoodie.metadata.enable)."
)
METADATA_BLOOM_FILTER_COLUMNS: Option[tuple[str, ...]] = _opt(
    "hoodie.metadata.index.bloom.filter.column.list",
    (),
    field_list,
    "Columns the bloom_filters partition is built for (empty: the record key, the only one Apache Hudi 0.15 builds).",
)
METADATA_BLOOM_FILTER_FILE_GROUPS = _opt(
    "hoodie.metadata.index.bloom.filter.file.group.count", 4, int_in(1), "File groups of the bloom_filters partition, fixed when it is built."
)
METADATA_RECORD_INDEX_ENABLE = _opt(
    "hoodie.metadata.record.index.enable", False, boolean, "Keep the metadata table's record_index partition (with hoodie.metadata.enable)."
)
METADATA_RECORD_INDEX_MIN_FILE_GROUPS = _opt(
    "hoodie.metadata.record.index.min.filegroup.count", 10, int_in(1), "Fewest file groups the record_index partition is built with."
)
METADATA_RECORD_INDEX_MAX_FILE_GROUPS = _opt(
    "hoodie.metadata.record.index.max.filegroup.count", 10000, int_in(1), "Most file groups the record_index partition is built with."
)
METADATA_RECORD_INDEX_MAX_FILE_GROUP_SIZE = _opt(
    "hoodie.metadata.record.index.max.filegroup.size",
    1024 * 1024 * 1024,
    int_in(1),
    "Bytes a record_index file group is sized for when the partition is built (48 bytes a key, times the growth factor).",
)
METADATA_RECORD_INDEX_GROWTH_FACTOR = _opt(
    "hoodie.metadata.record.index.growth.factor",
    2.0,
    number_in(1.0),
    "How many times the keys of the table at build time the record_index partition's file groups are sized for.",
)
HFILE_BLOCK_SIZE = _opt(
    "hoodie.hfile.block.size", 1024 * 1024, int_in(1), "Bytes of entries per data block of the HFiles the metadata table writes."
)

SINGLE_WRITER = "SINGLE_WRITER"
CONCURRENCY_MODE = _opt(
    "hoodie.write.concurrency.mode",
    SINGLE_WRITER,
    upper,
    "How writers share a table. SINGLE_WRITER: one writer at a time; a writer rolls back what it finds "
    "unfinished, and a writer rolled back that way fails with ConcurrentWriteError. "
    "(OPTIMISTIC_CONCURRENCY_CONTROL is not supported yet.)",
)

# --- table services -----------------------------------------------------------------------
COMPACT_INLINE = _opt("hoodie.compact.inline", False, boolean, "Compact merge-on-read tables after a write when enough delta commits accumulated.")
COMPACT_MAX_DELTA_COMMITS = _opt("hoodie.compact.inline.max.delta.commits", 5, int_in(1), "Delta commits since the last compaction that trigger the next one.")
COMPACT_TRIGGER = _opt("hoodie.compact.inline.trigger.strategy", "NUM_COMMITS", upper, "What triggers inline compaction (NUM_COMMITS).", (), ("NUM_COMMITS",))
COMPACTION_STRATEGY = _opt(
    "hoodie.compaction.strategy",
    "org.apache.hudi.table.action.compact.strategy.LogFileSizeBasedCompactionStrategy",
    str,
    "Which slices a compaction picks: LogFileSizeBasedCompactionStrategy (most log data first, bounded by target IO), UnBoundedCompactionStrategy, "
    "a name given to hoodie.services.register_compaction_strategy, or the import path of a class with select().",
)
COMPACTION_TARGET_IO = _opt("hoodie.compaction.target.io", 512000, int_in(0), "IO budget of one compaction run in MB (log-size strategy).")

CLEAN_AUTOMATIC = _opt("hoodie.clean.automatic", True, boolean, "Clean old file slices after every commit.")
CLEAN_ASYNC = _opt(
    "hoodie.clean.async",
    False,
    boolean,
    "With hoodie.clean.automatic: each write's clean runs on a thread of its own, started as the write begins, beside the write; "
    "the write waits for it after its commit.",
)
CLEANER_POLICY = _opt(
    "hoodie.cleaner.policy",
    "KEEP_LATEST_COMMITS",
    upper,
    "Which slices cleaning keeps.",
    (),
    ("KEEP_LATEST_COMMITS", "KEEP_LATEST_FILE_VERSIONS", "KEEP_LATEST_BY_HOURS"),
)
CLEANER_COMMITS_RETAINED = _opt("hoodie.cleaner.commits.retained", 10, int_in(1), "KEEP_LATEST_COMMITS: commits whose file slices stay readable.")
CLEANER_FILE_VERSIONS_RETAINED = _opt("hoodie.cleaner.fileversions.retained", 3, int_in(1), "KEEP_LATEST_FILE_VERSIONS: slices kept per file group.")
CLEANER_HOURS_RETAINED = _opt("hoodie.cleaner.hours.retained", 24, int_in(0), "KEEP_LATEST_BY_HOURS: hours of commits whose slices stay readable.")
CLEANER_INCREMENTAL = _opt(
    "hoodie.cleaner.incremental.mode",
    True,
    boolean,
    "Plan cleaning from the commits since the last clean instead of listing every partition.",
)
ARCHIVE_AUTOMATIC = _opt("hoodie.archive.automatic", True, boolean, "Archive old instants after every commit.")
KEEP_MIN_COMMITS = _opt("hoodie.keep.min.commits", 20, int_in(1), "Archival keeps at least this many commits on the active timeline.")
KEEP_MAX_COMMITS = _opt("hoodie.keep.max.commits", 30, int_in(1), "Archival starts when the active timeline holds more commits than this.")
ARCHIVAL_BATCH = _opt("hoodie.commits.archival.batch", 10, int_in(1), "Instants per block of an archive file.")

# --- the metadata table's own services ------------------------------------------------------
METADATA_COMPACT_MAX_DELTA_COMMITS = _opt(
    "hoodie.metadata.compact.max.delta.commits", 10, int_in(1), "Delta commits of the metadata table since its last compaction that make it compact."
)
METADATA_MAX_DELTA_COMMITS_WHEN_PENDING = _opt(
    "hoodie.metadata.max.deltacommits.when_pending",
    1000,
    int_in(1),
    "Delta commits the metadata table may gather without compacting while a data instant stays pending; more is an error naming it.",
)
METADATA_CLEANER_COMMITS_RETAINED = _opt(
    "hoodie.metadata.cleaner.commits.retained",
    3,
    int_in(1),
    "Accepted for compatibility: as in Apache Hudi 0.15, the metadata table cleans by the data table's policy, retaining "
    "max(20, 1.2 x hoodie.cleaner.commits.retained) commits (or 1.2 x the versions or hours).",
)

# --- index --------------------------------------------------------------------------------
INDEX_TYPE = _opt(
    "hoodie.index.type",
    "BLOOM",
    upper,
    "BLOOM or SIMPLE (keys unique per partition), BUCKET (a fixed number of file groups per partition, "
    "hoodie.bucket.index.num.buckets; a key's group is a hash of the key: tagging reads no file), or RECORD_INDEX "
    "(global: the metadata table's record_index partition places each key in its file group, whatever partition it is in).",
    (),
    ("BLOOM", "SIMPLE", "BUCKET", "RECORD_INDEX"),
)
BUCKET_INDEX_ENGINE = _opt(
    "hoodie.index.bucket.engine",
    "SIMPLE",
    only_value(upper, "SIMPLE", "the bucket index with a fixed number of buckets; CONSISTENT_HASHING (buckets that split and merge) is not supported"),
    "BUCKET: how buckets are kept; SIMPLE, a fixed number per partition (Apache Hudi's CONSISTENT_HASHING is refused).",
)
BUCKET_INDEX_NUM_BUCKETS = _opt(
    "hoodie.bucket.index.num.buckets",
    256,
    int_in(1),
    "BUCKET: the number of buckets (file groups) of every partition. It cannot change: a table hoodie creates records it "
    "in hoodie.properties (and a write giving another number is refused); on a table without it, one base file's "
    "footer keys are checked against it.",
)
BUCKET_INDEX_HASH_FIELD = _opt(
    "hoodie.bucket.index.hash.field",
    None,
    field_list,
    "BUCKET: the record key fields a key's bucket is hashed from (comma-separated, a subset of the record key fields); "
    "unset: the record key fields.",
)
RECORD_INDEX_UPDATE_PARTITION_PATH = _opt(
    "hoodie.record.index.update.partition.path",
    False,
    boolean,
    "RECORD_INDEX: a record whose partition differs from the one its key is in is deleted there and inserted into the "
    "new partition (true), or updated where it is, its partition path kept (false).",
)
BLOOM_INDEX_USE_METADATA = _opt(
    "hoodie.bloom.index.use.metadata",
    False,
    boolean,
    "BLOOM: take each file's bloom filter from the metadata table's bloom_filters partition and its key range from "
    "column_stats of _hoodie_record_key, when complete, instead of the file's footer.",
)
BLOOM_NUM_ENTRIES = _opt("hoodie.index.bloom.num_entries", 60000, int_in(1), "Keys per bloom filter row.")
BLOOM_FPP = _opt("hoodie.index.bloom.fpp", 1e-9, number_in(0, 1, open_low=True, open_high=True), "Bloom filter false positive probability.")
BLOOM_FILTER_TYPE = _opt("hoodie.bloom.index.filter.type", "DYNAMIC_V0", upper, "SIMPLE or DYNAMIC_V0.", (), ("SIMPLE", "DYNAMIC_V0"))
BLOOM_MAX_ENTRIES = _opt("hoodie.bloom.index.filter.dynamic.max.entries", 100000, int_in(1), "Maximum keys of a dynamic bloom filter.")
BLOOM_PRUNE_BY_RANGES = _opt("hoodie.bloom.index.prune.by.ranges", True, boolean, "Prune candidate files by min/max record key.")

# --- read ---------------------------------------------------------------------------------
QUERY_TYPE = _opt(
    "hoodie.datasource.query.type",
    "snapshot",
    lower,
    "snapshot, incremental or read_optimized.",
    (),
    ("snapshot", "incremental", "read_optimized"),
)
BEGIN_INSTANT = _opt("hoodie.datasource.read.begin.instanttime", None, str, "Incremental pull: exclusive start instant.")
END_INSTANT = _opt("hoodie.datasource.read.end.instanttime", None, str, "Incremental pull: inclusive end instant (default: latest).")
AS_OF_INSTANT = _opt("as.of.instant", None, str, "Time travel: read the table as of this instant.", ("hoodie.datasource.read.as.of.instant",))
IGNORE_MISSING_FILES = _opt(
    "ignoreMissingFiles", False, boolean,
    "Read around a file a completed instant wrote that storage no longer has (a warning names it) instead of failing.",
    ("spark.sql.files.ignoreMissingFiles",),
)
IGNORE_CORRUPT_FILES = _opt(
    "ignoreCorruptFiles", False, boolean,
    "Read around a base file or committed log block that cannot be decoded (a warning names it) instead of failing.",
    ("spark.sql.files.ignoreCorruptFiles",),
)
READ_PATHS = _opt("hoodie.datasource.read.paths", None, str, "Accepted for compatibility; not used.")
# Hudi's read options that would change what a read returns, known so that passing them is
# not a mistake, and refused at any value but the one hoodie implements (their default).
INCREMENTAL_FORMAT = _opt(
    "hoodie.datasource.query.incremental.format", "latest_state", lower,
    "What an incremental query returns: latest_state (each changed record in its latest state; cdc is not supported).", (), ("latest_state",),
)
INCR_PATH_GLOB = _opt(
    "hoodie.datasource.read.incr.path.glob", "",
    only_value(str, "", "an incremental pull reads every partition (filter its result on _hoodie_partition_path instead)"),
    "Incremental pull: only files matching a glob; not supported (empty only).",
)
INCR_FILTERS = _opt(
    "hoodie.datasource.read.incr.filters", "",
    only_value(str, "", "filter the result of the incremental pull instead"),
    "Incremental pull: filters pushed into the read; not supported (empty only).",
)
INCR_FALLBACK_FULL_SCAN = _opt(
    "hoodie.datasource.read.incr.fallback.fulltablescan.enable", False, boolean,
    "Incremental pull (and streaming read): when the range's commits were archived or the files they wrote cleaned, "
    "read the latest snapshot's records committed in the range instead of failing.",
)
STREAMING_START_OFFSET = _opt(
    "hoodie.datasource.streaming.startOffset", "earliest", str,
    "Streaming read: where a new query starts: earliest (every commit), latest (commits after the latest one) "
    "or an instant time (commits after it). A restarted query resumes from its checkpoint instead.",
)
STREAMING_MAX_COMMITS = _opt(
    "hoodie.datasource.read.streaming.max.commits.per.batch", 0, int_in(0),
    "Streaming read: at most this many commits a micro-batch (0: all the commits available).",
)
MERGE_TYPE = _opt(
    "hoodie.datasource.merge.type", "payload_combine", lower,
    "How merge-on-read slices are read: payload_combine (merged; skip_merge is not supported).", (), ("payload_combine",),
)
EXTRACT_PARTITION_VALUES = _opt(
    "hoodie.datasource.read.extract.partition.values.from.path", None, boolean,
    "Spark batch reads: true (and unset) take partition column values from the partition path where it determines them "
    "exactly, as Apache Hudi 1.x and 0.15's copy-on-write reads show them, so that Spark prunes partitions for every "
    "filter, SQL on a view included; false takes the values the data files store (a record a global index kept in its old "
    "partition shows the value it was written with, as hoodie.read shows it), partitions then pruned only by filters on "
    "the DataFrame the read returns. A table written with hoodie.datasource.write.drop.partition.columns=true always "
    "takes them from the path. Other readers read the data files only (false or unset).",
)
DATA_SKIPPING = _opt(
    "hoodie.enable.data.skipping",
    True,
    boolean,
    "Reads with filters skip the files whose column statistics in the metadata table rule the filter out (Apache Hudi 1.x's default; 0.x's was false).",
)
FILE_INDEX_ENABLE = _opt("hoodie.file.index.enable", True, boolean, "Accepted for compatibility; reads are unchanged.")

# --- catalog registration (Hudi's meta sync / Hive sync) ----------------------------------
META_SYNC_ENABLE = _opt(
    "hoodie.datasource.meta.sync.enable", False, boolean,
    "After each commit of a Spark write, register or update the table in the session's catalog (hoodie.meta_sync).",
)
HIVE_SYNC_ENABLE = _opt(
    "hoodie.datasource.hive_sync.enable", False, boolean,
    "As hoodie.datasource.meta.sync.enable: the catalog is Spark's, a Hive metastore with Hive support enabled.",
)
SYNC_DATABASE = _opt("hoodie.datasource.hive_sync.database", "default", str, "Database the tables are registered in.")
SYNC_TABLE = _opt(
    "hoodie.datasource.hive_sync.table", None, str,
    "Name the table is registered as (default hoodie.table.name); merge-on-read tables add <name>_ro and <name>_rt.",
)
SYNC_PARTITION_FIELDS: Option[tuple[str, ...]] = _opt(
    "hoodie.datasource.hive_sync.partition_fields", (), field_list,
    "Partition columns of the registered tables (default the table's partition path fields).",
)
SYNC_PARTITION_EXTRACTOR = _opt(
    "hoodie.datasource.hive_sync.partition_extractor_class", None, str,
    "How partition values come from a partition path: MultiPartKeysValueExtractor (one path segment per field, "
    "field=value or value), HiveStylePartitionValueExtractor (one field=value segment) or NonPartitionedExtractor; "
    "default as Hudi infers it from the partition fields.",
)
SYNC_SKIP_RO_SUFFIX = _opt(
    "hoodie.datasource.hive_sync.skip_ro_suffix", False, boolean,
    "Merge-on-read: register the read-optimized table as <name> instead of <name>_ro.",
)
SYNC_TABLE_STRATEGY = _opt(
    "hoodie.datasource.hive_sync.table.strategy", "ALL", upper,
    "Merge-on-read: ALL registers <name>_ro, <name>_rt and <name>; RO only the read-optimized table, RT only the snapshot one, as <name>.",
    (), ("ALL", "RO", "RT"),
)
SYNC_AUTO_CREATE_DATABASE = _opt(
    "hoodie.datasource.hive_sync.auto_create_database", True, boolean, "Create the database when it does not exist (else an error).",
)
SYNC_MODE = _opt(
    "hoodie.datasource.hive_sync.mode", "hms", lower,
    "How the catalog is reached: hms (the Spark session's catalog, its Hive metastore); jdbc and hiveql are not supported.",
    (), ("hms",),
)
SYNC_USE_JDBC = _opt(
    "hoodie.datasource.hive_sync.use_jdbc", False,
    only_value(boolean, False, "the catalog is reached through the Spark session (hoodie.datasource.hive_sync.mode=hms)"),
    "Hudi's older switch for a JDBC connection to HiveServer2; false only.",
)
SYNC_TOOL_CLASS = _opt(
    "hoodie.meta.sync.client.tool.class", "org.apache.hudi.hive.HiveSyncTool",
    only_value(str, "org.apache.hudi.hive.HiveSyncTool", "hoodie registers tables in the Spark session's catalog, as Hudi's Hive sync"),
    "The sync tool; Hudi's HiveSyncTool only (hoodie's own, applied to the Spark session's catalog).",
)
SYNC_DECODE_PARTITION = _opt(
    "hoodie.meta.sync.decode_partition", False, boolean,
    "Percent-decode partition values read from partition paths (always done for tables written with "
    "hoodie.datasource.write.partitionpath.urlencode).",
)
SYNC_METADATA_LISTING = _opt(
    "hoodie.meta.sync.metadata_file_listing", True, boolean,
    "Find the partitions to register through the metadata table (when the table keeps one) instead of listing storage.",
)

# --- streamer (hoodie streamer: Hudi's HoodieStreamer; hoodie.deltastreamer.* are the older names) ---
STREAMER_DFS_ROOT = _opt(
    "hoodie.streamer.source.dfs.root", None, str,
    "Streamer, file sources: the folder new files land in (read recursively; names starting with . or _ are skipped).",
    ("hoodie.deltastreamer.source.dfs.root",),
)
STREAMER_CSV_HEADER = _opt(
    "hoodie.streamer.csv.header", True, boolean, "Streamer, CSV source: the first line of each file names the columns.",
    ("hoodie.deltastreamer.csv.header",),
)
STREAMER_CSV_SEP = _opt("hoodie.streamer.csv.sep", ",", str, "Streamer, CSV source: the field separator.", ("hoodie.deltastreamer.csv.sep",))
STREAMER_INCR_PATH = _opt(
    "hoodie.streamer.source.hoodieincr.path", None, str,
    "Streamer, incremental source: base path of the Hudi table whose commits are pulled.",
    ("hoodie.deltastreamer.source.hoodieincr.path",),
)
STREAMER_INCR_NUM_INSTANTS = _opt(
    "hoodie.streamer.source.hoodieincr.num_instants", 5, int_in(1),
    "Streamer, incremental source: most commits of the source table pulled in one batch.",
    ("hoodie.deltastreamer.source.hoodieincr.num_instants",),
)
STREAMER_INCR_MISSING_CHECKPOINT = _opt(
    "hoodie.streamer.source.hoodieincr.missing.checkpoint.strategy", "READ_UPTO_LATEST_COMMIT", upper,
    "Streamer, incremental source, without a checkpoint: READ_UPTO_LATEST_COMMIT (pull from the source's first commit) "
    "or READ_LATEST (start with its latest commit).",
    ("hoodie.deltastreamer.source.hoodieincr.missing.checkpoint.strategy",),
    ("READ_UPTO_LATEST_COMMIT", "READ_LATEST"),
)
STREAMER_INCR_DROP_ALL_META = _opt(
    "hoodie.streamer.source.hoodieincr.drop.all.meta.fields.from.source", False, boolean,
    "Streamer, incremental source: drop every _hoodie_ meta column of the pulled rows (by default _hoodie_partition_path "
    "stays for the transformation; the target's own meta columns are written anew either way).",
    ("hoodie.deltastreamer.source.hoodieincr.drop.all.meta.fields.from.source",),
)
STREAMER_TRANSFORMER_SQL = _opt(
    "hoodie.streamer.transformer.sql", None, str,
    "Streamer: a SQL query run on each batch before it is written, <SRC> naming the batch (Hudi's SqlQueryBasedTransformer).",
    ("hoodie.deltastreamer.transformer.sql",),
)
STREAMER_TRANSFORMER_SQL_FILE = _opt(
    "hoodie.streamer.transformer.sql.file", None, str,
    "Streamer: a file holding that SQL query (Hudi's SqlFileBasedTransformer; not together with hoodie.streamer.transformer.sql).",
    ("hoodie.deltastreamer.transformer.sql.file",),
)

_ALIASES: dict[str, Option[Any]] = {a: o for o in OPTIONS.values() for a in o.aliases}

# Keys Spark or Hudi users pass that carry no meaning for hoodie but are not mistakes.
_IGNORED = {"path", "hoodie.datasource.write.hive_style_partitioning.default"}


_ALL_NAMES: tuple[str, ...] = (*OPTIONS, *_ALIASES)
# Spark takes option keys whatever their case (ignoremissingfiles is ignoreMissingFiles)
_BY_LOWER_CASE: dict[str, Option[Any]] = {name.lower(): o for name, o in [*OPTIONS.items(), *_ALIASES.items()]}


def lookup(key: str) -> Option[Any] | None:
    return OPTIONS.get(key) or _ALIASES.get(key) or _BY_LOWER_CASE.get(key.lower())


def closest_option(key: str) -> str | None:
    """The option name closest to ``key`` (:func:`hoodie.config.names.closest_name`), or
    ``None`` when none is close."""
    return closest_name(key, _ALL_NAMES)


def check_unknown(key: str) -> None:
    """:class:`ConfigError` for a key no option has that must be a mistake: any
    ``hoodie.*`` key, and any other key that nearly spells an option's name (the error
    names it). Other keys (Spark's own, like ``path`` or ``header``) pass."""
    if lookup(key) is not None or key in _IGNORED:
        return
    close = closest_option(key)
    if key.lower().startswith("hoodie.") or close is not None:
        hint = f"; did you mean {close}?" if close else ""
        raise ConfigError(f"unknown option {key}{hint}")


@dataclass(frozen=True)
class HoodieConfig:
    """User options parsed against :data:`OPTIONS`.

    Unknown ``hoodie.*`` keys, and other keys that nearly spell an option's name, raise
    :class:`ConfigError` with the closest known key (:func:`check_unknown`); other keys
    outside the ``hoodie.`` namespace (Spark's own) are kept but not interpreted.
    """

    raw: Mapping[str, str] = field(default_factory=dict)

    @classmethod
    def of(cls, options: Mapping[str, Any] | None) -> HoodieConfig:
        raw: dict[str, str] = {}
        prefix = _commit_metadata_prefix(options or {})
        for key, value in (options or {}).items():
            if value is None:
                continue
            if prefix and key.startswith(prefix) and lookup(key) is None:
                raw[key] = str(value)  # commit metadata the user passes through, not an option
                continue
            check_unknown(key)
            opt = lookup(key)
            if opt is not None:
                canonical = opt.key
                if canonical in raw and raw[canonical] != str(value):
                    raise ConfigError(f"option {key}={value!r} conflicts with {canonical}={raw[canonical]!r}")
                opt.convert(value)  # validate early: the error names the key and value
                raw[canonical] = value if isinstance(value, str) else str(value).lower() if isinstance(value, bool) else str(value)
            else:
                raw[key] = str(value)
        return cls(raw)

    def get(self, opt: Option[T]) -> T:
        if opt.key in self.raw:
            return opt.convert(self.raw[opt.key])
        return opt.default

    def has(self, opt: Option[Any]) -> bool:
        return opt.key in self.raw

    def require(self, opt: Option[T]) -> T:
        value = self.get(opt)
        if value is None or value == ():
            raise ConfigError(f"missing required option {opt.key}")
        return value

    def with_defaults(self, defaults: Mapping[str, str]) -> HoodieConfig:
        """Options where ``defaults`` fill keys the user did not set (e.g. from the table)."""
        merged = dict(defaults)
        merged.update(self.raw)
        return HoodieConfig(merged)


def _commit_metadata_prefix(options: Mapping[str, Any]) -> str:
    """The prefix of the keys that go into commit metadata (set in ``options`` or the default)."""
    for key, value in options.items():
        if value is not None and lookup(key) is COMMIT_METADATA_KEY_PREFIX:
            return str(value)
    return COMMIT_METADATA_KEY_PREFIX.default
