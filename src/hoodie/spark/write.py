"""Spark's side of the write pipeline: a DataFrame written as one commit.

``write_dataframe(df, path, options, mode)`` is what ``df.write.format("hoodie")...save``
runs: the pipeline of :func:`hoodie.writer.pipeline.run_write`, the same as in process,
with a :class:`DataFrameRecordFlow` deciding where its steps run and how records move.
The records never reach the driver; it sees the touched partitions, record counts and
write stats.

partitions  Spark's ``distinct`` over the partition fields, turned into paths by the key
            generator on the driver (or computed in a ``mapInArrow`` for timestamp and
            floating-point fields)
aligned     shuffle by partition (on the partition fields themselves when distinct
            values give distinct paths, else on paths computed by a first ``mapInArrow``),
            sorted by partition and input position within each task; one ``mapInArrow``
            per task, one partition at a time: keys, then ``plan_partitions`` (dedupe,
            tag, plan) and ``handles.run_bucket``; bucket ids ``<id in its partition> *
            <partitions> + <partition ordinal>``
tag         keys in ``mapInArrow``; shuffle by (partition path, record key) so duplicates
            meet (by record key alone with a global index; skipped when nothing dedupes
            or tags); ``steps.dedupe_and_tag`` in one ``mapInArrow`` (base files
            broadcast; a global index's locator reads the record index in the task);
            the result is persisted
profiles    counts per (partition, file id)
buckets     ``steps.assign_buckets`` (plan broadcast) in ``mapInArrow``, then
            ``groupBy(bucket).applyInArrow``: ``handles.run_bucket`` per file group,
            write token ``<bucket>-<stage id>-<task attempt id>``

Every write runs in its own job group: on any error its jobs are cancelled and their tasks
awaited before the pipeline rolls back, and a hoodie error raised in a task is re-raised
as that error, chained to Spark's.

Input order matters (dedupe keeps the later of two equal ordering values), so rows carry
their ``monotonically_increasing_id`` through the shuffles; an input DataFrame whose row
order is not deterministic gives a deterministic result only without such ties.
"""
from __future__ import annotations

import functools
import json
import logging
from collections import Counter, defaultdict
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

import pyarrow as pa
from pyspark import Broadcast, StorageLevel
from pyspark.sql import DataFrame, Row, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.pandas.types import to_arrow_schema
from pyspark.sql.types import (
    BooleanType,
    DoubleType,
    FloatType,
    IntegerType,
    StringType,
    StructField,
    StructType,
)

from hoodie.config import options as o
from hoodie.errors import ConfigError, PartitionPathError, TableError
from hoodie.formats.meta_columns import META_COLUMNS
from hoodie.index.base import FileRef
from hoodie.markers import DIRECT, TIMELINE_SERVER_BASED, ServerAddress
from hoodie.meta_sync import SyncSettings
from hoodie.services.for_writers import WRITER_SERVICES
from hoodie.spark import tasks
from hoodie.spark.catalog import sync_after_commit
from hoodie.spark.engine import SparkEngine
from hoodie.spark.jobs import cancel_and_wait, hoodie_error_in, job_group
from hoodie.spark.timeline import driver_server_for
from hoodie.storage.base import Storage
from hoodie.storage.factory import normalize_path, storage_for
from hoodie.table.file_group import FileSlice
from hoodie.table.table import HoodieTable
from hoodie.timeline.commit_metadata import WriteStat
from hoodie.writer.context import WriteContext
from hoodie.writer.keygen import TIMESTAMP as TIMESTAMP_KEYGEN
from hoodie.writer.keygen import KeyGenerator
from hoodie.writer.partition_groups import GroupSpec
from hoodie.writer.pipeline import run_write
from hoodie.writer.planner import PartitionProfile, WritePlan
from hoodie.writer.prepare import add_keys, check_ordering_field
from hoodie.writer.schema import (
    BASE_INSTANT_COLUMN,
    BUCKET_COLUMN,
    DELETE_COLUMN,
    FILE_ID_COLUMN,
    normalize_batch,
    normalize_schema,
)
from hoodie.writer.settings import PreparedWrite, WriteSettings
from hoodie.writer.table_setup import prepare_write, table_schema_after

log = logging.getLogger(__name__)

# Spark save mode names (case-insensitive) -> what hoodie does with an existing table.
SAVE_MODES = {
    "append": "append",
    "overwrite": "overwrite",
    "error": "errorifexists",
    "errorifexists": "errorifexists",
    "default": "errorifexists",
    "ignore": "ignore",
}
_PARALLELISM = {
    "upsert": o.UPSERT_PARALLELISM,
    "insert": o.INSERT_PARALLELISM,
    "insert_overwrite": o.INSERT_PARALLELISM,
    "insert_overwrite_table": o.INSERT_PARALLELISM,
    "bulk_insert": o.BULK_INSERT_PARALLELISM,
    "delete": o.DELETE_PARALLELISM,
}


def save_mode(mode: str | None) -> str:
    """The canonical save mode for a Spark mode name (None: Spark's default, error)."""
    key = (mode or "errorifexists").strip().lower()
    if key not in SAVE_MODES:
        raise ConfigError(f"unknown save mode {mode!r}: expected one of append, overwrite, errorifexists, error, ignore")
    return SAVE_MODES[key]


def write_dataframe(
    df: DataFrame,
    path: str,
    options: Mapping[str, Any] | None = None,
    mode: str | None = "append",
    *,
    storage: Storage | None = None,
    extra_metadata: Mapping[str, str] | None = None,
    skip_empty: bool = False,
) -> str | None:
    """Write ``df`` to the Hudi table at ``path`` as one commit; returns its instant time.

    ``options`` are Hudi's write options (as for :func:`hoodie.write`). Save modes, when a
    table already exists at ``path``: ``append`` writes with the configured operation;
    ``overwrite`` becomes ``insert_overwrite_table`` (as in Hudi); ``errorifexists``/
    ``error`` (Spark's default) raise :class:`~hoodie.errors.TableError`; ``ignore`` does
    nothing and returns None. Without a table, every mode writes (creating it).
    ``extra_metadata`` is recorded in the commit's extraMetadata (as by :func:`hoodie.write`).
    ``skip_empty``: a ``df`` without rows makes no commit (returns None), told from the
    partition paths the write computes anyway (no Spark job of its own; a table that does
    not exist yet is created all the same). With ``hoodie.datasource.meta.sync.enable`` (or ``hive_sync.enable``) the table is
    then registered in the session's catalog (:func:`~hoodie.spark.catalog.sync_to_catalog`).
    """
    path = normalize_path(path)
    storage = storage or storage_for(path)
    canonical = save_mode(mode)
    operation: str | None = None
    if HoodieTable.exists(path, storage):
        if canonical == "errorifexists":
            raise TableError(
                f"a Hudi table already exists at {path} (save mode {mode or 'errorifexists'}); "
                "use mode 'append' to write to it or 'overwrite' to replace its contents"
            )
        if canonical == "ignore":
            return None
        if canonical == "overwrite":
            operation = "insert_overwrite_table"
    sync = SyncSettings.of(options)  # checked before anything is written
    flow = DataFrameRecordFlow.prepare(df, path, options, operation, storage, extra_metadata)
    if skip_empty and not flow.partitions():  # rows always have a path ("" unpartitioned); computed once
        return None
    instant = run_write(flow.prepared, flow.data_schema, flow)
    if sync.enabled:
        sync_after_commit(df.sparkSession, path, options, instant)
    return instant


def check_partition_values(data: DataFrame, keygen: KeyGenerator) -> None:
    """Refuse ``data`` before a table is created for it if one of its partition values
    cannot be a folder inside the table (:class:`~hoodie.errors.PartitionPathError`
    naming the value, the field and the record key)."""
    if keygen.is_partitioned:
        distinct_paths_on_executors(data, keygen)


def distinct_paths_on_executors(data: DataFrame, keygen: KeyGenerator) -> list[str]:
    """The distinct partition paths of ``data``, computed by executors from the key and
    partition fields only; a refused partition value is raised here as the task raised it."""
    with_keys = data.select(*keygen.required_fields)
    schema = StructType(_spark_fields((tasks.PARTITION_PATH, StringType())))
    paths = with_keys.mapInArrow(functools.partial(tasks.partition_paths_task, keygen=keygen), schema)
    try:
        return sorted(r[0] for r in paths.distinct().collect())
    except Exception as e:
        translated = hoodie_error_in(e)
        if translated is not None:
            raise translated from e
        raise


def raise_for_first_bad_record(data: DataFrame, keygen: KeyGenerator, values: pa.Table) -> None:
    """Raise the :class:`~hoodie.errors.PartitionPathError` of a whole record (key
    included) whose partition fields hold one of the refused distinct ``values``."""
    for row in values.to_pylist():
        try:
            keygen.partition_paths(pa.Table.from_pylist([row], schema=values.schema))
        except PartitionPathError:
            condition = functools.reduce(
                lambda acc, f: acc & (F.col(f).isNull() if row[f] is None else F.col(f) == F.lit(row[f])),
                keygen.partition_fields,
                F.lit(True),
            )
            record = data.filter(condition).limit(1).toArrow()
            if record.num_rows:
                keygen.partition_paths(normalize_batch(record))  # raises, naming the record key


def _spark_fields(*specs: tuple[str, Any]) -> list[StructField]:
    return [StructField(name, dtype, True) for name, dtype in specs]


_KEYED_FIELDS = _spark_fields(
    (tasks.RECORD_KEY, StringType()),
    (tasks.PARTITION_PATH, StringType()),
    (DELETE_COLUMN, BooleanType()),
    (FILE_ID_COLUMN, StringType()),
    (BASE_INSTANT_COLUMN, StringType()),
)


class DataFrameRecordFlow:
    """One write's records as a DataFrame (:class:`~hoodie.writer.pipeline.RecordFlow`).
    The steps are public so that tests can interleave them (e.g. run the handles twice
    before committing)."""

    def __init__(self, data: DataFrame, prepared: PreparedWrite, data_schema: pa.Schema) -> None:
        self.data = data
        self.prepared = prepared
        self.data_schema = data_schema
        self.spark: SparkSession = data.sparkSession
        self._touched_paths: tuple[list[str], bool] | None = None
        self._cached: list[DataFrame] = []
        self._broadcasts: list[Broadcast[Any]] = []
        self._task_calls: Counter[str] = Counter()

    # --- driver: setup ----------------------------------------------------------------------
    @classmethod
    def prepare(
        cls,
        df: DataFrame,
        path: str,
        options: Mapping[str, Any] | None,
        operation: str | None,
        storage: Storage,
        extra_metadata: Mapping[str, str] | None = None,
    ) -> DataFrameRecordFlow:
        """Driver setup shared with the in-process client, plus the checks it makes on the
        batch before anything is written (here on the schema: no rows are looked at)."""
        if df.isStreaming:
            raise ConfigError("format('hoodie') writes batch DataFrames; for a stream, write each micro-batch with foreachBatch")
        data = df.drop(*[c for c in META_COLUMNS if c in df.columns])
        tz = data.sparkSession.conf.get("spark.sql.session.timeZone") or "UTC"
        batch_schema = normalize_schema(to_arrow_schema(data.schema, timezone=tz))
        prepared = prepare_write(
            path, options, operation, batch_schema, storage, WRITER_SERVICES, functools.partial(check_partition_values, data), extra_metadata
        )
        s = prepared.settings
        empty = batch_schema.empty_table()
        check_ordering_field(empty, s.ordering_field, required=s.operation == "upsert" and prepared.config.has(o.PRECOMBINE_FIELD))
        add_keys(empty, prepared.keygen, is_delete=s.operation == "delete")  # key fields present?
        return cls(data, prepared, table_schema_after(prepared, batch_schema))

    @property
    def settings(self) -> WriteSettings:
        return self.prepared.settings

    @property
    def table(self) -> HoodieTable:
        return self.prepared.table

    @property
    def engine(self) -> SparkEngine:
        return SparkEngine(self.spark)

    @property
    def default_markers(self) -> str:
        """Timeline-server-based, as in Hudi, except on a local file system: there a
        direct marker is a hard link, cheaper than any request to a server (Hudi makes
        direct markers on HDFS for the same reason)."""
        return DIRECT if self.table.storage.is_local else TIMELINE_SERVER_BASED

    views_from_server = True  # the executors are elsewhere, as in Hudi

    def timeline_server(self, prepared: PreparedWrite) -> ServerAddress | None:
        return driver_server_for(self.spark, prepared.table.base_path, prepared.table.storage, prepared.config)

    def _shuffle_partitions(self) -> int | None:
        opt = _PARALLELISM.get(self.settings.operation)
        n = self.prepared.config.get(opt) if opt is not None else 0
        return n if n and n > 0 else None  # None: spark.sql.shuffle.partitions, AQE-coalesced

    def _write_tasks(self, units: int) -> int:
        """Tasks of a stage that writes ``units`` partitions or file groups: the
        operation's parallelism, else Spark's shuffle partitions, at most one a unit.

        Always an explicit number, so that adaptive execution does not coalesce the
        stage: it sizes tasks by shuffled bytes, while a write's cost follows the files it
        rewrites (20,000 updated rows are ~1 MB, one task, yet may rewrite 100 files)."""
        return max(1, min(units, self.tasks()))

    def tasks(self) -> int:
        """The shuffle's partitions (the operation's parallelism option, or Spark's)."""
        return self._shuffle_partitions() or int(self.spark.conf.get("spark.sql.shuffle.partitions") or 200)

    @contextmanager
    def running(self, instant: str) -> Iterator[None]:
        """The write's jobs in their own group: on an error they are cancelled and their
        tasks awaited, and a hoodie error a task raised is re-raised as such; the write's
        cached DataFrames and broadcasts are dropped at the end."""
        sc = self.spark.sparkContext
        group = f"hoodie-write-{instant}"
        with job_group(sc, group, f"hoodie {self.settings.operation} {instant} into {self.table.base_path}"):
            try:
                yield
            except BaseException as e:
                try:
                    cancel_and_wait(sc, group)
                except Exception:  # a stopped context has no tasks left to wait for
                    log.exception("could not cancel the Spark jobs of write %s", instant)
                translated = hoodie_error_in(e)
                if translated is not None:
                    raise translated from e
                raise
            finally:
                self.release()

    # --- driver: the touched partitions -------------------------------------------------------
    def partitions(self) -> list[str]:
        """The partition paths the batch writes to, computed on executors from the
        partition fields only (Spark prunes the other columns from the scan)."""
        return self._touched_once()[0]

    def _touched_once(self) -> tuple[list[str], bool]:
        if self._touched_paths is None:
            self._touched_paths = self._touched()
        return self._touched_paths

    def _touched(self) -> tuple[list[str], bool]:
        """:meth:`partitions`, and whether distinct partition-field values of the batch
        give distinct paths (then the fields themselves can be shuffled on)."""
        keygen = self.prepared.keygen
        if not keygen.is_partitioned:
            return ([] if self.data.isEmpty() else [""]), False
        fields = self.data.select(*keygen.partition_fields)
        # Not for timestamps: their distinct values may be as many as the records. Not for
        # floating-point fields: Spark's distinct takes -0.0 for 0.0, their paths differ.
        if keygen.class_name != TIMESTAMP_KEYGEN and not any(isinstance(f.dataType, (FloatType, DoubleType)) for f in fields.schema.fields):
            # The distinct partition values are found by Spark alone (no Python pass over
            # the batch); the key generator then turns those few rows into paths here.
            values = fields.distinct().toArrow()
            try:
                paths = set(keygen.partition_paths(values).to_pylist())
            except PartitionPathError:
                raise_for_first_bad_record(self.data, keygen, values)
                raise
            return sorted(paths), len(paths) == values.num_rows
        return distinct_paths_on_executors(self.data, keygen), False

    # --- executors: one pass when tasks hold whole partitions ---------------------------------
    def write_partitions(self, spec: GroupSpec, latest: Mapping[str, list[FileSlice]]) -> list[WriteStat]:
        """Key, dedupe, tag, plan and write in one pass (``tasks.write_partitions_task``):
        the records are hashed by partition and sorted by it within each task, so every
        task holds whole partitions, one at a time, and plans them as the driver would
        (Hudi's file sizing is per partition). The driver sees the write stats only,
        in the order of (partition, bucket).

        When the batch's partition fields map one to one to its paths, Spark shuffles on
        the fields and the keys are computed after the shuffle, in the same task;
        otherwise (timestamp or floating-point fields, values sharing a path) a first
        ``mapInArrow`` computes the paths to shuffle on.
        """
        n = self._write_tasks(len(latest))
        if self._touched_once()[1]:
            keys: tasks.KeySpec | None = tasks.KeySpec(self.prepared.keygen, self.settings.operation == "delete")
            data = self.data.withColumn(tasks.SEQ_COLUMN, F.monotonically_increasing_id())
            cols = [F.col(f) for f in self.prepared.keygen.partition_fields]
        else:
            keys = None
            data = self.keyed()
            cols = [F.col(tasks.PARTITION_PATH)]
        shuffled = data.repartition(n, *cols).sortWithinPartitions(*cols, F.col(tasks.SEQ_COLUMN))
        fn = functools.partial(tasks.write_partitions_task, spec=tasks.PartitionWriteSpec(keys, spec), latest=self._broadcast(latest))
        rows = shuffled.mapInArrow(fn, tasks.PARTITION_WRITE_SCHEMA).collect()
        self._count_calls(rows)
        return [WriteStat.from_json(json.loads(r.stat)) for r in sorted(rows, key=lambda r: (r.partition, r.bucket))]

    # --- executors: keys, dedupe, tags --------------------------------------------------------
    def keyed(self) -> DataFrame:
        """Input rows + input position + record key, partition path, delete flag and
        (null) file location."""
        with_seq = self.data.withColumn(tasks.SEQ_COLUMN, F.monotonically_increasing_id())
        schema = StructType(list(with_seq.schema.fields) + _KEYED_FIELDS)
        spec = tasks.KeySpec(self.prepared.keygen, self.settings.operation == "delete")
        return with_seq.mapInArrow(functools.partial(tasks.add_keys_task, spec=spec), schema)

    def tag(self, refs: Mapping[str, list[FileRef]]) -> DataFrame:
        """Keyed, deduped and tagged records, persisted (the counts and the handles both
        read them); duplicates meet because the shuffle hashes (partition, key), or the
        key alone with a global index (each task then looks its keys up in the record
        index itself: no key reaches the driver)."""
        s = self.settings
        keyed = self.keyed()
        if not (s.combine or s.tags_records):
            # Nothing needs duplicates to meet: no shuffle (bulk_insert, plain insert).
            return self._persist(keyed)
        n = self._shuffle_partitions()
        cols = [F.col(tasks.RECORD_KEY)] if s.index.is_global else [F.col(tasks.PARTITION_PATH), F.col(tasks.RECORD_KEY)]
        shuffled = keyed.repartition(n, *cols) if n else keyed.repartition(*cols)
        spec = tasks.TagSpec(self.table.storage, s)
        fn = functools.partial(tasks.dedupe_and_tag_task, spec=spec, refs=self._broadcast(dict(refs)))
        return self._persist(shuffled.mapInArrow(fn, keyed.schema))

    # --- driver: profiles -------------------------------------------------------------------
    def profiles(self, tagged: DataFrame) -> dict[str, PartitionProfile]:
        """Record counts per (partition, file id): the only thing about the records the
        driver ever sees."""
        counts = tagged.groupBy(tasks.PARTITION_PATH, FILE_ID_COLUMN).count().collect()
        updates: dict[str, dict[str, int]] = defaultdict(dict)
        inserts: Counter[str] = Counter()
        for partition, file_id, n in counts:
            if file_id is None:
                inserts[partition] += n
            else:
                updates[partition][file_id] = n
        return {p: PartitionProfile(updates.get(p, {}), inserts.get(p, 0)) for p in set(updates) | set(inserts)}

    # --- executors: buckets and handles -------------------------------------------------------
    def assign(self, tagged: DataFrame, plan: WritePlan) -> DataFrame:
        schema = StructType(list(tagged.schema.fields) + _spark_fields((BUCKET_COLUMN, IntegerType())))
        return tagged.mapInArrow(functools.partial(tasks.assign_buckets_task, plan=self._broadcast(plan)), schema)

    def bucket_counts(self, bucketed: DataFrame) -> dict[int, int]:
        """Records per bucket."""
        return {int(b): int(n) for b, n in bucketed.groupBy(BUCKET_COLUMN).count().collect()}

    def write_buckets(self, tagged: DataFrame, plan: WritePlan, wctx: WriteContext) -> list[WriteStat]:
        """Assign every record its bucket and run the write handle of every bucket on the
        executors; the write stats in bucket order."""
        return self.write_assigned(self.assign(tagged, plan), plan, wctx)

    def write_assigned(self, bucketed: DataFrame, plan: WritePlan, wctx: WriteContext) -> list[WriteStat]:
        """Run the write handles of records already assigned their buckets. Every call is
        a new Spark stage, hence new write tokens."""
        fn = tasks.write_bucket_udf(self._broadcast(plan), wctx)
        # hashed into explicit tasks first: the grouping then reuses that partitioning
        by_bucket = bucketed.repartition(self._write_tasks(len(plan.buckets)), BUCKET_COLUMN)
        rows = by_bucket.groupBy(BUCKET_COLUMN).applyInArrow(fn, tasks.BUCKET_WRITE_SCHEMA).collect()
        self._count_calls(rows)
        return [WriteStat.from_json(json.loads(r.stat)) for r in sorted(rows, key=lambda r: r.bucket)]

    def _count_calls(self, rows: list[Row]) -> None:
        for r in rows:
            self._task_calls.update(json.loads(r.calls))

    def storage_calls_elsewhere(self) -> Mapping[str, int]:
        """The storage calls of the tasks that wrote files (tagging, planning and the
        write handles), by kind."""
        return dict(self._task_calls)

    # --- resources --------------------------------------------------------------------------
    def _persist(self, df: DataFrame) -> DataFrame:
        df = df.persist(StorageLevel.MEMORY_AND_DISK)
        self._cached.append(df)
        return df

    def _broadcast(self, value: Any) -> Broadcast[Any]:
        bc = self.spark.sparkContext.broadcast(value)
        self._broadcasts.append(bc)
        return bc

    def release(self) -> None:
        """Drop the persisted DataFrames and broadcasts of this write."""
        for df in self._cached:
            df.unpersist()
        for bc in self._broadcasts:
            bc.unpersist()
        self._cached.clear()
        self._broadcasts.clear()
