"""Reading log files block by block, with Java's handling of partial and corrupt blocks.

This module owns walking a log file: finding each block, checking its frame, reporting
the bytes that do not frame a block as :class:`~.blocks.CorruptBlock`, and decoding the
content of the blocks asked for.

**Corrupt blocks** follow ``HoodieLogFileReader`` (``readBlock``/``isBlockCorrupted``/
``createCorruptBlock``). A block at a ``#HUDI#`` magic is well framed when

1. its 8-byte block length is there and the block ends inside the file,
2. its trailing total length equals block length + 6, and
3. the block is followed by another magic or by the end of the file (fewer than 6 bytes
   left counts as the end, as Java's ``readMagic`` hits EOF there).

Otherwise the reader scans forward from just after that magic for the next ``#HUDI#`` and
reports everything up to it (or to the end of the file) as one CorruptBlock, then goes
on. Note rule 3: a complete block followed by garbage is itself reported corrupt, exactly
as Java does. Deviations, all towards "never fatal": bytes at the very start that are not
a magic, and a tail shorter than a magic, are reported as CorruptBlock (Java raises on the
former and ignores the latter); Java skips the check on object stores, this reader always
checks (a complete object passes it anyway).

A well-framed block whose inside is inconsistent (a header running past the block, an
unknown block type, Avro that does not match its schema) cannot come from a crash — the
trailing length is written last — so it raises :class:`~hoodie.errors.FormatError`
instead of silently losing data.

**Memory**: files up to ``whole_file_limit`` bytes (default 8 MiB) are read in one call —
one request on object stores, and most log files are that small — and parsed from memory.
Larger files stay open as a pyarrow random-access file: the reader fetches a block's
frame fields, then its content only when the block is decoded, so one block at a time is
held, never the file. :meth:`LogFileReader.scan` lists blocks (headers only) without
reading or decoding any content, so a merger can apply rollbacks and instant filters
before paying for decoding.
"""
from __future__ import annotations

import struct
from collections.abc import Iterator

from hoodie.errors import FormatError
from hoodie.formats.byte_source import ByteSource, FileSource, MemorySource
from hoodie.formats.log.blocks import BlockType, CorruptBlock, HeaderKey, LogBlock
from hoodie.formats.log.content import decode_content
from hoodie.formats.log.framing import (
    MAGIC,
    MIN_BLOCK_LENGTH,
    PREFIX_SIZE,
    BlockInfo,
    NeedMoreBytes,
    parse_block_head,
    parse_footer,
)
from hoodie.storage.base import Storage, arrow_path

__all__ = [
    "WHOLE_FILE_LIMIT",
    "LogFileReader",
    "first_block_instant",
    "iter_log_file",
    "read_log_bytes",
    "read_log_file",
]

WHOLE_FILE_LIMIT = 8 * 1024 * 1024
_HEAD_READ = 16 * 1024  # first read of a block's frame; grows x4 for wider SCHEMA headers
_I64 = struct.Struct(">q")


class LogFileReader:
    """An open log file. Iterate it for decoded blocks, or :meth:`scan` it for headers.

    Use as a context manager (or call :meth:`close`) when the file may be large.
    """

    def __init__(self, storage: Storage, path: str, *, whole_file_limit: int = WHOLE_FILE_LIMIT) -> None:
        fs, fpath = arrow_path(storage, path)
        storage.counters.bump("read")
        handle = fs.open_input_file(fpath)
        size = handle.size()
        self.name = path
        if size <= whole_file_limit:
            try:
                self._source: ByteSource = MemorySource(handle.read_at(size, 0) if size else b"")
            finally:
                handle.close()
        else:
            self._source = FileSource(handle)

    @classmethod
    def from_bytes(cls, data: bytes, name: str = "<bytes>") -> LogFileReader:
        """A reader over a log file's bytes already in memory."""
        reader = cls.__new__(cls)
        reader.name = name
        reader._source = MemorySource(bytes(data))
        return reader

    @property
    def size(self) -> int:
        return self._source.size

    def close(self) -> None:
        self._source.close()

    def __enter__(self) -> LogFileReader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ----------------------------------------------------------------------------------

    def scan(self) -> Iterator[BlockInfo | CorruptBlock]:
        """Every block of the file in order, as :class:`BlockInfo` (frame and header only,
        content neither read nor decoded) or :class:`CorruptBlock`."""
        src = self._source
        pos = 0
        while pos < src.size:
            head = src.read_at(pos, PREFIX_SIZE)
            if head[: len(MAGIC)] != MAGIC:
                if len(head) < len(MAGIC):
                    yield CorruptBlock(pos, src.size - pos, "end of file shorter than a block magic")
                    return
                nxt = src.find(MAGIC, pos + 1)
                end = nxt if nxt >= 0 else src.size
                yield CorruptBlock(pos, end - pos, "bytes without a block magic")
                pos = end
                continue
            found = self._frame(pos, head)
            yield found
            pos = found.offset + (found.length if isinstance(found, CorruptBlock) else found.size)

    def read_content(self, info: BlockInfo) -> bytes:
        """The content bytes of a block found by :meth:`scan`, not decoded
        (:func:`decode_block` decodes them)."""
        content = self._source.read_at(info.content_offset, info.content_length)
        if len(content) != info.content_length:
            raise FormatError(f"{self.name}: block at {info.offset} was cut short while reading")
        return content

    def read_block(self, info: BlockInfo) -> LogBlock:
        """Read and decode the content of a block found by :meth:`scan`."""
        if info.block_type is BlockType.CORRUPT:
            return CorruptBlock(info.offset, info.size, "block declares the type CORRUPT")
        return decode_block(self.name, info, self.read_content(info))

    def blocks(self) -> Iterator[LogBlock]:
        """Every block decoded, in file order, one at a time."""
        for found in self.scan():
            yield found if isinstance(found, CorruptBlock) else self.read_block(found)

    def __iter__(self) -> Iterator[LogBlock]:
        return self.blocks()

    # ----------------------------------------------------------------------------------

    def _corrupt(self, pos: int, reason: str) -> CorruptBlock:
        """The corrupt region starting at the magic at ``pos``: up to the next magic or EOF."""
        src = self._source
        version = src.read_at(pos + PREFIX_SIZE, 4)
        if version == b"\x00\x00\x00\x00":
            reason += " (log format version 0, Hudi < 0.4, has no trailing length and is not supported)"
        nxt = src.find(MAGIC, pos + len(MAGIC))
        end = nxt if nxt >= 0 else src.size
        return CorruptBlock(pos, end - pos, reason)

    def _frame(self, pos: int, head: bytes) -> BlockInfo | CorruptBlock:
        src = self._source
        if len(head) < PREFIX_SIZE:
            return self._corrupt(pos, "block length cut off by the end of the file")
        (block_length,) = _I64.unpack_from(head, len(MAGIC))
        end = pos + PREFIX_SIZE + block_length
        if block_length < MIN_BLOCK_LENGTH:
            return self._corrupt(pos, f"block length {block_length} is too small")
        if end > src.size:
            return self._corrupt(pos, f"block length {block_length} runs past the end of the file")
        trailer = src.read_at(end - 8, 8)
        (total,) = _I64.unpack_from(trailer)
        if total != block_length + len(MAGIC):
            return self._corrupt(pos, f"trailing length {total} does not match block length {block_length}")
        after = src.read_at(end, len(MAGIC))
        if len(after) == len(MAGIC) and after != MAGIC:
            return self._corrupt(pos, "block is not followed by a block magic or the end of the file")
        want = min(end - pos, _HEAD_READ)
        while True:
            buf = src.read_at(pos, want)
            try:
                version, block_type, header, content_offset, content_length = parse_block_head(buf, pos, block_length)
                break
            except NeedMoreBytes:
                if want >= end - pos:
                    raise FormatError(f"{self.name}: block at byte {pos} cannot be parsed") from None
                want = min(end - pos, want * 4)
            except FormatError as exc:
                raise FormatError(f"{self.name}: {exc}") from exc
        footer_start = content_offset + content_length
        try:
            footer = parse_footer(src.read_at(footer_start, end - 8 - footer_start), footer_start)
        except (FormatError, NeedMoreBytes) as exc:
            raise FormatError(f"{self.name}: block at byte {pos}: {exc or 'footer cut short'}") from None
        return BlockInfo(pos, end - pos, version, block_type, header, content_offset, content_length, footer)


def decode_block(path: str, info: BlockInfo, content: bytes) -> LogBlock:
    """The block of a frame found by :meth:`LogFileReader.scan` in the file at ``path``
    and its content; a :class:`FormatError` names the file and the block's offset."""
    try:
        return decode_content(info.block_type, info.header, info.footer, content)
    except FormatError as exc:
        raise FormatError(f"{path}: {info.block_type.name} block at byte {info.offset}: {exc}") from exc


def iter_log_file(storage: Storage, path: str, *, whole_file_limit: int = WHOLE_FILE_LIMIT) -> Iterator[LogBlock]:
    """The blocks of the log file at ``path``, decoded one at a time as iterated."""
    with LogFileReader(storage, path, whole_file_limit=whole_file_limit) as reader:
        yield from reader.blocks()


def read_log_file(storage: Storage, path: str, *, whole_file_limit: int = WHOLE_FILE_LIMIT) -> list[LogBlock]:
    """Every block of the log file at ``path`` (corrupt regions as :class:`CorruptBlock`)."""
    return list(iter_log_file(storage, path, whole_file_limit=whole_file_limit))


def first_block_instant(storage: Storage, path: str) -> str | None:
    """The ``INSTANT_TIME`` of the first block of the log file at ``path`` (only its frame
    and header are read): "" for a whole block without one, None when the file is empty
    or its first block is torn."""
    with LogFileReader(storage, path) as reader:
        for found in reader.scan():
            return None if isinstance(found, CorruptBlock) else found.header.get(HeaderKey.INSTANT_TIME, "")
    return None


def read_log_bytes(data: bytes) -> list[LogBlock]:
    """Every block of a log file held in memory."""
    with LogFileReader.from_bytes(data) as reader:
        return list(reader.blocks())
