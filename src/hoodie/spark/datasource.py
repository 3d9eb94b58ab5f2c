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

from hoodie.errors import ConfigError
from hoodie.spark.read import read_dataframe
from hoodie.spark.source import register_source
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


def recorded(obj: DataFrameWriter | DataFrameReader) -> Recorded:
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
        partition_by = (tuple([partitionBy]) if isinstance(partitionBy, str) else tuple(partitionBy)) if partitionBy else st.partition_by
        if partition_by:
            # Hudi takes partitionBy columns as the partition path fields when none are set.
            given = opts.get(PARTITION_COLUMNS_OPTION)
            if given is None:
                opts[PARTITION_COLUMNS_OPTION] = ",".join(partition_by)
            elif [f.strip() for f in str(given).split(",")] != list(partition_by):
                raise ConfigError(f"partitionBy({', '.join(partition_by)}) conflicts with {PARTITION_COLUMNS_OPTION}={given}")
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
_READER_RECORDERS: dict[str, Callable[..., None]] = {
    "format": _record_format,
    "option": _record_option,
    "options": _record_options,
    "schema": _record_schema,
}


def is_registered() -> bool:
    """Whether :func:`register` has patched the writer and reader classes."""
    return bool(getattr(DataFrameWriter.save, _WRAPPED, False) and getattr(DataFrameReader.load, _WRAPPED, False))


def register(spark: SparkSession | None = None) -> None:
    """Enable ``df.write.format("hoodie")``, ``spark.read.format("hoodie")`` and
    ``spark.readStream.format("hoodie")``.

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
    for cls, recorders in ((DataFrameWriter, _WRITER_RECORDERS), (DataFrameReader, _READER_RECORDERS)):
        for name, record in recorders.items():
            _ORIGINALS[(cls, name)] = getattr(cls, name)
            setattr(cls, name, _recording(cls, name, record))
    _ORIGINALS[(DataFrameWriter, "save")] = DataFrameWriter.save
    DataFrameWriter.save = _save(DataFrameWriter.save)  # type: ignore[method-assign]
    _ORIGINALS[(DataFrameReader, "load")] = DataFrameReader.load
    DataFrameReader.load = _load(DataFrameReader.load)  # type: ignore[method-assign]


def unregister() -> None:
    """Restore Spark's original methods (a no-op when hoodie is not registered)."""
    for (cls, name), original in _ORIGINALS.items():
        setattr(cls, name, original)
    _ORIGINALS.clear()
