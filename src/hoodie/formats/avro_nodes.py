"""Avro schema JSON → a resolved tree, and the Arrow types of its nodes.

This module owns the reading of an Avro schema: named-type references are resolved,
logical types that do not apply to their base type are dropped (Avro says to ignore
them), and every union gets its Arrow *mode* (Spark's ``SchemaConverters`` rules). Both
the Arrow schema of a writer schema (:func:`arrow_field`, behind
:func:`hoodie.formats.avro_schema.avro_schema_to_arrow`) and the log blocks' binary
codecs (:func:`physical_arrow_type`) are read off this one tree, so decoded log records
always fit the schema that base file data is read with.
"""
from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import pyarrow as pa

from hoodie.errors import SchemaError

__all__ = ["AvroNode", "arrow_field", "is_nullable", "logical_arrow_type", "parse_avro_schema", "physical_arrow_type"]

_PRIMITIVES = frozenset({"null", "boolean", "int", "long", "float", "double", "bytes", "string"})

# Logical types that change the Arrow type, per base type; anything else is ignored.
_LOGICAL_ON = {
    "int": frozenset({"date", "time-millis"}),
    "long": frozenset(
        {
            "time-micros",
            "timestamp-millis",
            "timestamp-micros",
            "timestamp-nanos",
            "local-timestamp-millis",
            "local-timestamp-micros",
            "local-timestamp-nanos",
        }
    ),
    "bytes": frozenset({"decimal"}),
    "fixed": frozenset({"decimal"}),
}

# Union modes, matching avro_schema_to_arrow's union handling.
UNION_NULL = "null"  # only null branches
UNION_SINGLE = "single"  # one non-null branch: the value itself, nullable if null is there
UNION_INT64 = "int64"  # plain int|long → int64
UNION_FLOAT64 = "float64"  # plain float|double → float64
UNION_STRUCT = "struct"  # anything else → struct<member0, member1, ...>


@dataclass(eq=False)
class AvroNode:
    """One Avro type, references resolved. Only the attributes of its ``kind`` are set."""

    kind: str  # a primitive name, or record / enum / array / map / fixed / union
    logical: str | None = None
    name: str | None = None  # full name of records, enums and fixed
    fields: tuple[tuple[str, AvroNode], ...] = ()
    items: AvroNode | None = None  # array items or map values
    branches: tuple[AvroNode, ...] = ()
    union_mode: str = ""
    non_null: tuple[int, ...] = ()  # indexes of the non-null branches of a union
    null_index: int = -1  # index of the null branch of a union, -1 if none
    symbols: tuple[str, ...] = ()
    size: int = 0
    precision: int = 0
    scale: int = 0


def _full_name(name: str, namespace: str | None) -> str:
    if "." in name or not namespace:
        return name
    return f"{namespace}.{name}"


class _Parser:
    def __init__(self) -> None:
        self.named: dict[str, AvroNode] = {}
        self.in_progress: set[str] = set()

    def parse(self, avro: Any, namespace: str | None) -> AvroNode:  # noqa: C901 (one branch per Avro type)
        if isinstance(avro, list):
            return self._union(avro, namespace)
        if isinstance(avro, str):
            if avro in _PRIMITIVES:
                return AvroNode(avro)
            for candidate in (_full_name(avro, namespace), avro):
                if candidate in self.in_progress:
                    raise SchemaError(f"recursive Avro type {candidate!r} has no Arrow equivalent")
                if candidate in self.named:
                    return self.named[candidate]
            raise SchemaError(f"Avro schema references unknown type {avro!r}")
        if not isinstance(avro, Mapping):
            raise SchemaError(f"not an Avro schema: {avro!r}")
        kind = avro.get("type")
        if isinstance(kind, (list, Mapping)):
            return self.parse(kind, namespace)
        logical = avro.get("logicalType")
        if kind in ("record", "error"):
            full = _full_name(avro["name"], avro.get("namespace", namespace))
            child_ns = full.rsplit(".", 1)[0] if "." in full else None
            self.in_progress.add(full)
            fields = tuple((f["name"], self.parse(f["type"], child_ns)) for f in avro.get("fields", []))
            self.in_progress.discard(full)
            node = AvroNode("record", name=full, fields=fields)
            self.named[full] = node
            return node
        if kind == "enum":
            full = _full_name(avro["name"], avro.get("namespace", namespace))
            node = AvroNode("enum", name=full, symbols=tuple(avro.get("symbols", [])))
            self.named[full] = node
            return node
        if kind == "fixed":
            full = _full_name(avro["name"], avro.get("namespace", namespace))
            node = AvroNode("fixed", name=full, size=int(avro["size"]))
            if logical in _LOGICAL_ON["fixed"]:
                node.logical = logical
                node.precision = int(avro["precision"])
                node.scale = int(avro.get("scale", 0))
            self.named[full] = node
            return node
        if kind == "array":
            return AvroNode("array", items=self.parse(avro["items"], namespace))
        if kind == "map":
            return AvroNode("map", items=self.parse(avro["values"], namespace))
        if kind in _PRIMITIVES:
            node = AvroNode(kind)
            if logical is not None and logical in _LOGICAL_ON.get(kind, ()):
                node.logical = logical
                if logical == "decimal":
                    node.precision = int(avro["precision"])
                    node.scale = int(avro.get("scale", 0))
            return node
        if isinstance(kind, str):
            return self.parse(kind, namespace)
        raise SchemaError(f"not an Avro schema: {avro!r}")

    def _union(self, avro: list[Any], namespace: str | None) -> AvroNode:
        branches = tuple(self.parse(b, namespace) for b in avro)
        null_index = next((i for i, b in enumerate(branches) if b.kind == "null"), -1)
        non_null = tuple(i for i, b in enumerate(branches) if b.kind != "null")
        raw_non_null = [b for b in avro if b != "null"]
        # Same rule as avro_schema_to_arrow: only branches written without a logicalType
        # attribute merge into int64 / float64.
        kinds = {b if isinstance(b, str) else b.get("type") for b in raw_non_null if isinstance(b, (str, Mapping))}
        plain = all(isinstance(b, str) or (isinstance(b, Mapping) and "logicalType" not in b) for b in raw_non_null)
        if not non_null:
            mode = UNION_NULL
        elif len(non_null) == 1:
            mode = UNION_SINGLE
        elif plain and kinds == {"int", "long"}:
            mode = UNION_INT64
        elif plain and kinds == {"float", "double"}:
            mode = UNION_FLOAT64
        else:
            mode = UNION_STRUCT
        return AvroNode("union", branches=branches, union_mode=mode, non_null=non_null, null_index=null_index)


def parse_avro_schema(schema: str | Mapping[str, Any]) -> AvroNode:
    """The resolved tree of a top-level Avro record schema (JSON text or parsed dict)."""
    if isinstance(schema, str):
        try:
            schema = json.loads(schema)
        except json.JSONDecodeError as exc:
            raise SchemaError(f"Avro schema is not valid JSON: {exc}") from exc
    try:
        node = _Parser().parse(schema, None)
    except (KeyError, TypeError, ValueError) as exc:
        if isinstance(exc, SchemaError):
            raise
        raise SchemaError(f"malformed Avro schema: {exc!r}") from exc
    if node.kind != "record":
        raise SchemaError("top-level Avro schema must be a record")
    return node


def _decimal_type(node: AvroNode) -> pa.DataType:
    if node.precision <= 38:
        return pa.decimal128(node.precision, node.scale)
    return pa.decimal256(node.precision, node.scale)


# Arrow types of the logical types that change it (see _LOGICAL_ON); Avro timestamps are
# instants, read as UTC like Java-written Parquet (isAdjustedToUTC=true) reads in pyarrow.
_LOGICAL_ARROW = {
    "date": pa.date32(),
    "time-millis": pa.time32("ms"),
    "time-micros": pa.time64("us"),
    "timestamp-millis": pa.timestamp("ms", tz="UTC"),
    "timestamp-micros": pa.timestamp("us", tz="UTC"),
    "timestamp-nanos": pa.timestamp("ns", tz="UTC"),
    "local-timestamp-millis": pa.timestamp("ms"),
    "local-timestamp-micros": pa.timestamp("us"),
    "local-timestamp-nanos": pa.timestamp("ns"),
}


# Arrow types of the kinds that carry no parameters (enums are read as their symbols)
_PRIMITIVE_ARROW = {
    "null": pa.null(),
    "boolean": pa.bool_(),
    "int": pa.int32(),
    "long": pa.int64(),
    "float": pa.float32(),
    "double": pa.float64(),
    "string": pa.string(),
    "enum": pa.string(),
}


def is_nullable(node: AvroNode) -> bool:
    """Whether a field, item or value of type ``node`` may be null (a union with null)."""
    return node.kind == "union" and (node.null_index >= 0 or node.union_mode == UNION_NULL)


def arrow_field(name: str, node: AvroNode) -> pa.Field:
    """The Arrow field of an Avro field (or array item, or map value) of type ``node``."""
    return pa.field(name, logical_arrow_type(node), nullable=is_nullable(node))


def logical_arrow_type(node: AvroNode) -> pa.DataType:
    """The Arrow type values of ``node`` are read as: Spark's ``SchemaConverters`` rules
    (enums as strings, int|long → int64, float|double → float64, other multi-type unions
    a struct of ``member<i>``, array items named ``element``), dates, times and
    timestamps as Arrow temporal types."""
    return _arrow_type(node, physical=False)


def physical_arrow_type(node: AvroNode) -> pa.DataType:
    """The Arrow type whose Python values the encoder takes for ``node``.

    Same shape as :func:`logical_arrow_type`, but dates, times and timestamps are their
    integer storage (so ``to_pylist`` yields the Avro numbers, not ``datetime`` objects)
    and every nested field is nullable.
    """
    return _arrow_type(node, physical=True)


def _arrow_type(node: AvroNode, physical: bool) -> pa.DataType:
    def field(name: str, child: AvroNode) -> pa.Field:
        return pa.field(name, _arrow_type(child, physical), nullable=physical or is_nullable(child))

    kind = node.kind
    if not physical and node.logical in _LOGICAL_ARROW:
        return _LOGICAL_ARROW[node.logical]
    if kind in _PRIMITIVE_ARROW:
        return _PRIMITIVE_ARROW[kind]
    if kind == "bytes":
        return _decimal_type(node) if node.logical == "decimal" else pa.binary()
    if kind == "fixed":
        return _decimal_type(node) if node.logical == "decimal" else pa.binary(node.size)
    if kind == "record":
        return pa.struct([field(n, c) for n, c in node.fields])
    if kind == "array":
        assert node.items is not None
        return pa.list_(field("element", node.items))
    if kind == "map":
        assert node.items is not None
        return pa.map_(pa.string(), field("value", node.items))
    if kind == "union":
        mode = node.union_mode
        if mode == UNION_NULL:
            return pa.null()
        if mode == UNION_SINGLE:
            return _arrow_type(node.branches[node.non_null[0]], physical)
        if mode == UNION_INT64:
            return pa.int64()
        if mode == UNION_FLOAT64:
            return pa.float64()
        return pa.struct([pa.field(f"member{j}", _arrow_type(node.branches[i], physical)) for j, i in enumerate(node.non_null)])
    raise SchemaError(f"unsupported Avro type {kind!r}")
