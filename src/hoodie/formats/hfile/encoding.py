"""The small codecs HFile v3 is built from: varints (protobuf's and Hadoop's), HBase
KeyValue keys, and the two protobuf messages of a file (``TrailerProto`` and the file
info's ``InfoProto``).

Both messages are tiny and fixed, so they are read and written here by hand rather than
through a protobuf runtime. Nothing here knows about blocks (see :mod:`.blocks`).
"""
from __future__ import annotations

import struct
from collections.abc import Mapping
from dataclasses import dataclass

from hoodie.errors import FormatError

__all__ = [
    "LATEST_TIMESTAMP",
    "MAXIMUM",
    "PUT",
    "Trailer",
    "decode_delimited",
    "decode_file_info",
    "encode_file_info",
    "first_on_row_key",
    "key_row",
    "make_key",
    "read_hadoop_vlong",
    "read_varint",
    "write_hadoop_vint",
    "write_varint",
]

#: ``HConstants.LATEST_TIMESTAMP``: the timestamp of every key Hudi writes.
LATEST_TIMESTAMP = 0x7FFFFFFFFFFFFFFF
#: ``KeyValue.Type.Put``: the type byte of every key Hudi writes.
PUT = 4
#: ``KeyValue.Type.Maximum``: the type of the "first on row" keys HBase puts in block
#: indexes when it shortens a block's first key (see :func:`.blocks.index_key_between`).
MAXIMUM = 255
_KEY_TAIL = struct.Struct(">bqB")  # family length, timestamp, type


def read_varint(buf: bytes | memoryview, pos: int) -> tuple[int, int]:
    """A protobuf base-128 varint at ``pos``: (value, position after it)."""
    value = shift = 0
    while True:
        if pos >= len(buf):
            raise FormatError("varint runs past the end of its message")
        b = buf[pos]
        pos += 1
        value |= (b & 0x7F) << shift
        if b < 0x80:
            return value, pos
        shift += 7
        if shift > 63:
            raise FormatError("varint longer than 10 bytes")


def write_varint(value: int) -> bytes:
    """``value`` (non-negative; negative int64s as their two's complement) as a varint."""
    if value < 0:
        value += 1 << 64
    out = bytearray()
    while value >= 0x80:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def read_hadoop_vlong(buf: bytes | memoryview, pos: int) -> tuple[int, int]:
    """Hadoop ``WritableUtils.readVLong`` at ``pos``: (value, position after it)."""
    if pos >= len(buf):
        raise FormatError("Hadoop VLong runs past the end of its block")
    first = buf[pos] - 256 if buf[pos] > 127 else buf[pos]
    if first >= -112:
        return first, pos + 1
    size = -111 - first if first >= -120 else -119 - first  # counts the first byte
    end = pos + size
    if end > len(buf):
        raise FormatError("Hadoop VLong runs past the end of its block")
    value = int.from_bytes(buf[pos + 1 : end], "big")
    return (~value if first < -120 else value), end


def write_hadoop_vint(value: int) -> bytes:
    """Hadoop ``WritableUtils.writeVLong`` (VInt is the same encoding)."""
    if -112 <= value <= 127:
        return struct.pack(">b", value)
    length = -112
    if value < 0:
        value = ~value
        length = -120
    tmp = value
    body = bytearray()
    while tmp:
        body.insert(0, tmp & 0xFF)
        tmp >>= 8
        length -= 1
    return struct.pack(">b", length) + bytes(body)


def make_key(row: bytes) -> bytes:
    """The KeyValue key Hudi writes for a record key: int16 row length, the row, family
    length 0, no qualifier, timestamp ``LATEST_TIMESTAMP``, type Put."""
    if len(row) > 0x7FFF:
        raise FormatError(f"record key of {len(row)} bytes is longer than an HFile row may be (32767)")
    return struct.pack(">h", len(row)) + row + _KEY_TAIL.pack(0, LATEST_TIMESTAMP, PUT)


def first_on_row_key(row: bytes) -> bytes:
    """HBase's ``createFirstOnRow(row)`` serialised as a key: sorts before every key of ``row``."""
    return struct.pack(">h", len(row)) + row + _KEY_TAIL.pack(0, LATEST_TIMESTAMP, MAXIMUM)


def key_row(key: bytes | memoryview) -> bytes:
    """The row (Hudi's record key) of a KeyValue key."""
    if len(key) < 2:
        raise FormatError(f"KeyValue key of {len(key)} bytes has no row length")
    n = (key[0] << 8) | key[1]
    if n > len(key) - 2:
        raise FormatError(f"KeyValue key row length {n} runs past the key ({len(key)} bytes)")
    return bytes(key[2 : 2 + n])


# --------------------------------------------------------------------------------------
# protobuf messages
# --------------------------------------------------------------------------------------


def _fields(msg: bytes | memoryview) -> list[tuple[int, int | bytes]]:
    """The (field number, value) pairs of a protobuf message: varints as int,
    length-delimited fields as bytes; fixed-width fields are skipped (none are used)."""
    out: list[tuple[int, int | bytes]] = []
    pos = 0
    while pos < len(msg):
        tag, pos = read_varint(msg, pos)
        number, wire = tag >> 3, tag & 7
        if wire == 0:
            value, pos = read_varint(msg, pos)
            out.append((number, value))
        elif wire == 2:
            n, pos = read_varint(msg, pos)
            if pos + n > len(msg):
                raise FormatError(f"protobuf field {number} runs past the end of its message")
            out.append((number, bytes(msg[pos : pos + n])))
            pos += n
        elif wire == 1:
            pos += 8
        elif wire == 5:
            pos += 4
        else:
            raise FormatError(f"protobuf wire type {wire} of field {number} is not supported")
    if pos != len(msg):
        raise FormatError("protobuf message ends inside a field")
    return out


def decode_delimited(buf: bytes | memoryview, pos: int) -> tuple[bytes, int]:
    """A varint-length-delimited message at ``pos``: (its bytes, position after it)."""
    n, pos = read_varint(buf, pos)
    if pos + n > len(buf):
        raise FormatError(f"delimited message of {n} bytes runs past the end of its block")
    return bytes(buf[pos : pos + n]), pos + n


def _bytes_field(number: int, value: bytes) -> bytes:
    return write_varint(number << 3 | 2) + write_varint(len(value)) + value


@dataclass(frozen=True)
class Trailer:
    """``FixedFileTrailer`` of HFile v3: where the sections are and what the file holds."""

    file_info_offset: int
    load_on_open_offset: int
    uncompressed_data_index_size: int
    total_uncompressed_bytes: int
    data_index_count: int
    meta_index_count: int
    entry_count: int
    num_data_index_levels: int
    first_data_block_offset: int
    last_data_block_offset: int
    comparator: str
    codec: int
    major_version: int = 3
    minor_version: int = 3

    _NUMBERS = (
        "file_info_offset",
        "load_on_open_offset",
        "uncompressed_data_index_size",
        "total_uncompressed_bytes",
        "data_index_count",
        "meta_index_count",
        "entry_count",
        "num_data_index_levels",
        "first_data_block_offset",
        "last_data_block_offset",
    )

    @classmethod
    def decode(cls, message: bytes) -> Trailer:
        # protobuf's defaults for absent fields (Hudi 1.1's own writer leaves out the
        # total uncompressed bytes, for one)
        values: dict[str, int | str] = {n: 0 for n in cls._NUMBERS}
        values.update(comparator="", codec=2, num_data_index_levels=1)
        for number, value in _fields(message):
            if 1 <= number <= 10 and isinstance(value, int):
                name = cls._NUMBERS[number - 1]
                # int64 fields written negative (an empty file's -1 offsets) come back as
                # their two's complement
                values[name] = value - (1 << 64) if value >= 1 << 63 else value
            elif number == 11 and isinstance(value, bytes):
                values["comparator"] = value.decode("utf-8", "replace")
            elif number == 12 and isinstance(value, int):
                values["codec"] = value
            elif number == 13:
                raise FormatError("encrypted HFiles are not supported")
        return cls(**values)  # type: ignore[arg-type]

    def encode(self) -> bytes:
        out = bytearray()
        for number, name in enumerate(self._NUMBERS, 1):
            out += write_varint(number << 3) + write_varint(getattr(self, name))
        out += _bytes_field(11, self.comparator.encode())
        out += write_varint(12 << 3) + write_varint(self.codec)
        return bytes(out)


def decode_file_info(payload: bytes, magic: bytes) -> dict[str, bytes]:
    """The file info block's content (``PBUF`` + a delimited ``InfoProto``) as a dict;
    keys are UTF-8 names (``hfile.LASTKEY``, ``schema``, ...)."""
    if payload[: len(magic)] != magic:
        raise FormatError(f"file info does not start with {magic!r}")
    message, _ = decode_delimited(payload, len(magic))
    out: dict[str, bytes] = {}
    for number, pair in _fields(message):
        if number != 1 or not isinstance(pair, bytes):
            continue
        first = second = b""
        for n, v in _fields(pair):
            if n == 1 and isinstance(v, bytes):
                first = v
            elif n == 2 and isinstance(v, bytes):
                second = v
        out[first.decode("utf-8", "replace")] = second
    return out


def encode_file_info(info: Mapping[str, bytes], magic: bytes) -> bytes:
    """File info as HBase writes it: entries sorted by key bytes (its ``TreeMap``)."""
    message = bytearray()
    for name in sorted(info, key=lambda k: k.encode()):
        pair = _bytes_field(1, name.encode()) + _bytes_field(2, info[name])
        message += _bytes_field(1, pair)
    return magic + write_varint(len(message)) + bytes(message)
