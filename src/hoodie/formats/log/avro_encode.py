"""Arrow → schemaless Avro binary, one ``bytes`` per record, as Java's ``BinaryEncoder`` writes.

This module owns encoding records against a writer schema. Each column is first cast to
the logical Arrow type of its Avro field (so ``timestamp[ns]`` becomes micros when the
schema says ``timestamp-micros``, ``int8`` becomes ``int32``, dictionaries are decoded),
then to its integer storage (:func:`~hoodie.formats.avro_nodes.physical_arrow_type`), and only then
converted to Python values: no ``datetime`` objects are created.

Each Avro type compiles to a function from a Python value to its bytes; a table is
encoded column by column, then each row's pieces are joined. Records of flat fields are
encoded ten times faster by :mod:`.avro_vector` (which shares :func:`cast_column`); this
codec handles every schema.

Byte conventions follow Java Avro: arrays and maps as one block (count, items, 0) or a
single 0 when empty; decimals on ``bytes`` as the minimal two's complement
(``BigInteger.toByteArray``), on ``fixed`` sign-extended to the size; a multi-type union
takes the branch of the ``member<i>`` that is set, ``int|long`` takes ``long`` and
``float|double`` takes ``double`` (the Arrow values are 64-bit).
"""
from __future__ import annotations

import struct
from collections.abc import Callable
from decimal import Decimal
from typing import Any

import pyarrow as pa

from hoodie.errors import SchemaError
from hoodie.formats.avro_nodes import (
    UNION_FLOAT64,
    UNION_INT64,
    UNION_NULL,
    UNION_SINGLE,
    AvroNode,
    physical_arrow_type,
)

__all__ = [
    "Encoder",
    "cast_column",
    "compile_encoder",
    "decimal_to_unscaled",
    "encode_long",
    "encode_records",
    "minimal_twos_complement",
    "write_long",
]

# python value -> its Avro binary
Encoder = Callable[[Any], bytes]

_FLOAT = struct.Struct("<f")
_DOUBLE = struct.Struct("<d")
_LONG_MIN, _LONG_MAX = -(2**63), 2**63 - 1
# Varints of zig-zag values below 128 are one byte; precomputed.
_ONE_BYTE = [bytes((z,)) for z in range(128)]
_ZERO = b"\x00"


def encode_long(n: int) -> bytes:
    """``n`` as a zig-zag varint (Avro ``int`` / ``long``)."""
    if not _LONG_MIN <= n <= _LONG_MAX:
        raise OverflowError(f"{n} does not fit an Avro long")
    z = (n << 1) ^ (n >> 63)
    if z < 0x80:
        return _ONE_BYTE[z]
    out = bytearray()
    while z > 0x7F:
        out.append((z & 0x7F) | 0x80)
        z >>= 7
    out.append(z)
    return bytes(out)


def write_long(n: int, out: bytearray) -> None:
    """Append ``n`` as a zig-zag varint."""
    out += encode_long(n)


def decimal_to_unscaled(value: Decimal | int | float, scale: int) -> int:
    """The unscaled integer of ``value`` at ``scale``; refuses to drop fractional digits."""
    if not isinstance(value, Decimal):
        value = Decimal(str(value)) if isinstance(value, float) else Decimal(value)
    if not value.is_finite():
        raise ValueError(f"decimal {value} is not finite")
    sign, digits, exponent = value.as_tuple()
    assert isinstance(exponent, int)
    n = int("".join(map(str, digits)) or "0")
    shift = exponent + scale
    if shift >= 0:
        n *= 10**shift
    else:
        n, rest = divmod(n, 10**-shift)
        if rest:
            raise ValueError(f"decimal {value} has more than {scale} fractional digits")
    return -n if sign else n


def minimal_twos_complement(n: int) -> bytes:
    """Big-endian two's complement in the fewest bytes, as ``BigInteger.toByteArray``."""
    bits = n.bit_length() if n >= 0 else (~n).bit_length()
    return n.to_bytes(bits // 8 + 1, "big", signed=True)


def _with_length(raw: bytes) -> bytes:
    n = len(raw)
    return (_ONE_BYTE[n << 1] if n < 64 else encode_long(n)) + raw


def _null(v: Any) -> bytes:
    if v is not None:
        raise TypeError(f"Avro null cannot hold {v!r}")
    return b""


def _boolean(v: Any) -> bytes:
    if v is None:
        raise TypeError("null value for a non-nullable Avro boolean")
    return b"\x01" if v else _ZERO


def _float(v: Any) -> bytes:
    return _FLOAT.pack(v)


def _double(v: Any) -> bytes:
    return _DOUBLE.pack(v)


def _string(v: Any) -> bytes:
    return _with_length(v.encode("utf-8") if isinstance(v, str) else bytes(v))


def _bytes(v: Any) -> bytes:
    return _with_length(bytes(v))


def _decimal_bytes(scale: int) -> Encoder:
    def enc(v: Any) -> bytes:
        return _with_length(minimal_twos_complement(decimal_to_unscaled(v, scale)))

    return enc


def _fixed(size: int, decimal_scale: int | None) -> Encoder:
    def enc(v: Any) -> bytes:
        if decimal_scale is not None:
            return decimal_to_unscaled(v, decimal_scale).to_bytes(size, "big", signed=True)
        b = bytes(v)
        if len(b) != size:
            raise ValueError(f"Avro fixed({size}) given {len(b)} bytes")
        return b

    return enc


def _enum(symbols: tuple[str, ...]) -> Encoder:
    index = {s: encode_long(i) for i, s in enumerate(symbols)}

    def enc(v: Any) -> bytes:
        if v not in index:
            raise ValueError(f"{v!r} is not a symbol of the Avro enum {list(symbols)}")
        return index[v]

    return enc


def _record(fields: tuple[tuple[str, Encoder], ...]) -> Encoder:
    def enc(v: Any) -> bytes:
        if v is None:
            raise TypeError("null value for a non-nullable Avro record")
        return b"".join([f(v.get(name)) for name, f in fields])

    return enc


def _array(item: Encoder) -> Encoder:
    def enc(v: Any) -> bytes:
        if v is None:
            raise TypeError("null value for a non-nullable Avro array")
        if not v:
            return _ZERO
        return b"".join([encode_long(len(v)), *map(item, v), _ZERO])

    return enc


def _map(value: Encoder) -> Encoder:
    def enc(v: Any) -> bytes:
        if v is None:
            raise TypeError("null value for a non-nullable Avro map")
        entries = list(v.items()) if isinstance(v, dict) else v
        if not entries:
            return _ZERO
        parts = [encode_long(len(entries))]
        for k, x in entries:
            parts.append(_string(k))
            parts.append(value(x))
        parts.append(_ZERO)
        return b"".join(parts)

    return enc


def _union(node: AvroNode) -> Encoder:
    branches = [compile_encoder(b) for b in node.branches]
    tags = [encode_long(i) for i in range(len(branches))]
    null_tag = tags[node.null_index] if node.null_index >= 0 else None

    def null() -> bytes:
        if null_tag is None:
            raise TypeError("null value for an Avro union without null")
        return null_tag

    mode = node.union_mode
    if mode == UNION_NULL:

        def enc_null(v: Any) -> bytes:
            _null(v)
            return null()

        return enc_null

    if mode in (UNION_SINGLE, UNION_INT64, UNION_FLOAT64):
        if mode == UNION_SINGLE:
            chosen = node.non_null[0]
        else:
            # Arrow holds 64-bit values here; Java resolves a Long / Double to that branch.
            wide = "long" if mode == UNION_INT64 else "double"
            chosen = next(i for i in node.non_null if node.branches[i].kind == wide)
        tag, branch = tags[chosen], branches[chosen]
        if branch is _string and null_tag is not None:
            # ["null", "string"]: the most common column type of all, inlined.
            def enc_nullable_string(v: Any) -> bytes:
                if v is None:
                    return null_tag
                raw = v.encode("utf-8") if isinstance(v, str) else bytes(v)
                n = len(raw)
                return tag + (_ONE_BYTE[n << 1] if n < 64 else encode_long(n)) + raw

            return enc_nullable_string

        def enc_one(v: Any) -> bytes:
            return null() if v is None else tag + branch(v)

        return enc_one

    members = [(f"member{j}", tags[i], branches[i]) for j, i in enumerate(node.non_null)]

    def enc_struct(v: Any) -> bytes:
        if v is not None:
            for name, tag, branch in members:
                x = v.get(name)
                if x is not None:
                    return tag + branch(x)
        return null()

    return enc_struct


def compile_encoder(node: AvroNode) -> Encoder:
    """An encoder for Python values (as :func:`physical_arrow_type` gives) of Avro type ``node``."""
    kind = node.kind
    if kind == "null":
        return _null
    if kind == "boolean":
        return _boolean
    if kind in ("int", "long"):
        return encode_long
    if kind == "float":
        return _float
    if kind == "double":
        return _double
    if kind == "string":
        return _string
    if kind == "bytes":
        return _decimal_bytes(node.scale) if node.logical == "decimal" else _bytes
    if kind == "fixed":
        return _fixed(node.size, node.scale if node.logical == "decimal" else None)
    if kind == "enum":
        return _enum(node.symbols)
    if kind == "record":
        return _record(tuple((name, compile_encoder(child)) for name, child in node.fields))
    if kind == "array":
        assert node.items is not None
        return _array(compile_encoder(node.items))
    if kind == "map":
        assert node.items is not None
        return _map(compile_encoder(node.items))
    if kind == "union":
        return _union(node)
    raise SchemaError(f"unsupported Avro type {kind!r}")


def cast_column(table: pa.Table, name: str, node: AvroNode, logical: pa.DataType) -> pa.Array | None:
    """Column ``name`` of ``table`` cast to the logical Arrow type, then to the physical type
    of ``node``; ``None`` when the table lacks a nullable column (all nulls). Shared with
    :mod:`.avro_vector`, so both encoders accept and refuse exactly the same columns."""
    if name not in table.column_names:
        nullable = node.kind == "null" or (node.kind == "union" and node.null_index >= 0)
        if not nullable:
            raise SchemaError(f"column {name!r} of the Avro schema is missing and not nullable")
        return None
    column = table.column(name)
    arr = column
    if isinstance(column, pa.ChunkedArray):
        # combine_chunks copies even a single chunk
        arr = column.chunk(0) if column.num_chunks == 1 else column.combine_chunks()
    if isinstance(arr.type, pa.ExtensionType):
        arr = arr.storage
    try:
        if arr.type != logical:
            arr = arr.cast(logical)
        physical = physical_arrow_type(node)
        if arr.type != physical:
            arr = arr.cast(physical)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError) as exc:
        raise SchemaError(f"column {name!r} ({column.type}) cannot be written as Avro {logical}: {exc}") from exc
    return arr


def _column_values(table: pa.Table, name: str, node: AvroNode, logical: pa.DataType) -> list[Any]:
    """Python values of column ``name`` ready for the encoder of ``node``."""
    arr = cast_column(table, name, node, logical)
    return [None] * table.num_rows if arr is None else arr.to_pylist()


def encode_records(node: AvroNode, table: pa.Table, arrow_schema: pa.Schema) -> list[bytes]:
    """Each row of ``table`` as Avro binary of the record ``node``.

    ``arrow_schema`` is ``avro_schema_to_arrow`` of the same schema: the logical type each
    column is cast to. Columns are matched by name; a column the schema lacks is refused
    (it would be silently dropped), a nullable field the table lacks is written as null.
    """
    names = {n for n, _ in node.fields}
    extra = [c for c in table.column_names if c not in names]
    if extra:
        raise SchemaError(f"columns {extra} are not in the Avro schema {node.name}")
    # Column by column (each value's bytes are independent of its row), then rows joined.
    encoded: list[list[bytes]] = []
    for name, child in node.fields:
        values = _column_values(table, name, child, arrow_schema.field(name).type)
        enc = compile_encoder(child)
        try:
            encoded.append(list(map(enc, values)))
        except (TypeError, ValueError, OverflowError, AttributeError, struct.error) as exc:
            row = _failing_row(enc, values)
            raise SchemaError(f"column {name!r}, row {row}: {exc}") from exc
    if not encoded:
        return [b""] * table.num_rows
    return [b"".join(row) for row in zip(*encoded)]


def _failing_row(enc: Encoder, values: list[Any]) -> int:
    """Index of the first value ``enc`` refuses (only computed for the error message)."""
    for i, v in enumerate(values):
        try:
            enc(v)
        except Exception:  # noqa: BLE001 - any failure locates the row
            return i
    return -1
