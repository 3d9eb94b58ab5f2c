"""``HoodieDataSource``: hoodie as a PySpark Python data source named ``"hoodie"``.

The class only names the source, gives its schema and hands each role to the module that
owns it: ``spark.readStream.format("hoodie")`` to :mod:`hoodie.spark.stream_source`,
``df.writeStream.format("hoodie")`` (where :func:`~hoodie.spark.register` did not patch
the stream writer) to :mod:`hoodie.spark.stream_writer`, batch
reads (``spark.read.format("hoodie")`` without :func:`~hoodie.spark.register`, and SQL over
catalog tables ``USING hoodie``) to :mod:`hoodie.spark.source_batch`, batch writes to
:mod:`hoodie.spark.source_write`. Where :func:`~hoodie.spark.register` installed them, the
patched ``DataFrameReader``/``DataFrameWriter`` (:mod:`hoodie.spark.datasource`) answer
batch ``format("hoodie")`` first (native Parquet reads, the distributed write pipeline);
it registers this class too (:func:`register_source`). PySpark also finds it without any
call, as the ``DefaultSource`` of the ``pyspark_hoodie`` package.

The schema is the table's (:func:`table_schema`): the meta columns and the data columns
of its latest commit's schema, as a snapshot or incremental read returns them.
"""
from __future__ import annotations

from collections.abc import Mapping

from pyspark.sql import SparkSession
from pyspark.sql.datasource import DataSource, DataSourceReader, DataSourceStreamReader, DataSourceStreamWriter, DataSourceWriter
from pyspark.sql.pandas.types import from_arrow_schema
from pyspark.sql.types import StructType

from hoodie.errors import ConfigError, TableError
from hoodie.query.reader import output_schema
from hoodie.spark.source_batch import HoodieBatchReader, read_target
from hoodie.spark.source_write import HoodieBatchWriter, path_option, writer_options
from hoodie.spark.stream_source import HoodieStreamReader, StreamSettings
from hoodie.spark.stream_writer import stream_writer
from hoodie.table.table import HoodieTable

FORMAT = "hoodie"


def table_path(options: Mapping[str, str]) -> str:
    """The table path a data source was given (``load(path)`` or ``option("path", ...)``)."""
    path = path_option(options)
    if path is not None:
        return path
    raise ConfigError("format('hoodie') needs a table path: load(path) or option('path', path)")


def table_schema(path: str) -> StructType:
    """The Spark schema of the table at ``path``, as its reads return it."""
    table = HoodieTable.open(path)
    schema = output_schema(table)
    if schema is None:
        raise TableError(
            f"{table.base_path} has no commit yet, so no schema: start the query after its first commit, "
            "or give the schema (readStream.schema(...))"
        )
    return from_arrow_schema(schema)


class HoodieDataSource(DataSource):
    """hoodie tables as a Python data source (module docstring)."""

    @classmethod
    def name(cls) -> str:
        return FORMAT

    def schema(self) -> StructType:
        return table_schema(table_path(self.options))

    def reader(self, schema: StructType) -> DataSourceReader:
        return HoodieBatchReader(*read_target(self.options, schema), schema)

    def writer(self, schema: StructType, overwrite: bool) -> DataSourceWriter:
        return HoodieBatchWriter(*writer_options(self.options), schema, overwrite)

    def streamReader(self, schema: StructType) -> DataSourceStreamReader:  # noqa: N802 (PySpark's name)
        return HoodieStreamReader(StreamSettings.of(self.options), schema)

    def streamWriter(self, schema: StructType, overwrite: bool) -> DataSourceStreamWriter:  # noqa: N802 (PySpark's name)
        return stream_writer(self.options, schema, overwrite)


def register_source(spark: SparkSession) -> None:
    """Register :class:`HoodieDataSource` with ``spark`` (``spark.dataSource.register``),
    unless the session has it already: PySpark found the ``pyspark_hoodie`` package (then
    registering again only logs that a static source was replaced), or an earlier call."""
    if spark._jsparkSession.sessionState().dataSourceManager().dataSourceExists(FORMAT):
        return
    spark.dataSource.register(HoodieDataSource)
