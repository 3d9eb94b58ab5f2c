"""Column-at-a-time (numpy) Avro codec for the flat records of AVRO_DATA blocks.

This module owns the fast path of log data blocks: records whose fields are each a scalar
(null, boolean, int, long with any integer logical type, float, double, string, bytes,
non-decimal fixed, enum) or a union of null with one such scalar, in either order. That
is every meta column and almost every column Spark or hoodie writes. Anything else
(nested records, arrays, maps, decimals, multi-type unions) stays with the closure codec
of :mod:`.avro_decode` / :mod:`.avro_encode`; :func:`can_vectorize` tells which applies,
and :mod:`.content` dispatches.

Why it is fast: the per-value Python work of the closure codec is replaced by a few numpy
passes per *field*, each over all records at once.

* Decoding keeps one cursor per record (a numpy array of positions; record starts are
  known from the block's length prefixes) and advances every cursor field by field. A
  varint is read as the eight bytes at its cursor in one little-endian word: its length is
  found from the continuation bits, the 7-bit groups are compacted with shifts and masks
  (the rare nine- and ten-byte varints are finished a byte index at a time). Union tags
  select the records that carry a value; those are read through their own cursors.
  Strings and bytes become Arrow arrays built straight from buffers (offsets, gathered
  bytes, a validity bitmap from the tags), then fully validated, which checks the UTF-8.
* Encoding gives every field of every row a *head* (union tag, varint or fixed-width
  value, string length) built with numpy as a row of a small matrix, and for strings a
  payload; both are copied into one buffer that is the whole AVRO_DATA content (version,
  count, then per record its int32 length and bytes). No per-record Python work at all.
* Byte strings are moved by :func:`_copy_segments`: viewing a buffer as overlapping
  ``void`` items of n bytes (one starting at every byte) lets numpy gather or scatter
  whole n-byte values with one copy each, grouped by length. That is 5-15× faster than
  an index per byte, and fixed-length columns (commit times, file names, most keys) are
  a single group.

Both produce exactly what the closure codec produces (the tests compare them, and the
bytes against fastavro): same Arrow types and values, same bytes, the same casting rules
(shared :func:`~.avro_encode.cast_column`) and the same kinds of errors. Corrupt data is
refused with :class:`~hoodie.errors.FormatError`. The block is copied into a zero-padded
buffer, so the short reads of tags and varints never leave it; each field is then checked
to end within its record, and a string's length or a fixed-width value is checked
against its record's end *before* anything is gathered, so a hostile length can neither
read outside the block nor allocate more than the block's size.
"""
from __future__ import annotations

import struct
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import NoReturn

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from hoodie.errors import FormatError, SchemaError
from hoodie.formats.avro_nodes import UNION_NULL, UNION_SINGLE, AvroNode
from hoodie.formats.log.avro_encode import cast_column

__all__ = ["can_vectorize", "decode_records", "encode_avro_content"]

_SCALARS = frozenset({"null", "boolean", "int", "long", "float", "double", "string", "bytes", "fixed", "enum"})
_WIDTH = {"float": 4, "double": 8}
# Zero bytes after the block. Within a field, a union tag and a varint (at most 10 bytes
# each) are read without checking the record end, which is checked once per field; every
# cursor starts a field at or before its record's end, so no read leaves this padding.
# Fixed-width values and string payloads are checked before they are read.
_PAD = 32
_INT32_MIN, _INT32_MAX = -(2**31), 2**31 - 1
# Arrow buffers are native-endian and Avro floats little-endian: the raw byte gathers
# below are only right on little-endian machines (all the usual ones). Elsewhere the
# closure codec is used.
_LITTLE_ENDIAN = sys.byteorder == "little"
# Smallest zig-zag value needing k + 2 varint bytes, for k = 0..8.
_VARINT_LIMITS = np.array([1 << (7 * k) for k in range(1, 10)], np.uint64)
_I64 = np.dtype(np.int64)
_U64 = np.dtype(np.uint64)
_WORD = np.dtype("<u8")
# Varint bytes, eight at a time in a little-endian uint64: their continuation bits, and
# the continuation bits a varint of s bytes has within its first eight (index s, 1..10).
_HIGH_BITS = np.uint64(0x8080808080808080)
_LOW_BITS = np.uint64(0x7F7F7F7F7F7F7F7F)
_CONTINUATION = np.array([0] + [sum(0x80 << (8 * k) for k in range(min(s - 1, 8))) for s in range(1, 11)], np.uint64)
_ONE = np.uint64(1)
# Segments of one length are copied as whole items when at least this many share it.
_MIN_GROUP = 4
_MAX_GROUPS = 256


@dataclass(frozen=True)
class _Field:
    """One record field as laid out in binary: an optional union tag, then one scalar."""

    name: str
    value: AvroNode | None  # the scalar type; None when the field only ever holds null
    branches: int = 0  # number of union branches; 0 when the field is not a union
    null_index: int = -1  # union branch of null; -1 when the field cannot be null
    value_index: int = -1  # union branch of the value


def _is_scalar(node: AvroNode) -> bool:
    return node.kind in _SCALARS and node.logical != "decimal"


def _layout(name: str, node: AvroNode) -> _Field | None:
    """The layout of field ``name``, or None when this codec does not handle its type."""
    if node.kind == "union":
        if node.union_mode == UNION_NULL and len(node.branches) == 1:
            return _Field(name, None, branches=1, null_index=0)
        if node.union_mode != UNION_SINGLE or len(node.branches) > 2:
            return None
        value_index = node.non_null[0]
        value = node.branches[value_index]
        if not _is_scalar(value):
            return None
        return _Field(name, value, branches=len(node.branches), null_index=node.null_index, value_index=value_index)
    if not _is_scalar(node):
        return None
    return _Field(name, None if node.kind == "null" else node)


def can_vectorize(node: AvroNode) -> bool:
    """Whether records of ``node`` (a record) are handled by this codec."""
    return _LITTLE_ENDIAN and node.kind == "record" and all(_layout(n, c) is not None for n, c in node.fields)


def _layouts(node: AvroNode) -> list[_Field]:
    out = []
    for name, child in node.fields:
        f = _layout(name, child)
        if f is None:
            raise SchemaError(f"field {name!r} of {node.name} is not a flat Avro type; use the closure codec")
        out.append(f)
    return out


# --------------------------------------------------------------------------------------
# Byte copies and varint bit twiddling, shared by both directions
# --------------------------------------------------------------------------------------


def _items(a: np.ndarray, width: int) -> np.ndarray:
    """The 1-D uint8 array ``a`` as overlapping items of ``width`` bytes, one starting at
    every byte. Indexing it gathers or scatters whole values with one copy each, which is
    by far numpy's cheapest way to move many small byte strings."""
    return np.ndarray(shape=(max(len(a) - width + 1, 0),), dtype=np.dtype((np.void, width)), buffer=a, strides=(1,))


def _copy_bytes(src: np.ndarray, src_at: np.ndarray, dst: np.ndarray, dst_at: np.ndarray, lengths: np.ndarray) -> None:
    """``_copy_segments`` one byte at a time (an index per byte): for rare lengths."""
    total = int(lengths.sum())
    if not total:
        return
    first = np.cumsum(lengths) - lengths
    step = np.arange(total, dtype=_I64)
    src_index = np.repeat(src_at - first, lengths)
    src_index += step
    dst_index = np.repeat(dst_at - first, lengths)
    dst_index += step
    dst[dst_index] = src[src_index]


def _copy_segments(  # noqa: C901 (one branch per Avro type)
    src: np.ndarray,
    src_at: np.ndarray | None,
    dst: np.ndarray,
    dst_at: np.ndarray | None,
    lengths: np.ndarray,
    room: np.ndarray | None = None,
) -> None:
    """``dst[d : d + n] = src[s : s + n]`` for every (s, d, n); destinations must not overlap.
    ``src_at`` / ``dst_at`` None means the segments lie back to back from byte 0.

    Segments are grouped by length (a radix sort of the lengths) and each common length
    is copied as items of that many bytes; the few segments of rare lengths (at most
    ``_MAX_GROUPS`` groups are taken) are copied byte by byte.

    ``room`` (with ``dst_at``) says how many bytes from each destination may be written:
    bytes past a segment's end that are rewritten later anyway. Segments with room for
    the longest length are then all copied as items of that length, garbage after them."""
    m = len(lengths)
    if not m:
        return
    lo, hi = int(lengths.min()), int(lengths.max())
    if room is not None and lo != hi and dst_at is not None:
        if src_at is None:
            src_at = np.cumsum(lengths) - lengths
        # Sources ascend (rows of a matrix, Arrow offsets): only the last few may lack
        # ``hi`` bytes to read; they are copied exactly, like rows without the room.
        k = int(np.searchsorted(src_at, len(src) - hi, side="right"))
        wide = room[:k] >= hi
        if wide.all():
            _items(dst, hi)[dst_at[:k]] = _items(src, hi)[src_at[:k]]
            _copy_segments(src, src_at[k:], dst, dst_at[k:], lengths[k:])
            return
        if np.count_nonzero(wide) * 2 > k:
            _items(dst, hi)[dst_at[:k][wide]] = _items(src, hi)[src_at[:k][wide]]
            narrow = np.concatenate((np.flatnonzero(~wide), np.arange(k, m)))
            _copy_segments(src, src_at[narrow], dst, dst_at[narrow], lengths[narrow])
            return
    if lo == hi:  # fixed-length values: commit times, file names, most keys
        if lo:
            item = np.dtype((np.void, lo))
            values = src[: m * lo].view(item) if src_at is None else _items(src, lo)[src_at]
            if dst_at is None:
                dst[: m * lo].view(item)[:] = values
            else:
                _items(dst, lo)[dst_at] = values
        return
    if src_at is None or dst_at is None:
        back_to_back = np.cumsum(lengths) - lengths
        src_at = back_to_back if src_at is None else src_at
        dst_at = back_to_back if dst_at is None else dst_at
    if hi <= 64:
        # Few possible lengths (varints, short strings): one selection pass per length
        # present is cheaper than sorting.
        present = np.flatnonzero(np.bincount(lengths, minlength=hi + 1))
        if len(present) <= 8:
            for width in present.tolist():
                if width:
                    group = np.flatnonzero(lengths == width)
                    _items(dst, width)[dst_at[group]] = _items(src, width)[src_at[group]]
            return
    keys = lengths.astype(np.uint16) if hi < 1 << 16 else lengths
    order = np.argsort(keys, kind="stable")
    ordered = keys[order]
    bounds = np.concatenate(([0], np.flatnonzero(ordered[1:] != ordered[:-1]) + 1, [m]))
    counts = np.diff(bounds)
    big = counts >= max(_MIN_GROUP, m // _MAX_GROUPS)
    for a, b in zip(bounds[:-1][big].tolist(), bounds[1:][big].tolist()):
        width = int(ordered[a])
        if width:
            group = order[a:b]
            _items(dst, width)[dst_at[group]] = _items(src, width)[src_at[group]]
    if not big.all():
        rest = order[np.repeat(~big, counts)]
        _copy_bytes(src, src_at[rest], dst, dst_at[rest], lengths[rest])


def _compact7(x: np.ndarray) -> np.ndarray:
    """Eight 7-bit groups (one per byte, high bits clear) → one 56-bit number, low byte first."""
    x = (x & np.uint64(0x007F007F007F007F)) | ((x >> _ONE) & np.uint64(0x3F803F803F803F80))
    x = (x & np.uint64(0x00003FFF00003FFF)) | ((x >> np.uint64(2)) & np.uint64(0x0FFFC0000FFFC000))
    return (x & np.uint64(0x000000000FFFFFFF)) | ((x >> np.uint64(4)) & np.uint64(0x00FFFFFFF0000000))


def _spread7(x: np.ndarray) -> np.ndarray:
    """The inverse of :func:`_compact7` (``x`` below 2**56)."""
    x = (x & np.uint64(0x000000000FFFFFFF)) | ((x << np.uint64(4)) & np.uint64(0x0FFFFFFF00000000))
    x = (x & np.uint64(0x00003FFF00003FFF)) | ((x << np.uint64(2)) & np.uint64(0x3FFF00003FFF0000))
    return (x & np.uint64(0x007F007F007F007F)) | ((x << _ONE) & np.uint64(0x7F007F007F007F00))


# --------------------------------------------------------------------------------------
# Decoding
# --------------------------------------------------------------------------------------


class _Rows:
    """Cursors over a set of records: read position, record end, record start."""

    __slots__ = ("end", "pos", "start")

    def __init__(self, pos: np.ndarray, end: np.ndarray, start: np.ndarray) -> None:
        self.pos = pos
        self.end = end
        self.start = start

    def take(self, rows: np.ndarray) -> _Rows:
        return _Rows(self.pos[rows], self.end[rows], self.start[rows])

    def fail(self, bad: np.ndarray, detail: Callable[[int], str]) -> NoReturn:
        """Raise for the first record flagged in ``bad``; ``detail(i)`` describes it."""
        i = int(np.argmax(bad))
        raise FormatError(f"Avro record at byte {int(self.start[i])} does not match its schema: {detail(i)}")

    def check_within(self, what: str, before: np.ndarray) -> None:
        """Every cursor is still inside its record (``before``: where the item started)."""
        bad = self.pos > self.end
        if bad.any():
            self.fail(bad, lambda i: f"{what} at byte {int(before[i])} runs past the record end")


def _read_varints(buf: np.ndarray, rows: _Rows, what: str) -> np.ndarray:
    """Zig-zag varints (Avro int / long) at every cursor, as int64; advances the cursors.
    Reads up to 10 bytes without looking at the record ends: the caller checks them."""
    pos = rows.pos
    first = buf[pos]
    if not first.size or int(first.max()) < 0x80:  # one byte each: tags, small ints, short lengths
        z = first.astype(_I64)
        rows.pos = pos + 1
        return (z >> 1) ^ -(z & 1)
    # Eight bytes per cursor as one little-endian word: the varint ends at the lowest byte
    # whose high bit is clear; bytes past it are masked off, the 7-bit groups compacted.
    x = _items(buf, 8)[pos].view(_WORD)
    stop = ~x & _HIGH_BITS
    last = stop & (~stop + _ONE)  # lowest such high bit: 0x80 << 8 * (length - 1)
    longer = stop == 0  # nine or ten bytes: |value| of 2**55 or more (random longs)
    last[longer] = 0x80
    acc = _compact7(x & ((last << _ONE) - _ONE) & _LOW_BITS)
    length = ((np.log2(last) + 1) / 8).astype(_I64)  # exact: last is a power of two
    if longer.any():
        rows_9 = np.flatnonzero(longer)
        acc[rows_9], length[rows_9] = _read_long_varints(buf, pos, rows_9, x[rows_9], rows, what)
    rows.pos = pos + length
    return (acc >> _ONE).astype(_I64) ^ -(acc & _ONE).astype(_I64)


def _read_long_varints(buf: np.ndarray, pos: np.ndarray, which: np.ndarray, words: np.ndarray, rows: _Rows, what: str) -> tuple[np.ndarray, np.ndarray]:
    """(zig-zag values, lengths) of the varints at ``pos[which]``, known to be longer than
    eight bytes (``words``: their first eight). Random 64-bit longs are mostly such
    varints, so they are read as vectors too: the ninth byte adds bits 56-62 and, when it
    continues, a tenth byte adds bit 63 (it may hold nothing else). Refuses more than ten
    bytes, or more than 64 bits."""
    at = pos[which]
    ninth = buf[at + 8].astype(_U64)
    tenth = buf[at + 9].astype(_U64)
    ten = ninth >= 0x80
    bad = ten & (tenth > 1)
    if bad.any():
        mask = np.zeros(len(pos), bool)
        mask[which[bad]] = True
        rows.fail(mask, lambda i: f"{what} at byte {int(pos[i])} is a varint longer than 10 bytes or beyond a long")
    acc = _compact7(words & _LOW_BITS) | ((ninth & np.uint64(0x7F)) << np.uint64(56)) | (np.where(ten, tenth, 0).astype(_U64) << np.uint64(63))
    return acc, 9 + ten.astype(_I64)


def _read_fixed_width(buf: np.ndarray, rows: _Rows, width: int, what: str) -> np.ndarray:
    """``width`` raw bytes at every cursor, as a (rows, width) array; advances the cursors."""
    pos = rows.pos
    bad = pos + width > rows.end
    if bad.any():
        rows.fail(bad, lambda i: f"{what} at byte {int(pos[i])} runs past the record end")
    rows.pos = pos + width
    if not width:
        return np.zeros((len(pos), 0), np.uint8)
    return _items(buf, width)[pos].view(np.uint8).reshape(len(pos), width)


def _read_lengths(buf: np.ndarray, rows: _Rows, what: str) -> tuple[np.ndarray, np.ndarray]:
    """(payload starts, lengths) of length-prefixed strings / bytes; advances the cursors.
    Each payload is checked to end within its record before anything is gathered."""
    at = rows.pos
    lengths = _read_varints(buf, rows, f"{what} length")
    pos = rows.pos
    bad = (lengths < 0) | (lengths > rows.end - pos)
    if bad.any():
        rows.fail(bad, lambda i: f"{what} length {int(lengths[i])} at byte {int(at[i])} runs past the record end")
    rows.pos = pos + lengths
    return pos, lengths


def _spread(values: np.ndarray, rows: np.ndarray | None, n: int) -> np.ndarray:
    """Values of some rows placed into an all-zero array of ``n`` rows."""
    if rows is None:
        return values
    full = np.zeros((n, *values.shape[1:]), values.dtype)
    full[rows] = values
    return full


def _decode_field(buf: np.ndarray, rows: _Rows, f: _Field, arrow_type: pa.DataType) -> pa.Array:  # noqa: C901 (one branch per Avro type)
    n = len(rows.pos)
    field_at = rows.pos
    valid: np.ndarray | None = None
    if f.branches:
        # Tags are single bytes (2 × branch index) in practice: compared as they are.
        tags = buf[field_at]
        valid = tags == 2 * f.value_index
        ok = valid if f.null_index < 0 else valid | (tags == 2 * f.null_index)
        if ok.all():
            rows.pos = field_at + 1
        else:  # a longer encoding of a good index, or a bad one
            tags = _read_varints(buf, rows, f"union index of field {f.name!r}")
            valid = tags == f.value_index
            bad = ~valid if f.null_index < 0 else ~valid & (tags != f.null_index)
            if bad.any():
                rows.fail(bad, lambda i: f"union index {int(tags[i])} at byte {int(field_at[i])} is out of range ({f.branches} branches)")
    if f.value is None:
        rows.check_within(f"field {f.name!r}", field_at)
        return pa.nulls(n, arrow_type)
    kind = f.value.kind
    what = f"{kind} of field {f.name!r}"

    # The rows that hold a value: all of them, none, or a subset read through its own cursors.
    present: np.ndarray | None = None
    sub = rows
    null_count = 0
    validity = None
    if valid is not None:
        count = int(np.count_nonzero(valid))
        if count < n:
            null_count = n - count
            validity = pa.py_buffer(np.packbits(valid, bitorder="little"))
            present = np.flatnonzero(valid)
            sub = rows.take(present)

    if kind in ("string", "bytes"):
        starts, lengths = _read_lengths(buf, sub, what)
        full_lengths = _spread(lengths, present, n)
        offsets = np.zeros(n + 1, _I64)
        np.cumsum(full_lengths, out=offsets[1:])
        total = int(offsets[-1])
        if total > _INT32_MAX:
            raise FormatError(f"Avro field {f.name!r} holds {total} bytes, more than an Arrow {arrow_type} array can")
        # Values of many lengths (free text) are each copied as the longest one's bytes, in
        # order, so each value's overhang is rewritten by the next: one gather and one
        # scatter instead of one per distinct length, while that moves at most a few times
        # the payload. The last value's overhang lands in ``spare``.
        widest = int(lengths.max()) if len(lengths) else 0
        spare = widest if widest * len(lengths) <= 4 * total + 4096 else 0
        data = np.empty(total + spare, np.uint8)
        if spare:
            dst_at = offsets[:-1] if present is None else offsets[:-1][present]
            _copy_segments(buf, starts, data, dst_at, lengths, len(data) - dst_at)
        else:
            _copy_segments(buf, starts, data, None, lengths)
        buffers = [validity, pa.py_buffer(offsets.astype(np.int32)), pa.py_buffer(data[:total])]
        arr = pa.Array.from_buffers(arrow_type, n, buffers, null_count)
        if kind == "string":
            try:
                arr.validate(full=True)
            except pa.ArrowInvalid as exc:
                raise FormatError(f"Avro field {f.name!r} holds a string that is not valid UTF-8: {exc}") from exc
    elif kind in ("int", "long"):
        values = _read_varints(buf, sub, what)
        if kind == "int":
            bad = (values < _INT32_MIN) | (values > _INT32_MAX)
            if bad.any():
                sub.fail(bad, lambda i: f"{what} {int(values[i])} does not fit 32 bits")
            values = values.astype(np.int32)
        # Dates, times and timestamps are their integers: the Arrow type takes the buffer as is.
        arr = pa.Array.from_buffers(arrow_type, n, [validity, pa.py_buffer(_spread(values, present, n))], null_count)
    elif kind == "boolean":
        values = _read_fixed_width(buf, sub, 1, what)[:, 0] != 0
        bits = np.packbits(_spread(values, present, n), bitorder="little")
        arr = pa.Array.from_buffers(pa.bool_(), n, [validity, pa.py_buffer(bits)], null_count)
    elif kind in ("float", "double", "fixed"):
        width = f.value.size if kind == "fixed" else _WIDTH[kind]
        raw = _read_fixed_width(buf, sub, width, what)
        arr = pa.Array.from_buffers(arrow_type, n, [validity, pa.py_buffer(_spread(raw, present, n))], null_count)
    elif kind == "enum":
        symbols = f.value.symbols
        index = _read_varints(buf, sub, what)
        bad = (index < 0) | (index >= len(symbols))
        if bad.any():
            sub.fail(bad, lambda i: f"enum index {int(index[i])} out of range ({len(symbols)} symbols)")
        indices = pa.Array.from_buffers(
            pa.int32(), n, [validity, pa.py_buffer(_spread(index.astype(np.int32), present, n))], null_count
        )
        arr = pa.array(symbols, pa.string()).take(indices)
    else:  # pragma: no cover - _layout admits nothing else
        raise AssertionError(kind)

    if present is not None:
        rows.pos[present] = sub.pos
    rows.check_within(f"field {f.name!r}", field_at)
    return arr


def decode_records(
    node: AvroNode, content: bytes, starts: np.ndarray, ends: np.ndarray, arrow_schema: pa.Schema
) -> pa.Table:
    """Decode the records at ``starts[i]:ends[i]`` of ``content`` into a table of ``arrow_schema``.

    ``node`` must satisfy :func:`can_vectorize`. Each record must end exactly at its end;
    anything else means the writer schema does not describe the bytes.
    """
    fields = _layouts(node)
    n = len(starts)
    if not n:
        return arrow_schema.empty_table()
    buf = np.zeros(len(content) + _PAD, np.uint8)
    buf[: len(content)] = np.frombuffer(content, np.uint8)
    start = np.asarray(starts, _I64)
    end = np.asarray(ends, _I64)
    if (start < 0).any() or (start > end).any() or (end > len(content)).any():
        raise ValueError("record spans must lie within the content")
    rows = _Rows(start.copy(), end, start)
    arrays = [_decode_field(buf, rows, f, field.type) for f, field in zip(fields, arrow_schema)]
    bad = rows.pos != end
    if bad.any():
        i = int(np.argmax(bad))
        s, e, p = int(start[i]), int(end[i]), int(rows.pos[i])
        raise FormatError(f"Avro record at byte {s} is {e - s} bytes but its schema reads {p - s}")
    return pa.Table.from_arrays(arrays, schema=arrow_schema)


# --------------------------------------------------------------------------------------
# Encoding
# --------------------------------------------------------------------------------------

def _zigzag(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(zig-zag values as uint64, their varint sizes) of integer ``values``."""
    v = values.astype(_I64, copy=False)
    z = ((v << 1) ^ (v >> 63)).view(_U64)
    sizes = np.ones(len(z), _I64)
    top = int(z.max()) if z.size else 0
    for limit in _VARINT_LIMITS.tolist():
        if top < limit:
            break
        sizes += z >= np.uint64(limit)
    return z, sizes


def _varint_rows(z: np.ndarray, sizes: np.ndarray, tag: int | None) -> tuple[np.ndarray, np.ndarray]:
    """(rows, sizes): each varint's bytes, after a union ``tag`` byte if given, as one row
    of a uint8 matrix, and how many bytes of its row each uses."""
    m = len(z)
    lead = 0 if tag is None else 1
    if not m or int(sizes.max()) == 1:  # one byte each: no bit twiddling
        rows = np.empty((m, lead + 1), np.uint8)
        rows[:, lead] = z
        if tag is not None:
            rows[:, 0] = tag
        return rows, sizes + lead
    # Seven bits per byte, continuation bits set: bytes 0-7 in one little-endian word,
    # bytes 8-9 (values of 2**56 and more) in a second one, only when needed.
    low = _spread7(z & np.uint64(0x00FFFFFFFFFFFFFF)) | _CONTINUATION[sizes]
    longest = int(sizes.max()) + lead
    if longest <= 8:
        word = low if tag is None else (low << np.uint64(8)) | np.uint64(tag)
        return word.view(np.uint8).reshape(m, 8), sizes + lead
    high: np.ndarray = np.zeros(m, _U64)
    if longest - lead > 8:
        top = z >> np.uint64(56)
        high = (top & np.uint64(0x7F)) | np.where(sizes == 10, np.uint64(0x80), np.uint64(0)) | ((top >> np.uint64(7)) << np.uint64(8))
    words = np.empty((m, 2), _WORD)
    if tag is None:
        words[:, 0] = low
        words[:, 1] = high
    else:  # shift the 16 bytes up by one for the tag
        words[:, 0] = (low << np.uint64(8)) | np.uint64(tag)
        words[:, 1] = (low >> np.uint64(56)) | (high << np.uint64(8))
    return words.view(np.uint8).reshape(m, 16), sizes + lead


def _values(arr: pa.Array, dtype: np.dtype) -> np.ndarray:
    """The data buffer of a fixed-width array (nulls included, whatever their slots hold)."""
    buffer = arr.buffers()[1]
    if buffer is None:  # all null, no data allocated
        return np.zeros(len(arr), dtype)
    return np.frombuffer(buffer, dtype, count=len(arr), offset=arr.offset * dtype.itemsize)


@dataclass
class _Encoded:
    """One field of every row, ready to be written.

    Each row has a *head* (its union tag, then its varint or fixed-width value, or the
    length of its string) of ``head_sizes[i]`` bytes taken from row i of ``head``, and
    for strings and bytes a *payload* right after it: ``lengths[i]`` bytes of ``data``
    from ``starts[i]`` (0 for nulls). Two copies per field.
    """

    sizes: np.ndarray  # bytes of the field in each row
    head: np.ndarray | None = None
    head_sizes: np.ndarray | None = None
    data: np.ndarray | None = None
    starts: np.ndarray | None = None  # None: the payloads lie back to back in data
    lengths: np.ndarray | None = None
    full_heads: bool = False  # every head uses its whole row

    def __post_init__(self) -> None:
        if self.head is not None and self.head_sizes is not None and len(self.head_sizes):
            self.full_heads = int(self.head_sizes.min()) == self.head.shape[1]

    def write(self, out: np.ndarray, at: np.ndarray, record_end: np.ndarray) -> None:
        """Write the field of every row i at ``out[at[i]:]``. Fields are written in record
        order, so bytes up to ``record_end`` beyond this field are free to overwrite."""
        if self.head is not None:
            assert self.head_sizes is not None
            width = self.head.shape[1]
            # Rows that use all their bytes are back to back: no gather needed.
            src_at = None if self.full_heads else np.arange(0, width * len(at), width, dtype=_I64)
            _copy_segments(self.head.reshape(-1), src_at, out, at, self.head_sizes, record_end - at)
        if self.data is not None:
            assert self.lengths is not None and self.head_sizes is not None
            dst = at + self.head_sizes
            _copy_segments(self.data, self.starts, out, dst, self.lengths, record_end - dst)


def _heads(
    f: _Field, arr: pa.Array, valid: np.ndarray | None, tag: int | None
) -> tuple[np.ndarray, np.ndarray, tuple[np.ndarray, np.ndarray | None, np.ndarray] | None]:
    """(head rows, head sizes, payload) of every row of column ``arr`` for field ``f``, each
    head led by the union ``tag`` if given. Null rows (``valid`` False) get a head too, of
    whatever their slot holds: the caller replaces it. The payload of strings and bytes is
    (data, starts or None when back to back, lengths), lengths 0 for null rows."""
    assert f.value is not None
    kind = f.value.kind
    m = len(arr)
    lead = 0 if tag is None else 1
    if kind in ("int", "long"):
        values = _values(arr, np.dtype(np.int32 if kind == "int" else np.int64))
        if valid is not None:
            values = np.where(valid, values, 0)  # null slots may hold anything
        return (*_varint_rows(*_zigzag(values), tag), None)
    if kind in ("string", "bytes"):
        buffers = arr.buffers()
        offsets = np.frombuffer(buffers[1], np.int32, count=m + 1, offset=arr.offset * 4)
        lo, hi = int(offsets[0]), int(offsets[-1])
        data = np.frombuffer(buffers[2], np.uint8)[lo:hi] if buffers[2] is not None and hi > lo else np.empty(0, np.uint8)
        lengths = np.diff(offsets).astype(_I64)
        starts = None
        if valid is not None:
            # A null slot may span bytes (Arrow allows it): payloads are then not back to back.
            starts = offsets[:-1].astype(_I64) - lo
            lengths[~valid] = 0
        return (*_varint_rows(*_zigzag(lengths), tag), (data, starts, lengths))
    if kind == "enum":
        symbols = f.value.symbols
        index = pc.index_in(arr, value_set=pa.array(symbols, pa.string()))
        found = index.is_valid().to_numpy(zero_copy_only=False)
        unknown = ~found if valid is None else valid & ~found
        if unknown.any():
            row = int(np.argmax(unknown))
            raise SchemaError(f"column {f.name!r}, row {row}: {arr[row].as_py()!r} is not a symbol of the Avro enum {list(symbols)}")
        values = index.fill_null(0).to_numpy(zero_copy_only=False)
        return (*_varint_rows(*_zigzag(values), tag), None)
    if kind == "boolean":
        width = 1
        buffer = arr.buffers()[1]
        bits = np.unpackbits(np.frombuffer(buffer, np.uint8), bitorder="little") if buffer is not None else np.zeros(arr.offset + m, np.uint8)
        raw = bits[arr.offset : arr.offset + m].reshape(m, 1)
    elif kind == "fixed":
        width = f.value.size
        raw = _values(arr, np.dtype((np.void, width))).view(np.uint8).reshape(m, width) if width else np.zeros((m, 0), np.uint8)
    elif kind in ("float", "double"):
        width = _WIDTH[kind]
        raw = _values(arr, np.dtype(np.float32 if kind == "float" else np.float64)).view(np.uint8).reshape(m, width)
    else:  # pragma: no cover - _layout admits nothing else
        raise AssertionError(kind)
    if tag is None:
        return np.ascontiguousarray(raw), np.full(m, width, _I64), None
    heads = np.empty((m, lead + width), np.uint8)
    heads[:, 0] = tag
    heads[:, lead:] = raw
    return heads, np.full(m, lead + width, _I64), None


def _encode_field(f: _Field, arr: pa.Array | None, n: int) -> _Encoded:
    """Field ``f`` of every row, from column ``arr`` (None: all null)."""
    if not n:
        return _Encoded(np.zeros(0, _I64))
    if arr is None:
        valid: np.ndarray | None = np.zeros(n, bool)
    elif arr.null_count:
        valid = arr.is_valid().to_numpy(zero_copy_only=False)
    else:
        valid = None
    if valid is not None and f.null_index < 0 and f.value is not None:
        row = int(np.argmax(~valid))
        raise SchemaError(f"column {f.name!r}, row {row}: null value for a non-nullable Avro {f.value.kind}")
    # Branch indexes below 64 zig-zag to one byte: 2 * index.
    null_tag = 2 * f.null_index
    value_tag = 2 * f.value_index if f.branches else None
    if f.value is None or arr is None:
        if arr is not None and arr.null_count != len(arr):
            row = int(np.argmax(arr.is_valid().to_numpy(zero_copy_only=False)))
            raise SchemaError(f"column {f.name!r}, row {row}: Avro null cannot hold {arr[row].as_py()!r}")
        if not f.branches:
            return _Encoded(np.zeros(n, _I64))
        ones = np.ones(n, _I64)
        return _Encoded(ones, np.full((n, 1), null_tag, np.uint8), ones)

    heads, head_sizes, payload = _heads(f, arr, valid, value_tag)
    if valid is not None:
        nulls = np.flatnonzero(~valid)
        heads[nulls, 0] = null_tag
        head_sizes[nulls] = 1
    if payload is None:
        return _Encoded(head_sizes, heads, head_sizes)
    data, starts, lengths = payload
    return _Encoded(head_sizes + lengths, heads, head_sizes, data, starts, lengths)


def encode_avro_contents(node: AvroNode, table: pa.Table, arrow_schema: pa.Schema, version: int, counts: list[int]) -> list[bytearray]:
    """The AVRO_DATA contents of consecutive slices of ``table``, ``counts[i]`` rows each:
    what :func:`encode_avro_content` gives for each slice, from one encoding of the whole
    table (a block of a thousand records spends most of its time in per-call overhead)."""
    if sum(counts) != table.num_rows or any(c < 0 for c in counts):
        raise ValueError(f"slices of {counts} rows do not cover a table of {table.num_rows}")
    content, record_starts = _encode_content(node, table, arrow_schema, version)
    bounds = np.append(record_starts, len(content)).tolist()
    out, row = [], 0
    for count in counts:
        part = bytearray(struct.pack(">ii", version, count))
        part += memoryview(content)[bounds[row] : bounds[row + count]]
        out.append(part)
        row += count
    return out


def encode_avro_content(node: AvroNode, table: pa.Table, arrow_schema: pa.Schema, version: int) -> bytearray:
    """The whole AVRO_DATA content of ``table``: int32 ``version``, int32 record count, then
    per record its int32 length and its Avro binary (all big-endian).

    Returned as the ``bytearray`` it was built in: making ``bytes`` of it would copy the
    whole block once more, and the block is framed (copied) next anyway.

    ``node`` must satisfy :func:`can_vectorize`; ``arrow_schema`` is ``avro_schema_to_arrow``
    of the same schema. Columns are matched by name as in :func:`~.avro_encode.encode_records`:
    a column the schema lacks is refused, a nullable field the table lacks is written as null.
    """
    return _encode_content(node, table, arrow_schema, version)[0]


def _encode_content(node: AvroNode, table: pa.Table, arrow_schema: pa.Schema, version: int) -> tuple[bytearray, np.ndarray]:
    """The content and the offset of each record's length prefix in it."""
    fields = _layouts(node)
    names = {n for n, _ in node.fields}
    extra = [c for c in table.column_names if c not in names]
    if extra:
        raise SchemaError(f"columns {extra} are not in the Avro schema {node.name}")
    n = table.num_rows
    record_sizes = np.zeros(n, _I64)
    encoded = []
    for f, (_, child) in zip(fields, node.fields):
        e = _encode_field(f, cast_column(table, f.name, child, arrow_schema.field(f.name).type), n)
        record_sizes += e.sizes
        encoded.append(e)
    if n and int(record_sizes.max()) > _INT32_MAX:
        i = int(np.argmax(record_sizes))
        raise SchemaError(f"row {i} is {int(record_sizes[i])} bytes of Avro, more than a log block record can hold")
    framed = record_sizes + 4
    record_starts = 8 + np.cumsum(framed) - framed
    content = bytearray(8 + int(framed.sum()))
    out = np.frombuffer(content, np.uint8)
    out[:8] = np.frombuffer(struct.pack(">ii", version, n), np.uint8)
    _items(out, 4)[record_starts] = record_sizes.astype(">i4").view(np.dtype((np.void, 4))).reshape(n)
    at = record_starts + 4
    record_end = at + record_sizes
    for e in encoded:
        e.write(out, at, record_end)
        at = at + e.sizes
    return content, record_starts
