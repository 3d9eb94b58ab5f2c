"""Ordering values: what event-time merging compares, and how two of them compare.

This module owns the value domain of the ordering (precombine) field as hudi-rs 0.5.0's
default file group reader (version 2, a port of Java 1.x ``OrderingValues``) sees it:

* every integer-like value (ints of any width, booleans, dates, timestamps, times) is a
  ``LONG``; floats are ``DOUBLE`` (total order, as Rust ``f64::total_cmp``); decimals are
  ``DECIMAL`` (compared by value, ``1.0 == 1.00``); strings are ``STRING`` (code point
  order, the same as Rust's UTF-8 byte order); several ordering fields make a
  ``COMPOSITE`` compared field by field;
* a null ordering field is the ``DEFAULT`` value (Java ``Integer(0)``): it compares as
  ``0`` against a ``LONG``. In a delete block, only an ``IntWrapper`` holding ``0`` (what
  Java and Spark write for a plain DELETE) is the default; a ``LongWrapper`` 0 is a genuine
  ``LONG`` 0. A delete whose ordering is the default always wins ("commit-time delete");
* values are compared only within one class (``LONG`` and ``DEFAULT`` share one); across
  classes the merge rules let the newer record win instead of comparing.

``None`` (no ordering value at all: a composite with a null part, a delete with a null
``orderingVal``) is distinct from ``DEFAULT``: it never compares and counts as default.

Column at a time (:func:`columnar_kind`, :func:`sort_keys`, :func:`at_least`), the same
domain as numpy keys and Arrow comparisons, for the merges that decide whole columns.
"""
from __future__ import annotations

import datetime as _dt
import struct
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from hoodie.formats.log.blocks import DeleteRecord, OrderingType

__all__ = [
    "DEFAULT",
    "OrderingValue",
    "at_least",
    "column_ordering_values",
    "columnar_kind",
    "compare",
    "delete_ordering_value",
    "is_default",
    "same_class",
    "scalar_kind",
    "sort_keys",
]

LONG = "long"
DOUBLE = "double"
DECIMAL = "decimal"
STRING = "string"
BYTES = "bytes"
COMPOSITE = "composite"
DEFAULT_KIND = "default"

# Rank used only when two values of different classes meet inside a composite (Rust's
# derived fallback); single values of different classes are never compared.
_RANK = {LONG: 0, DEFAULT_KIND: 0, STRING: 1, COMPOSITE: 2, DOUBLE: 3, DECIMAL: 4, BYTES: 5}
_INTEGER_DOMAIN = (LONG, DEFAULT_KIND)


@dataclass(frozen=True, slots=True)
class OrderingValue:
    """One ordering value: its class (``kind``) and a Python value of that class."""

    kind: str
    value: Any

    def __repr__(self) -> str:
        return "DEFAULT" if self.kind == DEFAULT_KIND else f"{self.kind}({self.value!r})"


DEFAULT = OrderingValue(DEFAULT_KIND, 0)


def is_default(value: OrderingValue | None) -> bool:
    """True for an absent ordering value and for the null-coerced default."""
    return value is None or value.kind == DEFAULT_KIND


def same_class(a: OrderingValue, b: OrderingValue) -> bool:
    """Whether ``a`` and ``b`` may be compared (Java ``OrderingValues.isSameClass``)."""
    if a.kind in _INTEGER_DOMAIN and b.kind in _INTEGER_DOMAIN:
        return True
    return a.kind == b.kind


def _double_key(x: float) -> int:
    # IEEE-754 total order (Rust f64::total_cmp): -NaN < -inf < ... < -0.0 < 0.0 < ... < NaN.
    (bits,) = struct.unpack("<q", struct.pack("<d", x))
    return bits ^ ((bits >> 63) & 0x7FFFFFFFFFFFFFFF)


def compare(a: OrderingValue, b: OrderingValue) -> int:
    """-1, 0 or 1 as ``a`` is less than, equal to or greater than ``b``."""
    ka, kb = a.kind, b.kind
    if ka in _INTEGER_DOMAIN and kb in _INTEGER_DOMAIN:
        x, y = a.value, b.value
    elif ka != kb:
        x, y = _RANK[ka], _RANK[kb]
    elif ka == DOUBLE:
        x, y = _double_key(a.value), _double_key(b.value)
    elif ka == COMPOSITE:
        for ea, eb in zip(a.value, b.value):
            c = compare(ea, eb)
            if c:
                return c
        x, y = len(a.value), len(b.value)
    else:
        x, y = a.value, b.value
    return (x > y) - (x < y)


# --- from data rows -------------------------------------------------------------------------


def scalar_kind(t: pa.DataType) -> str:
    if pa.types.is_floating(t):
        return DOUBLE
    if pa.types.is_decimal(t):
        return DECIMAL
    if pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_string_view(t):
        return STRING
    if pa.types.is_binary(t) or pa.types.is_large_binary(t) or pa.types.is_fixed_size_binary(t):
        return BYTES
    if pa.types.is_integer(t) or pa.types.is_boolean(t) or pa.types.is_temporal(t):
        return LONG
    raise TypeError(f"a column of type {t} cannot be an ordering field")


def _raw_values(column: pa.Array | pa.ChunkedArray, kind: str) -> list[Any]:
    t = column.type
    if kind == LONG and not pa.types.is_integer(t):
        # hudi-rs compares dates, times and timestamps by their stored integer, booleans as 0/1
        if pa.types.is_boolean(t):
            column = column.cast(pa.int8())
        elif pa.types.is_date32(t) or pa.types.is_time32(t):
            column = column.cast(pa.int32())
        else:
            column = column.cast(pa.int64())
    if kind == DOUBLE and pa.types.is_float16(t):
        column = column.cast(pa.float64())
    return column.to_pylist()


def column_ordering_values(columns: Sequence[pa.Array | pa.ChunkedArray]) -> list[OrderingValue | None]:
    """Ordering value of every row, from the ordering field(s) of those rows.

    One field: a null is :data:`DEFAULT`. Several fields: a ``COMPOSITE``, or ``None``
    for a row where any field is null (hudi-rs builds composites only from complete rows).
    """
    if not columns:
        raise ValueError("no ordering field")
    kinds = [scalar_kind(c.type) for c in columns]
    values = [_raw_values(c, k) for c, k in zip(columns, kinds)]
    if len(columns) == 1:
        kind = kinds[0]
        return [DEFAULT if v is None else OrderingValue(kind, int(v) if kind == LONG else v) for v in values[0]]
    out: list[OrderingValue | None] = []
    for row in zip(*values):
        if any(v is None for v in row):
            out.append(None)
        else:
            out.append(OrderingValue(COMPOSITE, tuple(OrderingValue(k, int(v) if k == LONG else v) for k, v in zip(kinds, row))))
    return out


# --- column at a time ------------------------------------------------------------------------


def columnar_kind(t: pa.DataType) -> str | None:
    """The class of a single ordering field of type ``t`` when its values can be ranked
    column at a time (``LONG``, ``DOUBLE``, ``STRING``), else None (the record-at-a-time
    values decide)."""
    if pa.types.is_unsigned_integer(t) and t.bit_width == 64:
        return None  # values past int64 compare as Python ints only
    try:
        kind = scalar_kind(t)
    except TypeError:
        return None  # the record-at-a-time rules report it
    return kind if kind in (LONG, DOUBLE, STRING) else None


def _as_long(column: pa.Array | pa.ChunkedArray) -> pa.Array | pa.ChunkedArray:
    """Integer-like values as int64, nulls as the default 0 (which compares as ``LONG`` 0)."""
    t = column.type
    if pa.types.is_boolean(t):
        column = column.cast(pa.int8())
    elif pa.types.is_date32(t) or pa.types.is_time32(t):
        column = column.cast(pa.int32())
    return pc.fill_null(column.cast(pa.int64()), 0)


def _double_order(column: pa.Array | pa.ChunkedArray) -> np.ndarray:
    """IEEE-754 total-order keys (as :func:`compare` uses)."""
    bits = np.ascontiguousarray(column.cast(pa.float64()).to_numpy(zero_copy_only=False)).view(np.int64)
    return bits ^ ((bits >> 63) & np.int64(0x7FFFFFFFFFFFFFFF))


def sort_keys(column: pa.Array | pa.ChunkedArray, kind: str) -> np.ndarray | None:
    """Integers ranking the values of a ``columnar_kind`` column as :func:`compare` ranks
    them; None when a null makes the order partial (a null float or string is the
    default value, of another class, which is never compared)."""
    if kind == LONG:
        return np.asarray(_as_long(column).to_numpy())
    if column.null_count:
        return None
    if kind == DOUBLE:
        return _double_order(column)
    chunk = column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column
    return np.asarray(pc.rank(chunk, sort_keys="ascending", tiebreaker="dense").to_numpy())


def at_least(values: pa.Array | pa.ChunkedArray, than: pa.Array | pa.ChunkedArray) -> np.ndarray:
    """Per pair of single ordering values, :func:`compare` ``>= 0`` where the two may be
    compared, True where they may not (a null float or string is the default, of another
    class). Both columns have one type."""
    kind = scalar_kind(values.type)
    if kind == LONG:
        if columnar_kind(values.type) is None:  # uint64: no int64 cast, the default still 0
            return np.asarray(pc.greater_equal(pc.fill_null(values, 0), pc.fill_null(than, 0)).to_numpy(zero_copy_only=False))
        return np.asarray(_as_long(values).to_numpy() >= _as_long(than).to_numpy())
    other_class = pc.or_(pc.is_null(values), pc.is_null(than)).to_numpy(zero_copy_only=False)
    if kind == DOUBLE:
        return np.asarray((_double_order(pc.fill_null(values, 0.0)) >= _double_order(pc.fill_null(than, 0.0))) | other_class)
    return np.asarray(pc.fill_null(pc.greater_equal(values, than), True).to_numpy(zero_copy_only=False) | other_class)


# --- from delete blocks ---------------------------------------------------------------------

_EPOCH_DATE = _dt.date(1970, 1, 1)
_EPOCH = _dt.datetime(1970, 1, 1, tzinfo=_dt.timezone.utc)
_T = OrderingType


def _delete_scalar(kind: OrderingType | None, value: Any) -> OrderingValue | None:
    if kind is None or value is None:
        return None
    if kind in (_T.INT, _T.LONG, _T.TIME_MICROS):
        return OrderingValue(LONG, int(value))
    if kind is _T.BOOLEAN:
        return OrderingValue(LONG, int(bool(value)))
    if kind in (_T.DATE, _T.LOCAL_DATE):
        days = value if isinstance(value, int) else (value - _EPOCH_DATE).days
        return OrderingValue(LONG, days)
    if kind is _T.TIMESTAMP_MICROS:
        if isinstance(value, int):
            return OrderingValue(LONG, value)
        delta = value - _EPOCH
        return OrderingValue(LONG, (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds)
    if kind in (_T.FLOAT, _T.DOUBLE):
        return OrderingValue(DOUBLE, float(value))
    if kind is _T.DECIMAL:
        return OrderingValue(DECIMAL, Decimal(value))
    if kind is _T.STRING:
        return OrderingValue(STRING, value)
    if kind is _T.BYTES:
        return OrderingValue(BYTES, bytes(value))
    raise TypeError(f"unexpected delete ordering type {kind}")


def delete_ordering_value(record: DeleteRecord) -> OrderingValue | None:
    """Ordering value of a delete-block entry.

    Java's default ordering value is ``Integer(0)``, so an ``IntWrapper`` 0 is
    :data:`DEFAULT` (the delete always wins); every other integer is a ``LONG``.
    """
    kind, value = record.ordering_type, record.ordering_value
    if kind is _T.INT and value == 0:
        return DEFAULT
    if kind is _T.ARRAY:
        items = [_delete_scalar(k, v) for k, v in value]
        if any(i is None for i in items):
            return None
        return OrderingValue(COMPOSITE, tuple(items))
    return _delete_scalar(kind, value)
