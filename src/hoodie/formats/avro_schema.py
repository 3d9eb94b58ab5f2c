"""Arrow schemas ⇄ the Avro schema JSON that Hudi stores.

This module owns the translation between ``pyarrow`` schemas and Hudi's Avro schemas:

* :func:`arrow_to_avro_schema` builds the record that Java Hudi writes into commit
  metadata (``extraMetadata.schema``, without meta fields) and into
  ``parquet.avro.schema`` / log block headers (with the five meta fields first);
* :func:`avro_schema_to_arrow` reads any schema Java Hudi writes (either union order,
  logical types, fixed or bytes decimals, enums, nested records, arrays, maps, named-type
  references) back into Arrow;
* :func:`avro_schema_json` prints a schema dict compactly, as Java's ``Schema.toString()``.

Naming follows what Hudi's Spark writer gets from Spark's ``SchemaConverters.toAvroType``
plus ``AvroConversionUtils.getAvroSchemaWithDefaults`` (checked against the conformance
commits):

* top-level record ``<table>_record`` in namespace ``hoodie.<table>`` (table name sanitized
  like ``HoodieAvroUtils.sanitizeName``);
* a struct is a record named after its field, in the namespace
  ``<enclosing namespace>.<enclosing record name>``; array items and map values reuse the
  field's name and namespace (so ``arrayField: list<struct>`` → record ``arrayField``);
* a decimal is ``fixed`` named ``fixed`` in namespace ``<namespace>.<field name>``, sized
  with Spark's ``minBytesForPrecision``;
* every field, array item and map value is nullable, written ``["null", T]``, and every
  field gets ``"default": null``. Java-written parquet files are all-optional anyway, so
  Arrow nullability is not carried over (the Avro-writer files even mark list items
  ``not null`` while their commit schema says ``["null", record]``).
"""
from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

import pyarrow as pa

from hoodie.errors import SchemaError
from hoodie.formats.avro_nodes import arrow_field, parse_avro_schema
from hoodie.formats.meta_columns import META_COLUMNS

__all__ = [
    "arrow_to_avro_schema",
    "avro_record_name_and_namespace",
    "avro_schema_json",
    "avro_schema_to_arrow",
    "decimal_fixed_size",
]


AvroType = str | dict[str, Any] | list[Any]

_INVALID_FIRST = re.compile(r"[^A-Za-z_]")
_INVALID_CHARS = re.compile(r"[^A-Za-z0-9_]")


# --------------------------------------------------------------------------------------
# Names
# --------------------------------------------------------------------------------------


def _sanitize(name: str) -> str:
    """``HoodieAvroUtils.sanitizeName``: invalid characters become ``__``."""
    if not name:
        raise SchemaError("table name must not be empty")
    if _INVALID_FIRST.match(name[0]):
        name = "__" + name[1:]
    return _INVALID_CHARS.sub("__", name)


def avro_record_name_and_namespace(table_name: str) -> tuple[str, str]:
    """(``<table>_record``, ``hoodie.<table>``) with the table name sanitized as Hudi does."""
    name = _sanitize(table_name)
    return f"{name}_record", f"hoodie.{name}"


def _check_field_name(name: str) -> None:
    # Java Avro rejects such names when parsing the schema, so Java Hudi could not read a
    # table that has them; refuse early instead of writing an unreadable commit.
    if not name or not (name[0].isalpha() or name[0] == "_") or not all(c.isalnum() or c == "_" for c in name):
        raise SchemaError(
            f"column name {name!r} is not a valid Avro name (letters, digits and '_', "
            "not starting with a digit); Hudi cannot store it"
        )


def decimal_fixed_size(precision: int) -> int:
    """Spark's ``minBytesForPrecision``: bytes of the smallest two's complement holding 10**precision."""
    size = 1
    while 2 ** (8 * size - 1) < 10**precision:
        size += 1
    return size


# --------------------------------------------------------------------------------------
# Arrow -> Avro
# --------------------------------------------------------------------------------------


def _nullable(avro_type: AvroType) -> list[AvroType]:
    return ["null", avro_type]


def _field(name: str, avro_type: AvroType) -> dict[str, Any]:
    return {"name": name, "type": _nullable(avro_type), "default": None}


def _meta_field(name: str) -> dict[str, Any]:
    # HoodieAvroUtils.addMetadataFields builds them with doc "" (visible in parquet.avro.schema).
    return {"name": name, "type": ["null", "string"], "doc": "", "default": None}


def _record(arrow_type: pa.StructType, name: str, namespace: str) -> dict[str, Any]:
    child_namespace = f"{namespace}.{name}" if namespace else name
    fields = []
    for i in range(arrow_type.num_fields):
        f = arrow_type.field(i)
        _check_field_name(f.name)
        fields.append(_field(f.name, _to_avro(f.type, f.name, child_namespace)))
    return {"type": "record", "name": name, "namespace": namespace, "fields": fields}


def _to_avro(t: pa.DataType, name: str, namespace: str) -> AvroType:  # noqa: C901 (one branch per Arrow type)
    """Non-null Avro type of Arrow type *t* for a field called *name* in *namespace*."""
    if isinstance(t, pa.ExtensionType):
        return _to_avro(t.storage_type, name, namespace)
    if pa.types.is_dictionary(t):
        return _to_avro(t.value_type, name, namespace)
    if pa.types.is_boolean(t):
        return "boolean"
    if pa.types.is_int8(t) or pa.types.is_int16(t) or pa.types.is_int32(t):
        return "int"
    if pa.types.is_uint8(t) or pa.types.is_uint16(t):
        return "int"
    if pa.types.is_int64(t) or pa.types.is_uint32(t):
        return "long"
    if pa.types.is_uint64(t):
        raise SchemaError(f"column {name!r}: uint64 does not fit any Avro type; cast it to int64 or decimal")
    if pa.types.is_float16(t) or pa.types.is_float32(t):
        return "float"
    if pa.types.is_float64(t):
        return "double"
    if pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_string_view(t):
        return "string"
    if pa.types.is_binary(t) or pa.types.is_large_binary(t) or pa.types.is_binary_view(t):
        return "bytes"
    if pa.types.is_fixed_size_binary(t) and not pa.types.is_decimal(t):
        return {"type": "fixed", "name": "fixed", "namespace": f"{namespace}.{name}", "size": t.byte_width}
    if pa.types.is_decimal(t):
        return {
            "type": "fixed",
            "name": "fixed",
            "namespace": f"{namespace}.{name}",
            "size": decimal_fixed_size(t.precision),
            "logicalType": "decimal",
            "precision": t.precision,
            "scale": t.scale,
        }
    if pa.types.is_date(t):
        # date64 is milliseconds in Arrow but Avro/Spark dates are days: the data must be
        # cast to date32 when written.
        return {"type": "int", "logicalType": "date"}
    if pa.types.is_time32(t):
        return {"type": "int", "logicalType": "time-millis"}
    if pa.types.is_time64(t):
        return {"type": "long", "logicalType": "time-micros"}
    if pa.types.is_timestamp(t):
        # Spark/Hudi store micros; s and ns data must be cast by the writer to ms / us.
        # A zone means an instant (Spark TimestampType); no zone is Spark TimestampNTZType.
        unit = "millis" if t.unit in ("s", "ms") else "micros"
        prefix = "timestamp" if t.tz is not None else "local-timestamp"
        return {"type": "long", "logicalType": f"{prefix}-{unit}"}
    if (
        pa.types.is_list(t)
        or pa.types.is_large_list(t)
        or pa.types.is_fixed_size_list(t)
        or pa.types.is_list_view(t)
        or pa.types.is_large_list_view(t)
    ):
        return {"type": "array", "items": _nullable(_to_avro(t.value_type, name, namespace))}
    if pa.types.is_map(t):
        key_type = t.key_type
        if pa.types.is_dictionary(key_type):
            key_type = key_type.value_type
        if not (pa.types.is_string(key_type) or pa.types.is_large_string(key_type) or pa.types.is_string_view(key_type)):
            raise SchemaError(f"column {name!r}: Avro maps need string keys, got {t.key_type}")
        return {"type": "map", "values": _nullable(_to_avro(t.item_type, name, namespace))}
    if pa.types.is_struct(t):
        return _record(t, name, namespace)
    if pa.types.is_null(t):
        raise SchemaError(f"column {name!r} has Arrow type null (all values missing); give it a concrete type")
    raise SchemaError(f"column {name!r}: Arrow type {t} has no Hudi/Avro equivalent")


def arrow_to_avro_schema(schema: pa.Schema, table_name: str, include_meta_fields: bool = False) -> dict[str, Any]:
    """The Avro record Hudi writes for data with Arrow schema *schema* in table *table_name*.

    Meta columns present in *schema* are dropped; with *include_meta_fields* the five
    meta fields are put first, as in ``parquet.avro.schema`` and log block headers.
    Without, the result is the commit metadata ``extraMetadata.schema``.
    """
    record_name, namespace = avro_record_name_and_namespace(table_name)
    child_namespace = f"{namespace}.{record_name}"
    fields: list[dict[str, Any]] = []
    if include_meta_fields:
        fields.extend(_meta_field(m) for m in META_COLUMNS)
    seen: set[str] = set()
    for f in schema:
        if f.name in META_COLUMNS:
            continue
        _check_field_name(f.name)
        if f.name in seen:
            raise SchemaError(f"duplicate column name {f.name!r}")
        seen.add(f.name)
        fields.append(_field(f.name, _to_avro(f.type, f.name, child_namespace)))
    return {"type": "record", "name": record_name, "namespace": namespace, "fields": fields}


def avro_schema_json(schema: Mapping[str, Any] | list[Any] | str) -> str:
    """Compact JSON of *schema*, as Java's ``Schema.toString()`` (no spaces, keys in order).

    Non-ASCII characters are written as UTF-8, like Jackson does. Dicts produced by
    :func:`arrow_to_avro_schema` already have Java's key order; dicts parsed from Java JSON
    keep theirs, so parse + print round-trips.
    """
    return json.dumps(schema, separators=(",", ":"), ensure_ascii=False)


# --------------------------------------------------------------------------------------
# Avro -> Arrow
# --------------------------------------------------------------------------------------


def avro_schema_to_arrow(schema: Mapping[str, Any] | str) -> pa.Schema:
    """Arrow schema of a top-level Avro record given as a dict or JSON text.

    Unions with null (either position) give nullable fields; other unions follow Spark
    (int|long → int64, float|double → float64, else a struct of ``member<i>``). Enums
    become strings, decimals (fixed or bytes) ``decimal128``, timestamps ``timestamp[...,
    UTC]`` and local timestamps zone-less; array items are named ``element``.
    """
    return pa.schema([arrow_field(name, node) for name, node in parse_avro_schema(schema).fields])
