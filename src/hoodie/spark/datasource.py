"""``format("hoodie")`` for PySpark's DataFrameWriter and DataFrameReader.

PySpark's Python DataSource API hands a writer one partition at a time, but a Hudi commit
needs the whole DataFrame (dedupe across it, a plan over it, one commit at the end). So
instead of a DataSource, :func:`register` wraps a few methods of the classic
``pyspark.sql.readwriter.DataFrameWriter`` and ``DataFrameReader`` classes:

* ``format``, ``option``, ``options``, ``mode``, ``partitionBy`` (writer) and ``schema``
  (reader) still call Spark's own method, and also record their arguments on the
  writer/reader object;
* ``save`` and ``load`` dispatch to :func:`~hoodie.spark.write.write_dataframe` and
  :func:`~hoodie.spark.read.read_dataframe` when the format is ``"hoodie"`` (only that
  name: ``"hudi"`` stays Apache Hudi's, if its jars are on the classpath); any other
  format goes to Spark's original method untouched.

``df.writeStream.format("hoodie")`` is patched the same way on
``pyspark.sql.streaming.readwriter.DataStreamWriter``: ``format``, ``option``,
``options``, ``outputMode``, ``partitionBy``, ``queryName`` and ``trigger`` are recorded
(``partitionBy`` only there: Spark refuses it for the ``foreachBatch`` a hoodie query
runs on), and ``start`` of a hoodie query starts a fresh Spark writer carrying the
recorded options, output mode, query name and trigger, with a
:class:`~hoodie.spark.stream_sink.HoodieStreamingSink` as its ``foreachBatch`` function.

The patch is process-wide (every session), idempotent, and undone by :func:`unregister`.
Spark Connect sessions use other classes and are not patched.
"""
from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql.readwriter import DataFrameReader, DataFrameWriter
from pyspark.sql.streaming import StreamingQuery
from pyspark.sql.streaming.readwriter import DataStreamWriter

from hoodie.errors import ConfigError
from hoodie.spark.read import read_dataframe
from hoodie.spark.source import register_source
from hoodie.spark.stream_sink import HoodieStreamingSink
from hoodie.spark.write import write_dataframe

FORMAT = "hoodie"
PARTITION_COLUMNS_OPTION = "hoodie.datasource.write.partitionpath.field"
_STATE = "_hoodie_recorded"
_WRAPPED = "__hoodie_wrapped__"
_ORIGINALS: dict[tuple[type, str], Callable[..., Any]] = {}


@dataclass
class Recorded:
    """What a writer or reader was told so far (Spark keeps its copy in the JVM)."""

    format: str | None = None
    options: dict[str, Any] = field(default_factory=dict)
    mode: str | None = None
    partition_by: tuple[str, ...] | None = None
    schema: Any = None
    query_name: str | None = None
    trigger: dict[str, Any] | None = None


def recorded(obj: DataFrameWriter | DataFrameReader | DataStreamWriter) -> Recorded:
    """The arguments recorded on ``obj`` (created empty on first use)."""
    state = obj.__dict__.get(_STATE)
    if state is None:
        state = Recorded()
        obj.__dict__[_STATE] = state
    return state


def _is_hoodie(fmt: str | None) -> bool:
    return fmt is not None and fmt.strip().lower() == FORMAT


def _pop_path(options: dict[str, Any]) -> str | None:
    # Spark option keys are case-insensitive: "path" and "PATH" are the same option.
    for key in [k for k in options if k.lower() == "path"]:
        value = options.pop(key)
        if value is not None:
            return str(value)
    return None


def _partition_fields(opts: dict[str, Any], partition_by: str | list[str] | None, st: Recorded) -> None:
    """Hudi takes partitionBy columns as the partition path fields when none are set."""
    columns = (tuple([partition_by]) if isinstance(partition_by, str) else tuple(partition_by)) if partition_by else st.partition_by
    if columns:
        given = opts.get(PARTITION_COLUMNS_OPTION)
        if given is None:
            opts[PARTITION_COLUMNS_OPTION] = ",".join(columns)
        elif [f.strip() for f in str(given).split(",")] != list(columns):
            raise ConfigError(f"partitionBy({', '.join(columns)}) conflicts with {PARTITION_COLUMNS_OPTION}={given}")


# --- wrappers ---------------------------------------------------------------------------------


def _recording(cls: type, name: str, record: Callable[..., None]) -> Callable[..., Any]:
    original = getattr(cls, name)

    @functools.wraps(original)
    def wrapper(self: Any, *args: Any, **kwargs: Any) -> Any:
        result = original(self, *args, **kwargs)  # Spark validates first
        record(recorded(self), *args, **kwargs)
        return result

    setattr(wrapper, _WRAPPED, True)
    return wrapper


def _record_format(st: Recorded, source: str) -> None:
    st.format = source


def _record_option(st: Recorded, key: str, value: Any) -> None:
    st.options[key] = value


def _record_options(st: Recorded, **options: Any) -> None:
    st.options.update(options)


def _record_mode(st: Recorded, saveMode: str | None) -> None:  # noqa: N803 (Spark's name)
    if saveMode is not None:
        st.mode = saveMode


def _record_partition_by(st: Recorded, *cols: Any) -> None:
    if len(cols) == 1 and isinstance(cols[0], (list, tuple)):
        cols = tuple(cols[0])
    st.partition_by = tuple(str(c) for c in cols)


def _record_schema(st: Recorded, schema: Any) -> None:
    st.schema = schema


def _record_query_name(st: Recorded, queryName: str) -> None:  # noqa: N803
    st.query_name = queryName


def _record_trigger(st: Recorded, **kwargs: Any) -> None:
    st.trigger = kwargs


def _stream_partition_by(original: Callable[..., Any]) -> Callable[..., Any]:
    """DataStreamWriter.partitionBy: recorded; passed to Spark only once the format is
    known and not hoodie's (a hoodie query runs on foreachBatch, which refuses it)."""

    @functools.wraps(original)
    def partition_by(self: DataStreamWriter, *cols: Any) -> DataStreamWriter:
        _record_partition_by(recorded(self), *cols)
        return self

    setattr(partition_by, _WRAPPED, True)
    return partition_by


def _start(original: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(original)
    def start(
        self: DataStreamWriter,
        path: str | None = None,
        format: str | None = None,  # noqa: A002 (Spark's signature)
        outputMode: str | None = None,  # noqa: N803
        partitionBy: str | list[str] | None = None,  # noqa: N803
        queryName: str | None = None,  # noqa: N803
        **options: Any,
    ) -> StreamingQuery:
        st = recorded(self)
        if not _is_hoodie(format or st.format):
            if partitionBy is None and st.partition_by:  # recorded only: Spark's own now
                _ORIGINALS[(DataStreamWriter, "partitionBy")](self, *st.partition_by)
            elif partitionBy is not None:
                _ORIGINALS[(DataStreamWriter, "partitionBy")](self, partitionBy)
            return original(self, path, format, outputMode, None, queryName, **options)
        opts = {**st.options, **options}
        option_path = _pop_path(opts)
        path = path or option_path
        if path is None:
            raise ConfigError("df.writeStream.format('hoodie').start() needs a table path: start(path) or option('path', path)")
        _partition_fields(opts, partitionBy, st)
        sink = HoodieStreamingSink(self._spark, str(path), opts, outputMode or st.mode)
        # a fresh Spark writer: the one recorded into holds the hoodie format
        self._jwrite = self._df._jdf.writeStream()
        spark_side = {k: v for k, v in {**st.options, **options}.items() if v is not None}
        _ORIGINALS[(DataStreamWriter, "options")](self, **{k: str(v) for k, v in spark_side.items()})
        _ORIGINALS[(DataStreamWriter, "outputMode")](self, outputMode or st.mode or "append")
        if queryName or st.query_name:
            _ORIGINALS[(DataStreamWriter, "queryName")](self, queryName or st.query_name)
        if st.trigger:
            _ORIGINALS[(DataStreamWriter, "trigger")](self, **st.trigger)
        self.foreachBatch(sink.add_batch)
        return original(self)

    setattr(start, _WRAPPED, True)
    return start


def _save(original: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(original)
    def save(
        self: DataFrameWriter,
        path: str | None = None,
        format: str | None = None,  # noqa: A002 (Spark's signature)
        mode: str | None = None,
        partitionBy: str | list[str] | None = None,  # noqa: N803
        **options: Any,
    ) -> None:
        st = recorded(self)
        if not _is_hoodie(format or st.format):
            return original(self, path, format, mode, partitionBy, **options)
        opts = {**st.options, **options}
        option_path = _pop_path(opts)
        path = path or option_path
        if path is None:
            raise ConfigError("df.write.format('hoodie').save() needs a table path: save(path) or option('path', path)")
        _partition_fields(opts, partitionBy, st)
        write_dataframe(self._df, path, opts, mode or st.mode)
        return None

    setattr(save, _WRAPPED, True)
    return save


def _load(original: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(original)
    def load(
        self: DataFrameReader,
        path: str | list[str] | None = None,
        format: str | None = None,  # noqa: A002
        schema: Any = None,
        **options: Any,
    ) -> DataFrame:
        st = recorded(self)
        if not _is_hoodie(format or st.format):
            return original(self, path, format, schema, **options)
        if schema is not None or st.schema is not None:
            raise ConfigError("format('hoodie') reads the table's own schema; do not pass a schema")
        opts = {**st.options, **options}
        if isinstance(path, (list, tuple)):
            if len(path) != 1:
                raise ConfigError(f"format('hoodie') reads one table path, got {len(path)}: {list(path)}")
            path = path[0]
        option_path = _pop_path(opts)
        path = path or option_path
        if path is None:
            raise ConfigError("spark.read.format('hoodie').load() needs a table path: load(path) or option('path', path)")
        return read_dataframe(self._spark, str(path), opts)

    setattr(load, _WRAPPED, True)
    return load


_WRITER_RECORDERS: dict[str, Callable[..., None]] = {
    "format": _record_format,
    "option": _record_option,
    "options": _record_options,
    "mode": _record_mode,
    "partitionBy": _record_partition_by,
}
_STREAM_WRITER_RECORDERS: dict[str, Callable[..., None]] = {
    "format": _record_format,
    "option": _record_option,
    "options": _record_options,
    "outputMode": _record_mode,
    "queryName": _record_query_name,
    "trigger": _record_trigger,
}
_READER_RECORDERS: dict[str, Callable[..., None]] = {
    "format": _record_format,
    "option": _record_option,
    "options": _record_options,
    "schema": _record_schema,
}


def is_registered() -> bool:
    """Whether :func:`register` has patched the writer and reader classes."""
    return all(getattr(method, _WRAPPED, False) for method in (DataFrameWriter.save, DataFrameReader.load, DataStreamWriter.start))


def register(spark: SparkSession | None = None) -> None:
    """Enable ``df.write.format("hoodie")``, ``spark.read.format("hoodie")``,
    ``spark.readStream.format("hoodie")`` and ``df.writeStream.format("hoodie")``.

    Safe to call any number of times. The writer and reader patch applies to every
    classic session of this process; the Python data source
    (:class:`~hoodie.spark.source.HoodieDataSource`, streaming reads) is registered with
    ``spark`` (default: the active session).
    """
    session = spark if spark is not None else SparkSession.getActiveSession()
    if session is not None:
        register_source(session)
    if is_registered():
        return
    recorders_of: tuple[tuple[type, dict[str, Callable[..., None]]], ...] = (
        (DataFrameWriter, _WRITER_RECORDERS), (DataFrameReader, _READER_RECORDERS), (DataStreamWriter, _STREAM_WRITER_RECORDERS),
    )
    for cls, recorders in recorders_of:
        for name, record in recorders.items():
            _ORIGINALS[(cls, name)] = getattr(cls, name)
            setattr(cls, name, _recording(cls, name, record))
    _ORIGINALS[(DataStreamWriter, "partitionBy")] = DataStreamWriter.partitionBy
    DataStreamWriter.partitionBy = _stream_partition_by(DataStreamWriter.partitionBy)  # type: ignore[method-assign]
    _ORIGINALS[(DataStreamWriter, "start")] = DataStreamWriter.start
    DataStreamWriter.start = _start(DataStreamWriter.start)  # type: ignore[method-assign]
    _ORIGINALS[(DataFrameWriter, "save")] = DataFrameWriter.save
    DataFrameWriter.save = _save(DataFrameWriter.save)  # type: ignore[method-assign]
    _ORIGINALS[(DataFrameReader, "load")] = DataFrameReader.load
    DataFrameReader.load = _load(DataFrameReader.load)  # type: ignore[method-assign]


def unregister() -> None:
    """Restore Spark's original methods (a no-op when hoodie is not registered)."""
    for (cls, name), original in _ORIGINALS.items():
        setattr(cls, name, original)
    _ORIGINALS.clear()
