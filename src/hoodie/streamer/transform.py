"""The streamer's SQL transformation (Hudi's SqlQueryBasedTransformer and
SqlFileBasedTransformer): one query over the batch, ``<SRC>`` naming it.

:func:`transformer_sql` takes the query from ``hoodie.streamer.transformer.sql`` or the
file ``hoodie.streamer.transformer.sql.file`` names; :func:`with_view` puts a view's name
in place of ``<SRC>`` (as Hudi does, a temporary name of its own per batch); in process
:func:`with_duckdb` runs it with DuckDB on the Arrow batch (on Spark, ``spark.sql`` over
a temporary view). A query that fails is a :class:`~hoodie.errors.ConfigError` naming
the option and the query, and the batch is not written.
"""
from __future__ import annotations

import uuid

import pyarrow as pa

from hoodie.config.options import STREAMER_TRANSFORMER_SQL, STREAMER_TRANSFORMER_SQL_FILE, HoodieConfig
from hoodie.errors import ConfigError
from hoodie.storage.factory import storage_for

SRC = "<SRC>"


def transformer_sql(config: HoodieConfig) -> str | None:
    """The transformation's query, or None when none is configured."""
    sql, path = config.get(STREAMER_TRANSFORMER_SQL), config.get(STREAMER_TRANSFORMER_SQL_FILE)
    if sql and path:
        raise ConfigError(f"set {STREAMER_TRANSFORMER_SQL.key} or {STREAMER_TRANSFORMER_SQL_FILE.key}, not both")
    if path:
        try:
            sql = storage_for(path).read_bytes(path).decode("utf-8")
        except (OSError, UnicodeDecodeError) as e:
            raise ConfigError(f"cannot read {STREAMER_TRANSFORMER_SQL_FILE.key}={path!r}: {e}") from e
    if sql is None:
        return None
    sql = sql.strip().rstrip(";").strip()
    if SRC not in sql:
        option = STREAMER_TRANSFORMER_SQL_FILE if path else STREAMER_TRANSFORMER_SQL
        raise ConfigError(f"the query of {option.key} does not name the batch as {SRC}: {sql!r}")
    return sql


def view_name() -> str:
    """A fresh name for the batch's view (Hudi's ``HOODIE_SRC_TMP_TABLE_<uuid>``)."""
    return f"HOODIE_SRC_TMP_TABLE_{uuid.uuid4().hex}"


def with_view(sql: str, view: str) -> str:
    return sql.replace(SRC, view)


def failed(sql: str, error: BaseException) -> ConfigError:
    return ConfigError(f"the streamer's transformation ({STREAMER_TRANSFORMER_SQL.key}) failed: {error}; query: {sql!r}")


def with_duckdb(data: pa.Table, sql: str) -> pa.Table:
    """``sql`` run by DuckDB with ``<SRC>`` naming ``data``."""
    try:
        import duckdb
    except ImportError as e:  # an optional dependency (the "streamer" extra)
        raise ConfigError(f"{STREAMER_TRANSFORMER_SQL.key} in process needs DuckDB: pip install 'hoodie[streamer]' (or duckdb)") from e
    view = view_name()
    con = duckdb.connect()
    try:
        con.register(view, data)
        result = con.sql(with_view(sql, view))
        if result is None:  # a statement, not a query
            raise failed(sql, ValueError("the statement returns no rows"))
        # to_arrow_table in DuckDB 1.4 and later; arrow() returned the table before
        to_table = getattr(result, "to_arrow_table", None) or result.arrow
        return to_table()
    except duckdb.Error as e:
        raise failed(sql, e) from e
    finally:
        con.close()
