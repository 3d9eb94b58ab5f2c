"""The keys of the metadata table's records and the file group each key lives in.

* ``files``: a partition's key is its path (``.`` for a non-partitioned table); the list
  of partitions is under ``__all_partitions__``.
* ``column_stats``: Base64 of XXHash64(column) + XXHash64(partition) + MD5(file name), so
  the records of one column, or of one column in one partition, share a key prefix.
* ``bloom_filters``: Base64 of XXHash64(partition) + MD5(file name).
* ``record_index``: the record key itself.

A key lives in file group ``mapRecordKeyToFileGroupIndex(key, n)`` of its partition's
``n`` file groups, in file id order: Java's ``String.hashCode`` of the key, modulo ``n``.
(XXHash64 is Apache Hudi's ``HashID``: seed ``0xdabadaba``, big-endian bytes.)
"""
from __future__ import annotations

import base64
import hashlib
import struct
from collections.abc import Sequence

import numpy as np
import pyarrow as pa

__all__ = [
    "ALL_PARTITIONS_KEY",
    "NON_PARTITIONED_NAME",
    "bloom_filter_key",
    "bloom_filter_prefix",
    "column_stats_key",
    "column_stats_prefix",
    "file_group_index",
    "file_group_indices",
    "partition_identifier",
    "xxhash64",
]

ALL_PARTITIONS_KEY = "__all_partitions__"
#: how the metadata table names the one partition of a non-partitioned table
NON_PARTITIONED_NAME = "."

_M = (1 << 64) - 1
_P1, _P2, _P3 = 0x9E3779B185EBCA87, 0xC2B2AE3D27D4EB4F, 0x165667B19E3779F9
_P4, _P5 = 0x85EBCA77C2B2AE63, 0x27D4EB2F165667C5
# HashID's seed is the Java int 0xdabadaba, widened to a long: sign-extended
_SEED = 0xFFFFFFFFDABADABA


def _rotl(x: int, r: int) -> int:
    return ((x << r) | (x >> (64 - r))) & _M


def _round(acc: int, lane: int) -> int:
    return (_rotl((acc + lane * _P2) & _M, 31) * _P1) & _M


def xxhash64(data: bytes, seed: int = _SEED) -> int:
    """XXH64 of ``data`` (the reference algorithm; the metadata table's keys are short)."""
    n, i = len(data), 0
    if n >= 32:
        v = [(seed + _P1 + _P2) & _M, (seed + _P2) & _M, seed & _M, (seed - _P1) & _M]
        while i + 32 <= n:
            for j in range(4):
                v[j] = _round(v[j], struct.unpack_from("<Q", data, i + 8 * j)[0])
            i += 32
        h = (_rotl(v[0], 1) + _rotl(v[1], 7) + _rotl(v[2], 12) + _rotl(v[3], 18)) & _M
        for lane in v:
            h = ((h ^ _round(0, lane)) * _P1 + _P4) & _M
    else:
        h = (seed + _P5) & _M
    h = (h + n) & _M
    while i + 8 <= n:
        h = (_rotl(h ^ _round(0, struct.unpack_from("<Q", data, i)[0]), 27) * _P1 + _P4) & _M
        i += 8
    if i + 4 <= n:
        h = (_rotl(h ^ ((struct.unpack_from("<I", data, i)[0] * _P1) & _M), 23) * _P2 + _P3) & _M
        i += 4
    while i < n:
        h = (_rotl(h ^ ((data[i] * _P5) & _M), 11) * _P1) & _M
        i += 1
    h = ((h ^ (h >> 33)) * _P2) & _M
    h = ((h ^ (h >> 29)) * _P3) & _M
    return h ^ (h >> 32)


def _id64(text: str) -> bytes:
    return xxhash64(text.encode("utf-8")).to_bytes(8, "big")


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def partition_identifier(partition_path: str) -> str:
    """The name the metadata table gives a data partition (``.`` for the table's root)."""
    return partition_path or NON_PARTITIONED_NAME


def column_stats_prefix(column: str, partition_path: str | None = None) -> str:
    """The key prefix of a column's statistics (in one partition, when given)."""
    prefix = _b64(_id64(column))
    return prefix if partition_path is None else prefix + _b64(_id64(partition_identifier(partition_path)))


def column_stats_key(partition_path: str, file_name: str, column: str) -> str:
    """The key of one column's statistics in one file."""
    return column_stats_prefix(column, partition_path) + _b64(hashlib.md5(file_name.encode("utf-8")).digest())


def bloom_filter_prefix(partition_path: str) -> str:
    """The prefix of the keys of every bloom filter of one partition."""
    return _b64(_id64(partition_identifier(partition_path)))


def bloom_filter_key(partition_path: str, file_name: str) -> str:
    """The key of one file's bloom filter."""
    return bloom_filter_prefix(partition_path) + _b64(hashlib.md5(file_name.encode("utf-8")).digest())


def file_group_indices(keys: Sequence[str] | pa.Array | pa.ChunkedArray, file_groups: int) -> np.ndarray:
    """:func:`file_group_index` of every key of ``keys`` at once (int64). Keys of ASCII
    characters are hashed from the UTF-8 bytes Arrow holds (each byte is then a UTF-16
    code unit), the others from their UTF-16 encoding; keys of one length a column of
    code units at a time, in 32-bit arithmetic as Java's (numpy's wrapping ``uint32``),
    without a Python step per key or character."""
    arr = keys if isinstance(keys, (pa.Array, pa.ChunkedArray)) else pa.array(keys, pa.string())
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks() if arr.num_chunks else pa.array([], pa.string())
    if not pa.types.is_large_string(arr.type):
        arr = arr.cast(pa.string())
    if arr.null_count:
        raise ValueError("record keys to hash must not be null")
    n = len(arr)
    out = np.zeros(n, np.int64)
    if n == 0:
        return out
    width = np.int64 if pa.types.is_large_string(arr.type) else np.int32
    offsets = np.frombuffer(arr.buffers()[1], width, n + 1, arr.offset * np.dtype(width).itemsize).astype(np.int64)
    data = arr.buffers()[2]
    size = int(offsets[-1])
    raw = np.frombuffer(data, np.uint8, size) if data is not None and size else np.zeros(1, np.uint8)
    # keys holding a byte >= 0x80 (a character beyond ASCII), when there is one at all
    high = raw >= 0x80
    if size and high.any():
        wide_bytes = np.r_[0, np.cumsum(high)]
        ascii = (wide_bytes[offsets[1:]] - wide_bytes[offsets[:-1]]) == 0
    else:
        ascii = np.ones(n, dtype=bool)
    rows = np.flatnonzero(ascii)
    _hash_units(out, rows, raw, offsets[:-1][rows], (offsets[1:] - offsets[:-1])[rows])
    others = np.flatnonzero(~ascii)
    if len(others):
        encoded = [k.encode("utf-16-le") for k in arr.take(pa.array(others)).to_pylist()]
        units = np.frombuffer(b"".join(encoded), "<u2") if any(encoded) else np.zeros(1, np.uint16)
        counts = np.fromiter(map(len, encoded), np.int64, len(encoded)) // 2
        _hash_units(out, others, units, np.r_[0, np.cumsum(counts)[:-1]], counts)
    return np.abs(out) % file_groups


def _hash_units(out: np.ndarray, rows: np.ndarray, units: np.ndarray, starts: np.ndarray, counts: np.ndarray) -> None:
    """Java's ``String.hashCode`` of the keys at ``rows`` of ``out``, whose code units
    are ``units[starts[i]:starts[i] + counts[i]]``, as signed 32-bit values."""
    for length in np.unique(counts).tolist():
        which = np.flatnonzero(counts == length)
        h = np.zeros(len(which), np.uint32)
        at = starts[which]
        for c in range(length):
            h = h * np.uint32(31) + units[at + c]
        out[rows[which]] = h.view(np.int32)


def file_group_index(key: str, file_groups: int) -> int:
    """Which of ``file_groups`` file groups (in file id order) holds ``key``: Java's
    ``String.hashCode`` (over UTF-16 code units, 32-bit overflow) modulo the count."""
    h = 0
    for unit in struct.unpack(f"<{len(key.encode('utf-16-le')) // 2}H", key.encode("utf-16-le")):
        h = (31 * h + unit) & 0xFFFFFFFF
    signed = h - (1 << 32) if h >= 1 << 31 else h
    # Java: Math.abs(Math.abs(h) % n), which for Integer.MIN_VALUE too is |h| mod n
    return abs(signed) % file_groups
