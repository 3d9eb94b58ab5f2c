"""Reading HFile v3 (metadata table base files and HFILE_DATA log block content).

:class:`HFileReader` opens a file from bytes or from a storage path (ranged reads: the
trailer, the load-on-open section, then only the blocks a call needs), and offers what
the metadata table asks of it: every entry in key order, a point lookup, many sorted
lookups, a key-prefix scan, the file info and the meta blocks (Hudi's ``bloomFilter``).

Keys are HBase KeyValue keys; the reader hands out their row, Hudi's record key, as str.
Lookups follow Apache Hudi's ``HFileReaderImpl``: the block index leads to the last block
whose index key is at or before the key (through leaf and intermediate index blocks when
the index has several levels), and only that block is read. Every block's checksums,
sizes and compression are verified before any of its entries is handed out; a damaged
file raises :class:`~hoodie.errors.FormatError` naming the file and the block's offset.
Iterating hands out entries block by block; :meth:`HFileReader.read_all` returns all of
them or raises.
"""
from __future__ import annotations

import dataclasses
import functools
import struct
from bisect import bisect_left
from collections.abc import Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from hoodie.errors import FormatError
from hoodie.formats.byte_source import ByteSource, FileSource, MemorySource
from hoodie.formats.hfile.batch_lookup import entry_starts, find_sorted, gather, row_array
from hoodie.formats.hfile.blocks import (
    DATA,
    FILE_INFO,
    HEADER_SIZE,
    INTERMEDIATE_INDEX,
    LEAF_INDEX,
    META,
    ROOT_INDEX,
    BlockHeader,
    IndexEntry,
    decode_block,
    decode_non_root_index,
    decode_root_index,
    floor_entry,
)
from hoodie.formats.hfile.encoding import Trailer, decode_delimited, decode_file_info, key_row, read_hadoop_vlong
from hoodie.storage.base import Storage, arrow_path

__all__ = ["TRAILER_MAGIC", "TRAILER_SIZE", "HFileReader"]

TRAILER_MAGIC = b'TRABLK"$'
TRAILER_SIZE = 4096  # HFile v3's fixed trailer
# find_rows reads the blocks it needs this many compressed bytes at a time (at least one)
FIND_ROWS_WINDOW_BYTES = 16 << 20
PBUF = b"PBUF"
_KV = struct.Struct(">ii")


@dataclass(frozen=True)
class _DataBlock:
    offset: int
    size: int  # on disk, header and checksums included
    rows: list[bytes]
    values: list[bytes]


class HFileReader:
    """An open HFile. Use as a context manager (or call :meth:`close`) when opened from
    storage. ``block_reads`` counts the blocks read after opening (data and index)."""

    def __init__(self, source: ByteSource, name: str) -> None:
        self.name = name
        self._src = source
        self.block_reads = 0
        self._index_cache: dict[int, tuple[list[IndexEntry], list[bytes]]] = {}
        self._last: _DataBlock | None = None
        try:
            self._open()
        except BaseException:
            source.close()
            raise

    @classmethod
    def from_bytes(cls, data: bytes, name: str = "<bytes>") -> HFileReader:
        return cls(MemorySource(bytes(data)), name)

    @classmethod
    def open(cls, storage: Storage, path: str) -> HFileReader:
        """The HFile at ``path``, read in ranges as calls need them."""
        fs, fpath = arrow_path(storage, path)
        return cls(FileSource(fs.open_input_file(fpath), storage.counters), path)

    def close(self) -> None:
        self._src.close()

    def __enter__(self) -> HFileReader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ----------------------------------------------------------------------------------
    # opening: trailer and load-on-open section

    def _where(self, offset: int) -> str:
        return f"{self.name}: HFile block at byte {offset}"

    def _open(self) -> None:
        size = self._src.size
        if size < TRAILER_SIZE:
            raise FormatError(f"{self.name}: {size} bytes is too short for an HFile v3 (trailer alone is {TRAILER_SIZE})")
        start = size - TRAILER_SIZE
        raw = self._src.read_at(start, TRAILER_SIZE)
        if raw[:8] != TRAILER_MAGIC:
            raise FormatError(f"{self.name}: no HFile trailer magic at byte {start}")
        version = int.from_bytes(raw[-4:], "big")
        major, minor = version & 0xFFFFFF, version >> 24
        if major != 3:
            raise FormatError(f"{self.name}: HFile major version {major} is not supported (only 3)")
        try:
            message, _ = decode_delimited(raw, 8)
            t = Trailer.decode(message)
        except FormatError as exc:
            raise FormatError(f"{self.name}: HFile trailer at byte {start}: {exc}") from None
        self.trailer = dataclasses.replace(t, major_version=major, minor_version=minor)
        if not 0 <= t.load_on_open_offset <= t.file_info_offset < start:
            raise FormatError(f"{self.name}: HFile trailer offsets {t.load_on_open_offset} and {t.file_info_offset} lie outside the file")
        # the load-on-open section (root data index, meta index, file info, ...) in one read
        section = self._src.read_at(t.load_on_open_offset, start - t.load_on_open_offset)
        root, pos = self._section_block(section, 0, ROOT_INDEX)
        self.root_index = decode_root_index(root, t.data_index_count, self._where(t.load_on_open_offset))
        meta, _ = self._section_block(section, pos, ROOT_INDEX)
        self.meta_index = {e.key.decode("utf-8", "replace"): e for e in decode_root_index(meta, t.meta_index_count, self._where(t.load_on_open_offset + pos))}
        info, _ = self._section_block(section, t.file_info_offset - t.load_on_open_offset, FILE_INFO)
        try:
            self.file_info = decode_file_info(info, PBUF)
        except FormatError as exc:
            raise FormatError(f"{self._where(t.file_info_offset)}: {exc}") from None
        self._root_rows = [e.row for e in self.root_index]
        version_bytes = self.file_info.get("KEY_VALUE_VERSION", b"")
        self._with_mvcc = len(version_bytes) == 4 and int.from_bytes(version_bytes, "big") == 1
        self._with_tags = "hfile.MAX_TAGS_LEN" in self.file_info or "MAX_TAGS_LEN" in self.file_info

    def _section_block(self, section: bytes, pos: int, magic: bytes) -> tuple[bytes, int]:
        where = self._where(self.trailer.load_on_open_offset + pos)
        header = BlockHeader.parse(section[pos : pos + HEADER_SIZE], where)
        _, data = decode_block(section[pos : pos + header.on_disk_size], self.trailer.codec, where, magic)
        return data, pos + header.on_disk_size

    # ----------------------------------------------------------------------------------
    # properties

    @property
    def entry_count(self) -> int:
        return self.trailer.entry_count

    @property
    def schema(self) -> str | None:
        """The Avro schema Hudi records under ``schema`` in the file info, if any."""
        raw = self.file_info.get("schema")
        return raw.decode() if raw is not None else None

    def meta_block(self, name: str) -> bytes | None:
        """The content of the meta block ``name`` (e.g. ``bloomFilter``), or None."""
        entry = self.meta_index.get(name)
        if entry is None:
            return None
        return self._read_block(entry.offset, entry.size, META)[1]

    # ----------------------------------------------------------------------------------
    # blocks

    def _read_block(self, offset: int, size: int | None, magic: bytes | tuple[bytes, ...] | None) -> tuple[BlockHeader, bytes]:
        return self._decode(offset, self._raw_block(offset, size), magic)

    def _raw_block(self, offset: int, size: int | None) -> bytes:
        """The block at ``offset`` as stored (``size`` bytes; when not given, as its
        header says), read but not checked."""
        where = self._where(offset)
        if offset < 0 or offset >= self._src.size - TRAILER_SIZE:
            raise FormatError(f"{where}: offset lies outside the file's blocks")
        self.block_reads += 1
        if size is None:
            head = self._src.read_at(offset, HEADER_SIZE)
            size = BlockHeader.parse(head, where).on_disk_size
            return head + self._src.read_at(offset + HEADER_SIZE, size - HEADER_SIZE)
        return self._src.read_at(offset, size)

    def _decode(self, offset: int, raw: bytes, magic: bytes | tuple[bytes, ...] | None) -> tuple[BlockHeader, bytes]:
        """The header and data of the block read at ``offset``, checked (no state: blocks
        are decoded on worker threads too)."""
        where = self._where(offset)
        header, data = decode_block(raw, self.trailer.codec, where, magic)
        if header.on_disk_size != len(raw):
            raise FormatError(f"{where}: block is {header.on_disk_size} bytes on disk, its index says {len(raw)}")
        return header, data

    def _data_block(self, offset: int, size: int | None) -> _DataBlock:
        """The data block at ``offset``, parsed; the last one stays at hand, so lookups
        landing in the same block read it once."""
        if self._last is not None and self._last.offset == offset:
            return self._last
        header, data = self._read_block(offset, size, DATA)
        rows, values = self._parse_entries(data, offset)
        self._last = _DataBlock(offset, header.on_disk_size, rows, values)
        return self._last

    def _parse_entries(self, data: bytes, offset: int) -> tuple[list[bytes], list[bytes]]:
        rows: list[bytes] = []
        values: list[bytes] = []
        pos, end = 0, len(data)
        mvcc, tags = self._with_mvcc, self._with_tags
        try:
            while pos < end:
                klen, vlen = _KV.unpack_from(data, pos)
                kstart = pos + 8
                vstart = kstart + klen
                pos = vstart + vlen
                if klen < 2 or vlen < 0 or pos > end:
                    raise FormatError(f"entry {len(rows)} (key {klen} bytes, value {vlen} bytes) runs past the block")
                rows.append(key_row(data[kstart:vstart]))
                values.append(data[vstart:pos])
                if tags:
                    pos += 2 + int.from_bytes(data[pos : pos + 2], "big")
                if mvcc:
                    _, pos = read_hadoop_vlong(data, pos)
            if pos != end:
                raise FormatError("last entry runs past the block")
        except (FormatError, struct.error) as exc:
            raise FormatError(f"{self._where(offset)}: {exc or 'entry cut short'}") from None
        return rows, values

    def _index_block(self, entry: IndexEntry) -> tuple[list[IndexEntry], list[bytes]]:
        cached = self._index_cache.get(entry.offset)
        if cached is None:
            _, data = self._read_block(entry.offset, entry.size, (LEAF_INDEX, INTERMEDIATE_INDEX))
            entries = decode_non_root_index(data, self._where(entry.offset))
            cached = self._index_cache[entry.offset] = (entries, [e.row for e in entries])
        return cached

    def _block_for(self, row: bytes) -> IndexEntry | None:
        """The index entry of the data block that holds ``row`` if any block does."""
        entry = floor_entry(self.root_index, self._root_rows, row)
        for _ in range(self.trailer.num_data_index_levels - 1):
            if entry is None:
                return None
            entries, rows = self._index_block(entry)
            entry = floor_entry(entries, rows, row)
        return entry

    def _data_blocks_from(self, offset: int, size: int | None) -> Iterator[_DataBlock]:
        """Data blocks in file order from the one at ``offset``, skipping the inline index
        and bloom blocks between them."""
        last = self.trailer.last_data_block_offset
        while offset <= last:
            block = self._data_block(offset, size)
            yield block
            offset += block.size
            size = None
            while offset <= last:
                head = BlockHeader.parse(self._src.read_at(offset, HEADER_SIZE), self._where(offset))
                if head.magic == DATA:
                    size = head.on_disk_size
                    break
                offset += head.on_disk_size

    # ----------------------------------------------------------------------------------
    # reading entries

    def __iter__(self) -> Iterator[tuple[str, bytes]]:
        return self.items()

    def items(self) -> Iterator[tuple[str, bytes]]:
        """Every (record key, value) in file order; each block is verified before its
        entries are handed out."""
        if self.entry_count == 0:
            return
        for block in self._data_blocks_from(self.trailer.first_data_block_offset, None):
            yield from zip(self._keys(block.rows, block.offset), block.values)

    def read_all(self) -> list[tuple[str, bytes]]:
        """Every entry, or a FormatError and nothing."""
        out = list(self.items())
        if len(out) != self.entry_count:
            raise FormatError(f"{self.name}: HFile holds {len(out)} entries, its trailer says {self.entry_count}")
        return out

    def _keys(self, rows: list[bytes], offset: int) -> list[str]:
        try:
            return [r.decode("utf-8") for r in rows]
        except UnicodeDecodeError:
            raise FormatError(f"{self._where(offset)}: a key is not UTF-8") from None

    def get(self, key: str) -> bytes | None:
        """The value of ``key`` (the first entry of that key), or None."""
        row = key.encode()
        entry = self._block_for(row) if self.entry_count else None
        if entry is None:
            return None
        block = self._data_block(entry.offset, entry.size)
        i = bisect_left(block.rows, row)
        return block.values[i] if i < len(block.rows) and block.rows[i] == row else None

    def get_many(self, keys: Iterable[str]) -> dict[str, bytes]:
        """The values of those of ``keys`` (sorted ascending) the file holds: :meth:`find_rows`
        for keys without NUL bytes, one :meth:`get` a key for the others."""
        asked = list(keys)
        rows = [key.encode() for key in asked]
        for i in range(1, len(rows)):
            if rows[i] < rows[i - 1]:
                raise FormatError(f"{self.name}: keys to look up must be sorted: {asked[i]!r} after {asked[i - 1]!r}")
        # numpy's S strings ignore trailing NUL bytes: keys holding one are looked up one by one
        if b"\x00" in b"".join(rows):
            return {k: v for k in asked if (v := self.get(k)) is not None}
        lengths = np.fromiter((len(r) for r in rows), dtype=np.int64, count=len(rows))
        which, values = self.find_rows(row_array(rows), lengths)
        return dict(zip([asked[w] for w in which.tolist()], values.to_pylist()))

    def find_rows(self, wanted: np.ndarray, lengths: np.ndarray, workers: int = 1) -> tuple[np.ndarray, pa.LargeBinaryArray]:
        """Of the ``wanted`` rows (a sorted numpy ``S`` array without NUL bytes, ``lengths``
        their lengths in bytes): the positions of those the file holds, in order, and
        their values (the first entry of a row; a ``large_binary`` array). Each block holding one of them is read
        once, the others not at all; with a one-level index the rows are dealt to blocks
        by one binary search, and each block's entries are located and compared with numpy
        (:mod:`.batch_lookup`): only the values found are copied out, however many
        entries the block holds. With ``workers`` > 1 the blocks read are decompressed and
        searched on that many threads (zlib and numpy release the GIL); the file is read
        on the calling thread."""
        if len(wanted) == 0 or self.entry_count == 0:
            return np.zeros(0, np.int64), pa.array([], pa.large_binary())
        if self.trailer.num_data_index_levels != 1 or b"\x00" in b"".join(self._root_rows):
            found = [(i, v) for i, row in enumerate(wanted.tolist()) if (v := self.get(row.decode())) is not None]
            return np.array([i for i, _ in found], np.int64), pa.array([v for _, v in found], pa.large_binary())
        width = max(wanted.dtype.itemsize, self._root_array.dtype.itemsize)
        # the block whose first key is the last at or before each row (-1: before all)
        block_of = np.searchsorted(self._root_array.astype(f"S{width}"), wanted.astype(f"S{width}"), side="right") - 1
        cuts = [0, *(np.flatnonzero(np.diff(block_of)) + 1).tolist(), len(wanted)]

        def search(item: tuple[int, int, int, bytes]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
            lo, hi, offset, raw = item
            which, data, sizes = self._find_in_block(offset, raw, wanted[lo:hi], lengths[lo:hi])
            return which + lo, data, sizes

        pool = ThreadPoolExecutor(workers, thread_name_prefix="hoodie-hfile") if workers > 1 else None
        parts: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
        try:
            # the touched blocks a window at a time, so that the compressed bytes held at
            # once stay bounded however much of a large file the rows touch
            window: list[tuple[int, int, int, bytes]] = []
            held = 0
            for lo, hi in zip(cuts[:-1], cuts[1:]):
                if block_of[lo] >= 0:
                    entry = self.root_index[int(block_of[lo])]
                    window.append((lo, hi, entry.offset, self._raw_block(entry.offset, entry.size)))
                    held += entry.size
                if window and (held >= FIND_ROWS_WINDOW_BYTES or hi == len(wanted)):
                    parts.extend(pool.map(search, window) if pool is not None and len(window) > 1 else map(search, window))
                    window, held = [], 0
        finally:
            if pool is not None:
                pool.shutdown()
        which = np.concatenate([p[0] for p in parts]) if parts else np.zeros(0, np.int64)
        data = np.concatenate([p[1] for p in parts]) if parts else np.zeros(0, np.uint8)
        sizes = np.concatenate([p[2] for p in parts]) if parts else np.zeros(0, np.int64)
        offsets = np.r_[0, np.cumsum(sizes)].astype(np.int64)
        values = pa.LargeBinaryArray.from_buffers(pa.large_binary(), len(sizes), [None, pa.py_buffer(offsets), pa.py_buffer(data)])
        return which, values

    def _find_in_block(self, offset: int, raw: bytes, wanted: np.ndarray, lengths: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The wanted rows a data block holds: their positions in ``wanted``, their values'
        bytes one after another, and each value's size."""
        _, data = self._decode(offset, raw, DATA)
        block = np.frombuffer(data, dtype=np.uint8)
        starts = entry_starts(block, self._with_tags, self._with_mvcc)
        if starts is None:  # entry by entry (and its errors, for a damaged block)
            rows_in, values = self._parse_entries(data, offset)
            found = []
            for i, row in enumerate(wanted.tolist()):
                j = bisect_left(rows_in, row)
                if j < len(rows_in) and rows_in[j] == row:
                    found.append((i, values[j]))
            sizes = np.array([len(v) for _, v in found], np.int64)
            return np.array([i for i, _ in found], np.int64), np.frombuffer(b"".join(v for _, v in found), np.uint8), sizes
        which, begin, end = find_sorted(block, starts, wanted, lengths)
        return which, gather(block, begin, end), end - begin

    @functools.cached_property
    def _root_array(self) -> np.ndarray:
        return row_array(self._root_rows)

    def scan_prefix(self, prefix: str) -> Iterator[tuple[str, bytes]]:
        """Every (record key, value) whose key starts with ``prefix``, in key order."""
        row = prefix.encode()
        if self.entry_count == 0:
            return
        entry = self._block_for(row)
        start = entry.offset if entry is not None else self.trailer.first_data_block_offset
        size = entry.size if entry is not None else None
        for block in self._data_blocks_from(start, size):
            i = bisect_left(block.rows, row)
            for j in range(i, len(block.rows)):
                r = block.rows[j]
                if not r.startswith(row):
                    return
                yield self._keys([r], block.offset)[0], block.values[j]

    def scan_prefixes(self, prefixes: Iterable[str]) -> Iterator[tuple[str, bytes]]:
        """:meth:`scan_prefix` for each of ``prefixes`` in turn (sorted: blocks are reused)."""
        for prefix in prefixes:
            yield from self.scan_prefix(prefix)
