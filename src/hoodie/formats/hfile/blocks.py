"""HFile v3 blocks: the 33-byte header, chunk checksums, compression, and the block
index formats (root and non-root), for the reader and the writer alike.

A block on disk is ``header | data | checksums``: the data is compressed with the file's
codec (every block, index and file info included), and one checksum covers each
``bytes_per_checksum`` chunk of header plus data. :func:`decode_block` checks all of it
before handing out a byte, and :func:`encode_block` is its inverse.
"""
from __future__ import annotations

import enum
import struct
import zlib
from bisect import bisect_right
from dataclasses import dataclass

import google_crc32c

from hoodie.errors import FormatError
from hoodie.formats.hfile.encoding import first_on_row_key, key_row, read_hadoop_vlong, write_hadoop_vint

__all__ = [
    "BLOOM_META_MAGICS",
    "DATA",
    "FILE_INFO",
    "HEADER_SIZE",
    "INTERMEDIATE_INDEX",
    "LEAF_INDEX",
    "META",
    "ROOT_INDEX",
    "BlockHeader",
    "Codec",
    "IndexEntry",
    "decode_block",
    "decode_non_root_index",
    "decode_root_index",
    "encode_block",
    "encode_root_index",
    "index_key_between",
]

DATA = b"DATABLK*"
LEAF_INDEX = b"IDXLEAF2"
INTERMEDIATE_INDEX = b"IDXINTE2"
ROOT_INDEX = b"IDXROOT2"
META = b"METABLKc"
FILE_INFO = b"FILEINF2"
#: Blocks HBase may place between data blocks (bloom chunks) or in the load-on-open section.
BLOOM_META_MAGICS = (b"BLMFBLK2", b"BLMFMET2", b"DFBLMET2")
_KNOWN = {DATA, LEAF_INDEX, INTERMEDIATE_INDEX, ROOT_INDEX, META, FILE_INFO, b"TRABLK\"$", *BLOOM_META_MAGICS}

_HEADER = struct.Struct(">8siiqbii")
HEADER_SIZE = _HEADER.size  # 33
_CHECKSUM = struct.Struct(">I")

#: Java's ``GZIPOutputStream`` header: no name, no time, OS byte 0.
_GZIP_HEADER = b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x00"


class Codec(enum.IntEnum):
    """``Compression.Algorithm`` ordinals as the trailer stores them."""

    LZO = 0
    GZ = 1
    NONE = 2
    SNAPPY = 3
    LZ4 = 4
    BZIP2 = 5
    ZSTD = 6


class ChecksumType(enum.IntEnum):
    NULL = 0
    CRC32 = 1
    CRC32C = 2


def _checksum(kind: int, chunk: bytes | memoryview) -> int:
    if kind == ChecksumType.CRC32C:
        return int(google_crc32c.value(bytes(chunk)))
    return zlib.crc32(chunk) & 0xFFFFFFFF


@dataclass(frozen=True)
class BlockHeader:
    magic: bytes
    on_disk_size_without_header: int  # compressed data + checksums
    uncompressed_size_without_header: int
    prev_block_offset: int
    checksum_type: int
    bytes_per_checksum: int
    on_disk_data_size_with_header: int  # header + compressed data, no checksums

    @property
    def on_disk_size(self) -> int:
        """The whole block on disk: header, data and checksums."""
        return HEADER_SIZE + self.on_disk_size_without_header

    @classmethod
    def parse(cls, buf: bytes | memoryview, where: str) -> BlockHeader:
        if len(buf) < HEADER_SIZE:
            raise FormatError(f"{where}: block header cut short ({len(buf)} of {HEADER_SIZE} bytes)")
        header = cls(*_HEADER.unpack_from(buf, 0))
        if header.magic not in _KNOWN:
            raise FormatError(f"{where}: no HFile block magic (found {header.magic!r})")
        if header.checksum_type not in (0, 1, 2):
            raise FormatError(f"{where}: unknown checksum type {header.checksum_type}")
        if header.on_disk_data_size_with_header < HEADER_SIZE or header.on_disk_size < header.on_disk_data_size_with_header:
            raise FormatError(f"{where}: block sizes {header.on_disk_size_without_header} and {header.on_disk_data_size_with_header} are inconsistent")
        if header.uncompressed_size_without_header < 0 or (header.checksum_type and header.bytes_per_checksum <= 0):
            raise FormatError(f"{where}: block header holds a negative size")
        return header


def decode_block(buf: bytes | memoryview, codec: int, where: str, expect: bytes | tuple[bytes, ...] | None = None) -> tuple[BlockHeader, bytes]:
    """The header and uncompressed data of the whole block in ``buf`` (header first), its
    checksums verified; ``where`` (file and offset) is named in every error."""
    header = BlockHeader.parse(buf, where)
    if expect is not None and header.magic not in ((expect,) if isinstance(expect, bytes) else expect):
        raise FormatError(f"{where}: expected a {expect!r} block, found {header.magic!r}")
    if len(buf) < header.on_disk_size:
        raise FormatError(f"{where}: block of {header.on_disk_size} bytes cut short at {len(buf)}")
    data_end = header.on_disk_data_size_with_header
    step = header.bytes_per_checksum
    chunks = -(-data_end // step) if step > 0 else 0
    if header.checksum_type:
        if header.on_disk_size - data_end != 4 * chunks:
            raise FormatError(f"{where}: {header.on_disk_size - data_end} checksum bytes for {chunks} chunks")
        for i in range(chunks):
            (stored,) = _CHECKSUM.unpack_from(buf, data_end + 4 * i)
            actual = _checksum(header.checksum_type, buf[i * step : min(data_end, (i + 1) * step)])
            if stored != actual:
                raise FormatError(f"{where}: checksum mismatch in chunk {i} (stored {stored:08x}, computed {actual:08x})")
    elif header.on_disk_size - data_end not in (0, 4 * chunks):
        # Hudi 1.1's own writer declares no checksum type but leaves their room, zeroed
        raise FormatError(f"{where}: block without checksums has {header.on_disk_size - data_end} bytes after its data")
    stored_data = memoryview(buf)[HEADER_SIZE:data_end]
    if codec == Codec.NONE:
        data = bytes(stored_data)
    elif codec == Codec.GZ:
        data = _gunzip(stored_data, where)
    else:
        raise FormatError(f"{where}: compression codec {Codec(codec).name if codec in Codec._value2member_map_ else codec} is not supported")
    if len(data) != header.uncompressed_size_without_header:
        raise FormatError(f"{where}: block data is {len(data)} bytes, header says {header.uncompressed_size_without_header}")
    return header, data


def _gunzip(data: bytes | memoryview, where: str) -> bytes:
    out: list[bytes] = []
    try:
        while data:
            d = zlib.decompressobj(31)
            out.append(d.decompress(data))
            if not d.eof:
                raise FormatError(f"{where}: gzip stream of the block is cut short")
            data = d.unused_data
    except zlib.error as exc:
        raise FormatError(f"{where}: block data is not a valid gzip stream ({exc})") from None
    return out[0] if len(out) == 1 else b"".join(out)  # (one gzip member: no copy)


def _gzip(data: bytes) -> bytes:
    """A gzip member as Java's ``GZIPOutputStream`` writes it (zlib level 6)."""
    c = zlib.compressobj(6, zlib.DEFLATED, -15)
    body = c.compress(data) + c.flush()
    return _GZIP_HEADER + body + struct.pack("<II", zlib.crc32(data) & 0xFFFFFFFF, len(data) & 0xFFFFFFFF)


def encode_block(magic: bytes, data: bytes, codec: int, prev_block_offset: int, bytes_per_checksum: int = 16384) -> bytes:
    """A whole block: header, ``data`` compressed with ``codec``, CRC32C chunk checksums."""
    if codec == Codec.GZ:
        stored = _gzip(data)
    elif codec == Codec.NONE:
        stored = data
    else:
        raise FormatError(f"HFile compression codec {codec} is not supported for writing (GZ or NONE)")
    data_size = HEADER_SIZE + len(stored)
    chunks = -(-data_size // bytes_per_checksum)
    header = _HEADER.pack(magic, len(stored) + 4 * chunks, len(data), prev_block_offset, ChecksumType.CRC32C, bytes_per_checksum, data_size)
    body = header + stored
    sums = b"".join(_CHECKSUM.pack(_checksum(ChecksumType.CRC32C, body[i : i + bytes_per_checksum])) for i in range(0, data_size, bytes_per_checksum))
    return body + sums


# --------------------------------------------------------------------------------------
# block indexes
# --------------------------------------------------------------------------------------

_ENTRY = struct.Struct(">qi")


@dataclass(frozen=True)
class IndexEntry:
    """One index entry: the block at ``offset`` (``size`` bytes on disk, header included)
    whose keys start at or after ``key``."""

    offset: int
    size: int
    key: bytes

    @property
    def row(self) -> bytes:
        return key_row(self.key)


def decode_root_index(data: bytes, count: int, where: str) -> list[IndexEntry]:
    """The first ``count`` entries of a root index block (offset, size, VInt key length,
    key); what follows them (a multi-level index's mid-key data) is ignored."""
    out = []
    pos = 0
    try:
        for _ in range(count):
            offset, size = _ENTRY.unpack_from(data, pos)
            n, pos = read_hadoop_vlong(data, pos + _ENTRY.size)
            if n < 0 or pos + n > len(data):
                raise FormatError(f"{where}: index key of {n} bytes runs past the block")
            out.append(IndexEntry(offset, size, data[pos : pos + n]))
            pos += n
    except struct.error:
        raise FormatError(f"{where}: root index block holds fewer than {count} entries") from None
    return out


def encode_root_index(entries: list[IndexEntry]) -> bytes:
    return b"".join(_ENTRY.pack(e.offset, e.size) + write_hadoop_vint(len(e.key)) + e.key for e in entries)


def decode_non_root_index(data: bytes, where: str) -> list[IndexEntry]:
    """A leaf or intermediate index block: int32 entry count, int32 offsets of each entry
    (plus the end) relative to the entries, then (offset, size, key) per entry."""
    try:
        (count,) = struct.unpack_from(">i", data, 0)
        if count < 0 or 4 * (count + 2) > len(data):
            raise FormatError(f"{where}: index block claims {count} entries")
        rel = struct.unpack_from(f">{count + 1}i", data, 4)
        base = 4 * (count + 2)
        out = []
        for i in range(count):
            start, end = base + rel[i], base + rel[i + 1]
            if not start + _ENTRY.size <= end <= len(data):
                raise FormatError(f"{where}: index entry {i} runs past the block")
            offset, size = _ENTRY.unpack_from(data, start)
            out.append(IndexEntry(offset, size, data[start + _ENTRY.size : end]))
    except struct.error:
        raise FormatError(f"{where}: index block cut short") from None
    return out


def floor_entry(entries: list[IndexEntry], rows: list[bytes], row: bytes) -> IndexEntry | None:
    """The entry of the last block whose index key is at or before ``row`` (None when
    ``row`` sorts before the first block)."""
    i = bisect_right(rows, row) - 1
    return entries[i] if i >= 0 else None


def index_key_between(prev_last_row: bytes | None, first_key: bytes) -> bytes:
    """The index key HBase records for a block whose first key is ``first_key``, after a
    block ending with row ``prev_last_row``: the shortest row between the two as a
    "first on row" key (``HFileWriterImpl.getMidpoint``), or the first key itself for the
    first block or when the shortest row is the whole first row."""
    if prev_last_row is None:
        return first_key
    right = key_row(first_key)
    left = prev_last_row
    if left == right:  # one row spans the two blocks: HBase keeps the key itself
        return first_key
    common = min(len(left), len(right))
    i = 0
    while i < common and left[i] == right[i]:
        i += 1
    if i < common:
        # Java adds one to the signed byte and compares it with the unsigned one
        signed = left[i] - 256 if left[i] > 127 else left[i]
        if left[i] < 0xFF and signed + 1 < right[i]:
            return first_on_row_key(left[:i] + bytes([(left[i] + 1) & 0xFF]))
    return first_on_row_key(right[: i + 1])
