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
from typing import Any, Union

import pyarrow as pa

from hoodie.errors import SchemaError

__all__ = [
    "META_FIELDS",
    "arrow_to_avro_schema",
    "avro_record_name_and_namespace",
    "avro_schema_json",
    "avro_schema_to_arrow",
    "decimal_fixed_size",
]

#: Hudi's meta columns, in file order; all ``["null", "string"]``.
META_FIELDS: tuple[str, ...] = (
    "_hoodie_commit_time",
    "_hoodie_commit_seqno",
    "_hoodie_record_key",
    "_hoodie_partition_path",
    "_hoodie_file_name",
)

AvroType = Union[str, dict[str, Any], list[Any]]

_INVALID_FIRST = re.compile(r"[^A-Za-z_]")
_INVALID_CHARS = re.compile(r"[^A-Za-z0-9_]")
_PRIMITIVES = frozenset({"null", "boolean", "int", "long", "float", "double", "bytes", "string"})


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


def _to_avro(t: pa.DataType, name: str, namespace: str) -> AvroType:
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
        fields.extend(_meta_field(m) for m in META_FIELDS)
    seen: set[str] = set()
    for f in schema:
        if f.name in META_FIELDS:
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


def _full_name(name: str, namespace: str | None) -> str:
    if "." in name or not namespace:
        return name
    return f"{namespace}.{name}"


def _namespace_of(full_name: str) -> str | None:
    return full_name.rsplit(".", 1)[0] if "." in full_name else None


class _AvroReader:
    """One pass over an Avro schema, remembering named types for later references."""

    def __init__(self) -> None:
        self.named: dict[str, pa.DataType] = {}
        self.in_progress: set[str] = set()

    def field_type(self, avro: AvroType, namespace: str | None) -> tuple[pa.DataType, bool]:
        """(Arrow type, nullable) of an Avro type used as a field, item or map value."""
        if isinstance(avro, list):
            branches = [b for b in avro if b != "null"]
            nullable = len(branches) != len(avro)
            if not branches:
                return pa.null(), True
            if len(branches) == 1:
                return self.arrow_type(branches[0], namespace), nullable
            return self.union_type(branches, namespace), nullable
        return self.arrow_type(avro, namespace), False

    def union_type(self, branches: list[AvroType], namespace: str | None) -> pa.DataType:
        """A union of several non-null types, resolved as Spark's SchemaConverters does."""
        kinds = {b if isinstance(b, str) else b.get("type") for b in branches}
        plain = all(isinstance(b, str) or "logicalType" not in b for b in branches)
        if plain and kinds == {"int", "long"}:
            return pa.int64()
        if plain and kinds == {"float", "double"}:
            return pa.float64()
        # Anything else becomes a struct with one nullable member per branch.
        members = []
        for i, b in enumerate(branches):
            members.append(pa.field(f"member{i}", self.arrow_type(b, namespace), nullable=True))
        return pa.struct(members)

    def arrow_type(self, avro: AvroType, namespace: str | None) -> pa.DataType:
        if isinstance(avro, list):
            arrow, _ = self.field_type(avro, namespace)
            return arrow
        if isinstance(avro, str):
            if avro in _PRIMITIVES:
                return _primitive(avro)
            for candidate in (_full_name(avro, namespace), avro):
                if candidate in self.in_progress:
                    raise SchemaError(f"recursive Avro type {candidate!r} has no Arrow equivalent")
                if candidate in self.named:
                    return self.named[candidate]
            raise SchemaError(f"Avro schema references unknown type {avro!r}")
        if not isinstance(avro, Mapping):
            raise SchemaError(f"not an Avro schema: {avro!r}")
        kind = avro.get("type")
        logical = avro.get("logicalType")
        if kind == "record" or kind == "error":
            full = _full_name(avro["name"], avro.get("namespace", namespace))
            child_ns = _namespace_of(full)
            fields = []
            # Arrow has no recursive types: a reference to a record from inside itself
            # is reported instead of being resolved.
            self.in_progress.add(full)
            for f in avro.get("fields", []):
                arrow, nullable = self.field_type(f["type"], child_ns)
                fields.append(pa.field(f["name"], arrow, nullable=nullable))
            self.in_progress.discard(full)
            struct = pa.struct(fields)
            self.named[full] = struct
            return struct
        if kind == "enum":
            self.named[_full_name(avro["name"], avro.get("namespace", namespace))] = pa.string()
            return pa.string()
        if kind == "fixed":
            if logical == "decimal":
                result = _decimal(avro)
            else:
                result = pa.binary(int(avro["size"]))
            self.named[_full_name(avro["name"], avro.get("namespace", namespace))] = result
            return result
        if kind == "array":
            item, item_nullable = self.field_type(avro["items"], namespace)
            return pa.list_(pa.field("element", item, nullable=item_nullable))
        if kind == "map":
            value, value_nullable = self.field_type(avro["values"], namespace)
            return pa.map_(pa.string(), pa.field("value", value, nullable=value_nullable))
        if isinstance(kind, (list, Mapping)):
            # {"type": {...}} / {"type": [...]} wrappers are legal Avro.
            return self.arrow_type(kind, namespace)
        if kind in _PRIMITIVES:
            return _logical(kind, logical, avro)
        if isinstance(kind, str):
            return self.arrow_type(kind, namespace)
        raise SchemaError(f"not an Avro schema: {avro!r}")


def _primitive(kind: str) -> pa.DataType:
    return {
        "null": pa.null(),
        "boolean": pa.bool_(),
        "int": pa.int32(),
        "long": pa.int64(),
        "float": pa.float32(),
        "double": pa.float64(),
        "bytes": pa.binary(),
        "string": pa.string(),
    }[kind]


def _decimal(avro: Mapping[str, Any]) -> pa.DataType:
    precision = int(avro["precision"])
    scale = int(avro.get("scale", 0))
    return pa.decimal128(precision, scale) if precision <= 38 else pa.decimal256(precision, scale)


def _logical(kind: str, logical: str | None, avro: Mapping[str, Any]) -> pa.DataType:
    """Arrow type of primitive *kind* annotated with *logical* (unknown ones are ignored, as Avro says)."""
    if logical is None:
        return _primitive(kind)
    if kind == "int":
        if logical == "date":
            return pa.date32()
        if logical == "time-millis":
            return pa.time32("ms")
    elif kind == "long":
        table = {
            # Avro timestamps are instants: read them as UTC, as Java-written parquet
            # (isAdjustedToUTC=true) reads in pyarrow.
            "timestamp-millis": pa.timestamp("ms", tz="UTC"),
            "timestamp-micros": pa.timestamp("us", tz="UTC"),
            "timestamp-nanos": pa.timestamp("ns", tz="UTC"),
            "local-timestamp-millis": pa.timestamp("ms"),
            "local-timestamp-micros": pa.timestamp("us"),
            "local-timestamp-nanos": pa.timestamp("ns"),
            "time-micros": pa.time64("us"),
        }
        if logical in table:
            return table[logical]
    elif kind == "bytes" and logical == "decimal":
        return _decimal(avro)
    return _primitive(kind)


def avro_schema_to_arrow(schema: Mapping[str, Any] | str) -> pa.Schema:
    """Arrow schema of a top-level Avro record given as a dict or JSON text.

    Unions with null (either position) give nullable fields; other unions follow Spark
    (int|long → int64, float|double → float64, else a struct of ``member<i>``). Enums
    become strings, decimals (fixed or bytes) ``decimal128``, timestamps ``timestamp[...,
    UTC]`` and local timestamps zone-less; array items are named ``element``.
    """
    if isinstance(schema, str):
        try:
            parsed = json.loads(schema)
        except json.JSONDecodeError as exc:
            raise SchemaError(f"Avro schema is not valid JSON: {exc}") from exc
    else:
        parsed = schema
    if not isinstance(parsed, Mapping) or parsed.get("type") != "record":
        raise SchemaError("top-level Avro schema must be a record")
    arrow = _AvroReader().arrow_type(parsed, None)
    assert isinstance(arrow, pa.StructType)
    return pa.schema([arrow.field(i) for i in range(arrow.num_fields)])
