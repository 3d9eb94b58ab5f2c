"""Spark test fixtures: ONE local session for the whole run, and comparison helpers.

Every Spark test takes the session-scoped ``spark`` fixture (the plugin
``tests/support/spark_session.py``: one local session for the run). Comparisons go
through Arrow: a DataFrame's rows and Spark types against what the in-process reader
(``hoodie.read``) or hudi-rs returns. The helper functions reach tests through the
``helpers`` fixture (tests are imported with ``--import-mode=importlib``, so they cannot
import this module).
"""
from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from pyspark.sql import DataFrame, SparkSession  # noqa: E402
from pyspark.sql.pandas.types import from_arrow_schema  # noqa: E402
from readers import hudi_rs_table
from table_options import trip_options

META = ("_hoodie_commit_time", "_hoodie_commit_seqno", "_hoodie_record_key", "_hoodie_partition_path", "_hoodie_file_name")
# Meta columns that legitimately differ between two writers of the same data.
VOLATILE = ("_hoodie_commit_time", "_hoodie_commit_seqno", "_hoodie_file_name")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    # Tests that start or use the JVM carry the project's "spark" marker (-m "not spark").
    here = Path(__file__).parent
    for item in items:
        if here in Path(item.path).parents and "spark" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.spark)


def base_options(**extra: Any) -> dict[str, Any]:
    return trip_options(**extra)


def to_df(spark: SparkSession, data: pa.Table) -> DataFrame:
    """A DataFrame of ``data`` (Spark splits it over several partitions, in order)."""
    return spark.createDataFrame(data)


def _row_key(row: dict[str, Any]) -> str:
    return json.dumps(row, sort_keys=True, default=str)


def rows(data: pa.Table | DataFrame, drop: tuple[str, ...] = ()) -> list[dict[str, Any]]:
    """Rows as dicts, minus ``drop`` columns, in a canonical order."""
    table = data.toArrow() if isinstance(data, DataFrame) else data
    keep = [c for c in table.column_names if c not in drop]
    return sorted(table.select(keep).to_pylist(), key=_row_key)


def spark_types(schema: pa.Schema) -> list[tuple[str, str]]:
    """(name, Spark type) per column, nullability aside: what a DataFrame of it shows."""
    return [(f.name, f.dataType.simpleString()) for f in from_arrow_schema(schema).fields]


def df_types(df: DataFrame) -> list[tuple[str, str]]:
    return [(f.name, f.dataType.simpleString()) for f in df.schema.fields]


def data_files(path: str | Path) -> list[Path]:
    """Every base file under a table (whatever its commit state)."""
    return sorted(p for p in Path(path).rglob("*.parquet") if ".hoodie" not in p.parts)


class Helpers:
    META = META
    VOLATILE = VOLATILE
    base_options = staticmethod(base_options)
    to_df = staticmethod(to_df)
    rows = staticmethod(rows)
    spark_types = staticmethod(spark_types)
    df_types = staticmethod(df_types)
    data_files = staticmethod(data_files)
    hudi_rs_snapshot = staticmethod(hudi_rs_table)


@pytest.fixture(scope="session")
def helpers() -> type[Helpers]:
    return Helpers


@pytest.fixture
def source_only(spark: SparkSession) -> Iterator[None]:
    """The session knows hoodie as a Python data source only (the writer classes unpatched),
    as a session that found the ``pyspark_hoodie`` package without ``hoodie.spark.register``."""
    from hoodie.spark import register, unregister
    from hoodie.spark.source import register_source

    unregister()
    register_source(spark)
    try:
        yield
    finally:
        register(spark)
