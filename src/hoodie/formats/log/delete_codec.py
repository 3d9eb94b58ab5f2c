"""Content of DELETE blocks: ``HoodieDeleteRecordList`` in Avro binary (block version 3).

This module owns the delete content: int32 version ``3``, int32 byte length, then one
Avro-binary ``HoodieDeleteRecordList`` (``hudi-common/src/main/avro/HoodieDeleteRecordList.avsc``)::

    {deleteRecordList: array<{recordKey: [null, string],
                              partitionPath: [null, string],
                              orderingVal: [null, BooleanWrapper, IntWrapper, LongWrapper,
                                            FloatWrapper, DoubleWrapper, BytesWrapper,
                                            StringWrapper, DateWrapper, DecimalWrapper(30,15),
                                            TimeMicrosWrapper, TimestampMicrosWrapper,
                                            ArrayWrapper]}>}

Each wrapper is a record with the single field ``value``, so a wrapper encodes exactly
as its value. Java's default ordering value (``Integer 0``) is branch 2, ``IntWrapper``:
bytes ``04 00`` — what the Spark SQL DELETE vector holds. Versions 1–2 were Kryo and are
not readable here (nor by hudi-rs).
"""
from __future__ import annotations

import datetime as _dt
import struct
from decimal import Decimal
from typing import Any

from hoodie.errors import FormatError, RecordError
from hoodie.formats.log.avro_decode import read_long, unscaled_to_decimal
from hoodie.formats.log.avro_encode import (
    decimal_to_unscaled,
    minimal_twos_complement,
    write_long,
)
from hoodie.formats.log.blocks import DeleteRecord, OrderingType

__all__ = ["DELETE_BLOCK_VERSION", "decode_delete_content", "encode_delete_content"]

DELETE_BLOCK_VERSION = 3
_DECIMAL_SCALE = 15  # DecimalWrapper: bytes, decimal(30, 15)

T = OrderingType
# Union branch order of orderingVal, and of the items inside ArrayWrapper.
_TOP_BRANCHES: tuple[OrderingType | None, ...] = (
    None, T.BOOLEAN, T.INT, T.LONG, T.FLOAT, T.DOUBLE, T.BYTES, T.STRING,
    T.DATE, T.DECIMAL, T.TIME_MICROS, T.TIMESTAMP_MICROS, T.ARRAY,
)  # fmt: skip
_ITEM_BRANCHES: tuple[OrderingType | None, ...] = _TOP_BRANCHES[:-1] + (T.LOCAL_DATE,)
_TOP_INDEX = {t: i for i, t in enumerate(_TOP_BRANCHES)}
_ITEM_INDEX = {t: i for i, t in enumerate(_ITEM_BRANCHES)}

_EPOCH_DATE = _dt.date(1970, 1, 1)
_EPOCH = _dt.datetime(1970, 1, 1, tzinfo=_dt.timezone.utc)
_MICRO = _dt.timedelta(microseconds=1)
_I32 = struct.Struct(">i")


# --------------------------------------------------------------------------------------
# Decoding
# --------------------------------------------------------------------------------------


def _read_bytes(buf: bytes, pos: int) -> tuple[bytes, int]:
    n, pos = read_long(buf, pos)
    if n < 0 or pos + n > len(buf):
        raise FormatError(f"delete record: length {n} at {pos} runs past the data")
    return bytes(buf[pos : pos + n]), pos + n


def _read_optional_string(buf: bytes, pos: int) -> tuple[str | None, int]:
    branch, pos = read_long(buf, pos)
    if branch == 0:
        return None, pos
    if branch != 1:
        raise FormatError(f"delete record: union index {branch} for a [null, string]")
    raw, pos = _read_bytes(buf, pos)
    return raw.decode("utf-8"), pos


def _read_scalar(t: OrderingType, buf: bytes, pos: int) -> tuple[Any, int]:
    if t is T.BOOLEAN:
        return buf[pos] != 0, pos + 1
    if t in (T.INT, T.LONG, T.TIME_MICROS):
        return read_long(buf, pos)
    if t in (T.DATE, T.LOCAL_DATE):
        days, pos = read_long(buf, pos)
        try:
            return _EPOCH_DATE + _dt.timedelta(days=days), pos
        except OverflowError:  # outside Python's date range: keep the day number
            return days, pos
    if t is T.TIMESTAMP_MICROS:
        micros, pos = read_long(buf, pos)
        try:
            return _EPOCH + _dt.timedelta(microseconds=micros), pos
        except OverflowError:
            return micros, pos
    if t is T.FLOAT:
        return struct.unpack_from("<f", buf, pos)[0], pos + 4
    if t is T.DOUBLE:
        return struct.unpack_from("<d", buf, pos)[0], pos + 8
    if t is T.BYTES:
        return _read_bytes(buf, pos)
    if t is T.STRING:
        raw, pos = _read_bytes(buf, pos)
        return raw.decode("utf-8"), pos
    if t is T.DECIMAL:
        raw, pos = _read_bytes(buf, pos)
        return unscaled_to_decimal(int.from_bytes(raw, "big", signed=True), _DECIMAL_SCALE), pos
    raise AssertionError(t)


def _read_union(
    buf: bytes, pos: int, branches: tuple[OrderingType | None, ...]
) -> tuple[OrderingType | None, Any, int]:
    index, pos = read_long(buf, pos)
    if not 0 <= index < len(branches):
        raise FormatError(f"delete record: orderingVal union index {index} out of range")
    t = branches[index]
    if t is None:
        return None, None, pos
    if t is T.ARRAY:
        return t, *_read_array_wrapper(buf, pos)
    value, pos = _read_scalar(t, buf, pos)
    return t, value, pos


def _read_array_wrapper(buf: bytes, pos: int) -> tuple[tuple[tuple[OrderingType | None, Any], ...], int]:
    # ArrayWrapper{wrappedValues: [null, array<[null, wrappers..., LocalDateWrapper]>]}
    branch, pos = read_long(buf, pos)
    if branch == 0:
        return (), pos
    if branch != 1:
        raise FormatError(f"delete record: wrappedValues union index {branch}")
    items: list[tuple[OrderingType | None, Any]] = []
    while True:
        count, pos = read_long(buf, pos)
        if count == 0:
            return tuple(items), pos
        if count < 0:
            count = -count
            _, pos = read_long(buf, pos)
        for _ in range(count):
            t, value, pos = _read_union(buf, pos, _ITEM_BRANCHES)
            items.append((t, value))


def decode_delete_content(content: bytes) -> tuple[DeleteRecord, ...]:
    """The delete records of a DELETE block's content."""
    if len(content) < 8:
        raise FormatError(f"delete block content is {len(content)} bytes, too short")
    version, length = struct.unpack_from(">ii", content, 0)
    if version != DELETE_BLOCK_VERSION:
        raise FormatError(
            f"delete block version {version} is not supported (only {DELETE_BLOCK_VERSION}; "
            "earlier versions were Kryo-serialized)"
        )
    if length < 0 or 8 + length > len(content):
        raise FormatError(f"delete block payload length {length} exceeds its content ({len(content) - 8} bytes)")
    buf = content[8 : 8 + length]
    records: list[DeleteRecord] = []
    pos = 0
    try:
        while True:
            count, pos = read_long(buf, pos)
            if count == 0:
                break
            if count < 0:
                count = -count
                _, pos = read_long(buf, pos)
            for _ in range(count):
                key, pos = _read_optional_string(buf, pos)
                partition, pos = _read_optional_string(buf, pos)
                t, value, pos = _read_union(buf, pos, _TOP_BRANCHES)
                records.append(DeleteRecord(key, partition, value, t))
    except (IndexError, struct.error, UnicodeDecodeError) as exc:
        raise FormatError(f"delete block payload is malformed: {exc}") from exc
    if pos != len(buf):
        raise FormatError(f"delete block payload has {len(buf) - pos} trailing bytes")
    return tuple(records)


# --------------------------------------------------------------------------------------
# Encoding
# --------------------------------------------------------------------------------------


def _write_bytes(raw: bytes, out: bytearray) -> None:
    write_long(len(raw), out)
    out += raw


def _write_optional_string(value: str | None, out: bytearray) -> None:
    if value is None:
        out.append(0)
    else:
        out.append(2)  # zig-zag of branch 1
        _write_bytes(value.encode("utf-8"), out)


def _as_int(value: Any, bits: int, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise RecordError(f"ordering value {value!r} is not an integer ({what})")
    if not -(2 ** (bits - 1)) <= value < 2 ** (bits - 1):
        raise RecordError(f"ordering value {value} does not fit {what}")
    return value


def _write_scalar(t: OrderingType, value: Any, out: bytearray) -> None:  # noqa: C901 (one branch per ordering-value type)
    if t is T.BOOLEAN:
        out.append(1 if value else 0)
    elif t is T.INT:
        write_long(_as_int(value, 32, "an int"), out)
    elif t is T.LONG:
        write_long(_as_int(value, 64, "a long"), out)
    elif t in (T.DATE, T.LOCAL_DATE):
        if isinstance(value, _dt.datetime):
            value = value.date()
        days = (value - _EPOCH_DATE).days if isinstance(value, _dt.date) else value
        write_long(_as_int(days, 32, "a date"), out)
    elif t is T.TIMESTAMP_MICROS:
        if isinstance(value, _dt.datetime):
            aware = value if value.tzinfo is not None else value.replace(tzinfo=_dt.timezone.utc)
            value = (aware - _EPOCH) // _MICRO
        write_long(_as_int(value, 64, "timestamp micros"), out)
    elif t is T.TIME_MICROS:
        if isinstance(value, _dt.time):
            value = ((value.hour * 60 + value.minute) * 60 + value.second) * 1_000_000 + value.microsecond
        write_long(_as_int(value, 64, "time micros"), out)
    elif t is T.FLOAT:
        out += struct.pack("<f", float(value))
    elif t is T.DOUBLE:
        out += struct.pack("<d", float(value))
    elif t is T.BYTES:
        _write_bytes(bytes(value), out)
    elif t is T.STRING:
        _write_bytes(str(value).encode("utf-8"), out)
    elif t is T.DECIMAL:
        try:
            unscaled = decimal_to_unscaled(value if isinstance(value, (Decimal, int, float)) else Decimal(value), _DECIMAL_SCALE)
        except (ValueError, ArithmeticError) as exc:
            raise RecordError(f"ordering value {value!r} does not fit decimal(30, 15): {exc}") from exc
        _write_bytes(minimal_twos_complement(unscaled), out)
    else:
        raise AssertionError(t)


def _write_ordering(record: DeleteRecord, out: bytearray) -> None:
    t = record.ordering_type
    write_long(_TOP_INDEX[t], out)
    if t is None:
        return
    if t is not T.ARRAY:
        _write_scalar(t, record.ordering_value, out)
        return
    items = record.ordering_value
    out.append(2)  # wrappedValues: branch 1, the array
    if items:
        write_long(len(items), out)
        for item_type, item_value in items:
            if item_type is T.ARRAY:
                raise RecordError("ARRAY ordering values cannot nest")
            write_long(_ITEM_INDEX[item_type], out)
            if item_type is not None:
                _write_scalar(item_type, item_value, out)
    out.append(0)


def encode_delete_content(keys: tuple[DeleteRecord, ...] | list[DeleteRecord]) -> bytes:
    """The content of a DELETE block holding ``keys``.

    All non-null ordering values of one block must use the same union branch: hudi-rs
    0.5.0 refuses a block that mixes them ("Delete block mixes ordering types").
    """
    kinds = {k.ordering_type for k in keys if k.ordering_type is not None}
    if len(kinds) > 1:
        names = sorted(t.name for t in kinds)
        raise RecordError(
            f"delete block mixes ordering value types {names}; hudi-rs cannot read that. "
            "Give every DeleteRecord of a block the same ordering_type"
        )
    payload = bytearray()
    if keys:
        write_long(len(keys), payload)
        for record in keys:
            _write_optional_string(record.record_key, payload)
            _write_optional_string(record.partition_path, payload)
            _write_ordering(record, payload)
    payload.append(0)
    return _I32.pack(DELETE_BLOCK_VERSION) + _I32.pack(len(payload)) + bytes(payload)
