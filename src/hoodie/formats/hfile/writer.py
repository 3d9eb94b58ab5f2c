"""Writing HFile v3 as Apache Hudi writes the metadata table's files (HBase 2.4's
``HFileWriterImpl`` under Hudi's ``HoodieAvroHFileWriter`` and HFILE_DATA log blocks).

Layout, in file order: data blocks (``DATABLK*``, a block is closed once its entries
reach the block size, before the next entry is added), meta blocks (``METABLKc``, e.g.
Hudi's ``bloomFilter``, sorted by name), the load-on-open section (one-level root data
index ``IDXROOT2`` whose keys are HBase's shortened "midpoint" keys, the meta index, the
file info ``FILEINF2``), then the 4096-byte trailer, major version 3, minor 3. Every
block is compressed with the file's codec (GZ by default, as Java's ``GZIPOutputStream``
writes it) and carries CRC32C checksums per 16 KiB chunk. Given the same entries, file
info and block size, the bytes are those Apache Hudi writes.

Keys must come sorted (by their UTF-8 bytes) and unique: a key out of order raises
:class:`~hoodie.errors.FormatError` naming it, before anything is written.
"""
from __future__ import annotations

import struct
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from hoodie.errors import FormatError
from hoodie.formats.bloom import BloomFilter, serialized_text
from hoodie.formats.hfile.blocks import (
    DATA,
    FILE_INFO,
    HEADER_SIZE,
    META,
    ROOT_INDEX,
    Codec,
    IndexEntry,
    encode_block,
    encode_root_index,
    index_key_between,
)
from hoodie.formats.hfile.encoding import Trailer, encode_file_info, make_key, write_varint
from hoodie.formats.hfile.reader import PBUF, TRAILER_MAGIC, TRAILER_SIZE
from hoodie.storage.base import Storage

__all__ = [
    "BLOOM_FILTER_BLOCK",
    "DEFAULT_BLOCK_SIZE",
    "HUDI_COMPARATOR",
    "HFileSettings",
    "encode_hfile",
    "write_hfile",
]

#: ``hoodie.hfile.block.size``'s default, also the block size of HFILE_DATA log blocks.
DEFAULT_BLOCK_SIZE = 1024 * 1024
#: The comparator class Hudi records in the trailer of the files it writes.
HUDI_COMPARATOR = "org.apache.hudi.io.storage.HoodieHBaseKVComparator"
#: Meta block and file info names of Hudi's ``HoodieAvroHFileWriter``.
BLOOM_FILTER_BLOCK = "bloomFilter"
SCHEMA_KEY = "schema"
BLOOM_TYPE_CODE_KEY = "bloomFilterTypeCode"
MIN_RECORD_KEY = "minRecordKey"
MAX_RECORD_KEY = "maxRecordKey"

_INT = struct.Struct(">i")
_LONG = struct.Struct(">q")
_KV = struct.Struct(">ii")
_MVCC_ZERO = b"\x00"  # each entry's memstore timestamp, a Hadoop VLong 0


@dataclass(frozen=True)
class HFileSettings:
    """How a file is cut into blocks and compressed."""

    block_size: int = DEFAULT_BLOCK_SIZE
    codec: Codec = Codec.GZ
    bytes_per_checksum: int = 16384
    comparator: str = HUDI_COMPARATOR

    def __post_init__(self) -> None:
        if self.block_size <= 0:
            raise FormatError(f"HFile block size must be positive, got {self.block_size}")
        if self.codec not in (Codec.GZ, Codec.NONE):
            raise FormatError(f"HFile codec {self.codec!r} cannot be written (GZ or NONE)")
        if self.bytes_per_checksum <= 0:
            raise FormatError(f"bytes per checksum must be positive, got {self.bytes_per_checksum}")


@dataclass
class _Out:
    settings: HFileSettings
    buf: bytearray = field(default_factory=bytearray)
    uncompressed: int = 0  # the trailer's total uncompressed bytes, headers included

    def block(self, magic: bytes, data: bytes, prev: int, counted: bool = True) -> tuple[int, int]:
        offset = len(self.buf)
        self.buf += encode_block(magic, data, self.settings.codec, prev, self.settings.bytes_per_checksum)
        if counted:
            self.uncompressed += HEADER_SIZE + len(data)
        return offset, len(self.buf) - offset


def encode_hfile(
    entries: Iterable[tuple[str, bytes]],
    settings: HFileSettings = HFileSettings(),
    *,
    schema: str | None = None,
    bloom_filter: BloomFilter | None = None,
    file_info: Mapping[str, bytes] | None = None,
    meta_blocks: Mapping[str, bytes] | None = None,
) -> bytes:
    """An HFile holding ``entries`` ((record key, value), sorted, unique).

    ``schema`` goes into the file info under ``schema`` (Hudi's Avro schema of the
    values); a ``bloom_filter`` (holding the keys) becomes the ``bloomFilter`` meta block,
    with ``bloomFilterTypeCode``, ``minRecordKey`` and ``maxRecordKey`` in the file info;
    ``file_info`` and ``meta_blocks`` add entries and blocks of the caller's.
    """
    out = _Out(settings)
    index: list[IndexEntry] = []
    block = bytearray()
    block_first_key = b""
    prev_block_last_row: bytes | None = None
    last_row: bytes | None = None
    first_row: bytes | None = None
    last_key = b""
    prev_data = -1
    count = key_bytes = value_bytes = 0

    def finish_block() -> None:
        nonlocal prev_data, prev_block_last_row
        offset, size = out.block(DATA, bytes(block), prev_data)
        index.append(IndexEntry(offset, size, index_key_between(prev_block_last_row, block_first_key)))
        prev_data = offset
        prev_block_last_row = last_row
        block.clear()

    for key, value in entries:
        row = key.encode("utf-8")
        if last_row is not None and row <= last_row:
            what = "repeats" if row == last_row else "sorts before the previous key"
            raise FormatError(f"HFile keys must be sorted and unique: {key!r} {what} ({last_row.decode()!r})")
        if len(block) >= settings.block_size:
            finish_block()
        kv_key = make_key(row)
        if not block:
            block_first_key = kv_key
        block += _KV.pack(len(kv_key), len(value)) + kv_key + value + _MVCC_ZERO
        if first_row is None:
            first_row = row
        last_row, last_key = row, kv_key
        count += 1
        key_bytes += len(kv_key)
        value_bytes += len(value)
    if block:
        finish_block()
    first_data = index[0].offset if index else -1
    last_data = index[-1].offset if index else -1

    metas = dict(meta_blocks or {})
    info: dict[str, bytes] = {}
    if schema is not None:
        info[SCHEMA_KEY] = schema.encode()
    if bloom_filter is not None:
        metas[BLOOM_FILTER_BLOCK] = serialized_text(bloom_filter)
        info[BLOOM_TYPE_CODE_KEY] = bloom_filter.type_code.encode()
        info[MIN_RECORD_KEY] = first_row or b""
        info[MAX_RECORD_KEY] = last_row or b""
    info.update(file_info or {})
    meta_index: list[IndexEntry] = []
    prev_meta = -1
    for name in sorted(metas, key=lambda n: n.encode()):
        offset, size = out.block(META, metas[name], prev_meta)
        meta_index.append(IndexEntry(offset, size, name.encode()))
        prev_meta = offset

    # load-on-open: the data root index (not counted in the total, as HBase does not),
    # the meta index, the file info
    root_data = encode_root_index(index)
    root_offset, _ = out.block(ROOT_INDEX, root_data, -1, counted=False)
    out.block(ROOT_INDEX, encode_root_index(meta_index), root_offset)
    if count:
        info["hfile.LASTKEY"] = last_key
    info["hfile.AVG_KEY_LEN"] = _INT.pack(key_bytes // count if count else 0)
    info["hfile.CREATE_TIME_TS"] = _LONG.pack(0)  # HBase records 0 unless a store sets it
    info["hfile.AVG_VALUE_LEN"] = _INT.pack(value_bytes // count if count else 0)
    info["MAX_MEMSTORE_TS_KEY"] = _LONG.pack(0)
    info["KEY_VALUE_VERSION"] = _INT.pack(1)
    file_info_offset, _ = out.block(FILE_INFO, encode_file_info(info, PBUF), -1)

    trailer = Trailer(
        file_info_offset=file_info_offset,
        load_on_open_offset=root_offset,
        uncompressed_data_index_size=len(root_data),
        total_uncompressed_bytes=out.uncompressed + TRAILER_SIZE,
        data_index_count=len(index),
        meta_index_count=len(meta_index),
        entry_count=count,
        num_data_index_levels=1,
        first_data_block_offset=first_data,
        last_data_block_offset=last_data,
        comparator=settings.comparator,
        codec=int(settings.codec),
    )
    message = trailer.encode()
    body = TRAILER_MAGIC + write_varint(len(message)) + message
    version = _INT.pack(trailer.minor_version << 24 | trailer.major_version)
    out.buf += body + bytes(TRAILER_SIZE - len(body) - len(version)) + version
    return bytes(out.buf)


def write_hfile(
    storage: Storage,
    path: str,
    entries: Iterable[tuple[str, bytes]],
    settings: HFileSettings = HFileSettings(),
    *,
    schema: str | None = None,
    bloom_filter: BloomFilter | None = None,
    file_info: Mapping[str, bytes] | None = None,
) -> int:
    """Write a new HFile at ``path`` (write-once: an existing file is an error); the
    file appears whole or not at all. Returns its size in bytes."""
    data = encode_hfile(entries, settings, schema=schema, bloom_filter=bloom_filter, file_info=file_info)
    storage.create_new(path, data)
    return len(data)
