"""Arrow types as Hive column types (the type names Hive and Spark SQL share).

The registered tables are read through hoodie's data source, so a column's type is the
one Spark gives the Arrow type hoodie reads (``pyspark``'s ``from_arrow_type``): 8-, 16-,
32- and 64-bit integers are ``tinyint``, ``smallint``, ``int`` and ``bigint``; every
timestamp is ``timestamp``. Unsigned integers, and anything Spark has no type for, are a
:class:`~hoodie.errors.SchemaError` naming the column.
"""
from __future__ import annotations

import pyarrow as pa
import pyarrow.types as pat

from hoodie.errors import SchemaError

_SIMPLE: tuple[tuple[object, str], ...] = (
    (pat.is_boolean, "boolean"),
    (pat.is_int8, "tinyint"),
    (pat.is_int16, "smallint"),
    (pat.is_int32, "int"),
    (pat.is_int64, "bigint"),
    (pat.is_float32, "float"),
    (pat.is_float64, "double"),
    (pat.is_string, "string"),
    (pat.is_large_string, "string"),
    (pat.is_binary, "binary"),
    (pat.is_large_binary, "binary"),
    (pat.is_fixed_size_binary, "binary"),
    (pat.is_date32, "date"),
    (pat.is_timestamp, "timestamp"),
)


def quote(name: str) -> str:
    """A column or field name as Hive and Spark SQL quote it (backticks, doubled inside)."""
    return "`" + name.replace("`", "``") + "`"


def hive_type(arrow_type: pa.DataType, column: str = "") -> str:
    """The Hive type name of ``arrow_type`` (``column`` names it in errors)."""
    for test, name in _SIMPLE:
        if test(arrow_type):  # type: ignore[operator]
            return name
    if pat.is_decimal(arrow_type):
        return f"decimal({arrow_type.precision},{arrow_type.scale})"
    if pat.is_list(arrow_type) or pat.is_large_list(arrow_type):
        return f"array<{hive_type(arrow_type.value_type, column)}>"
    if pat.is_map(arrow_type):
        return f"map<{hive_type(arrow_type.key_type, column)},{hive_type(arrow_type.item_type, column)}>"
    if pat.is_struct(arrow_type):
        fields = [f"{quote(f.name)}:{hive_type(f.type, column)}" for f in arrow_type]
        return f"struct<{','.join(fields)}>"
    raise SchemaError(f"column {column!r} has type {arrow_type}, which has no Hive type a catalog table could declare")
