"""The byte layout of one log block around its content (all integers big-endian).

This module owns the frame, not the content of any block type::

    magic "#HUDI#"                 6
    block length                   8   = whole block − 14 (everything after this field)
    log format version (1)         4
    block type ordinal             4
    header                         int32 count, then (int32 key, int32 length, UTF-8) each
    content length                 8
    content                        var
    footer                         same encoding as the header (Java writes count 0)
    total block length             8   = whole block − 8 = block length + 6

as Java's ``HoodieLogFormatWriter.appendBlocks`` writes it. Format version 0 (Hudi before
0.4) had no type, header, footer or trailing length; it is recognised, not decoded.
"""
from __future__ import annotations

import struct
from collections.abc import Mapping
from dataclasses import dataclass, field

from hoodie.errors import FormatError
from hoodie.formats.log.blocks import BlockType, Header, HeaderKey

__all__ = [
    "BlockInfo",
    "LOG_FORMAT_VERSION",
    "MAGIC",
    "NeedMoreBytes",
    "decode_metadata",
    "encode_metadata",
    "frame_block",
    "parse_block_head",
]

MAGIC = b"#HUDI#"
LOG_FORMAT_VERSION = 1

_I32 = struct.Struct(">i")
_I64 = struct.Struct(">q")
# magic + block length: the part of a block outside its "block length".
PREFIX_SIZE = len(MAGIC) + 8
# version + type + header count + content length + footer count + total length
MIN_BLOCK_LENGTH = 4 + 4 + 4 + 8 + 4 + 8


class NeedMoreBytes(Exception):
    """Internal: a parse ran off the end of a partial buffer that the block extends past."""


@dataclass(frozen=True)
class BlockInfo:
    """Where a well-framed block sits in its file, and its header (content not read).

    ``offset`` is the position of the block's magic, ``size`` its total length in bytes;
    ``content_offset``/``content_length`` locate the content in the file.
    """

    offset: int
    size: int
    format_version: int
    block_type: BlockType
    header: Header
    content_offset: int
    content_length: int
    footer: Header = field(default_factory=dict)

    @property
    def end(self) -> int:
        return self.offset + self.size

    @property
    def instant_time(self) -> str | None:
        return self.header.get(HeaderKey.INSTANT_TIME)


def encode_metadata(entries: Mapping[HeaderKey, str]) -> bytes:
    """A header or footer map, entries in the mapping's iteration order."""
    parts = [_I32.pack(len(entries))]
    for key, value in entries.items():
        raw = value.encode("utf-8")
        parts.append(_I32.pack(int(key)))
        parts.append(_I32.pack(len(raw)))
        parts.append(raw)
    return b"".join(parts)


def decode_metadata(buf: bytes, pos: int, limit: int) -> tuple[Header, int]:
    """A header or footer map at ``pos``, not reading past ``limit``; returns (map, end).

    Raises :class:`NeedMoreBytes` when ``buf`` ends before ``limit`` and the map needs
    more, :class:`FormatError` when the map overruns ``limit``.
    """

    def need(n: int) -> None:
        if pos + n > limit:
            raise FormatError(f"header/footer entry at {pos} runs past the block end")
        if pos + n > len(buf):
            raise NeedMoreBytes

    need(4)
    (count,) = _I32.unpack_from(buf, pos)
    pos += 4
    if count < 0:
        raise FormatError(f"negative header/footer entry count {count}")
    out: Header = {}
    for _ in range(count):
        need(8)
        key, length = struct.unpack_from(">ii", buf, pos)
        pos += 8
        if length < 0:
            raise FormatError(f"negative header/footer value length {length}")
        try:
            header_key = HeaderKey(key)
        except ValueError:
            raise FormatError(f"unknown header/footer key ordinal {key}") from None
        need(length)
        try:
            out[header_key] = bytes(buf[pos : pos + length]).decode("utf-8")
        except UnicodeDecodeError as exc:
            raise FormatError(f"header {header_key.name} is not UTF-8: {exc}") from exc
        pos += length
    return out, pos


def frame_block(
    block_type: BlockType | int,
    header: Mapping[HeaderKey, str],
    content: bytes | bytearray,
    footer: Mapping[HeaderKey, str] | None = None,
) -> bytes:
    """The complete bytes of one block (format version 1) around ``content``."""
    header_bytes = encode_metadata(header)
    footer_bytes = encode_metadata(footer or {})
    block_length = 4 + 4 + len(header_bytes) + 8 + len(content) + len(footer_bytes) + 8
    return b"".join(
        (
            MAGIC,
            _I64.pack(block_length),
            _I32.pack(LOG_FORMAT_VERSION),
            _I32.pack(int(block_type)),
            header_bytes,
            _I64.pack(len(content)),
            content,
            footer_bytes,
            _I64.pack(block_length + len(MAGIC)),
        )
    )


def parse_block_head(buf: bytes, offset: int, block_length: int) -> tuple[int, BlockType, Header, int, int]:
    """Version, type, header and content location of a well-framed block.

    ``buf`` holds the file's bytes from the block's magic (at file position ``offset``) on,
    possibly only a prefix of the block. Returns ``(format_version, block_type, header,
    content_offset, content_length)`` with file positions. Raises :class:`NeedMoreBytes`
    if ``buf`` is too short, :class:`FormatError` if the parts do not fit the block.
    """
    limit = PREFIX_SIZE + block_length - 8  # the trailing total length is not part of the body
    pos = PREFIX_SIZE
    if pos + 8 > len(buf):
        raise NeedMoreBytes
    version, type_ordinal = struct.unpack_from(">ii", buf, pos)
    pos += 8
    if version != LOG_FORMAT_VERSION:
        raise FormatError(f"log block at {offset} has unsupported log format version {version}")
    try:
        block_type = BlockType(type_ordinal)
    except ValueError:
        raise FormatError(f"log block at {offset} has unknown block type {type_ordinal}") from None
    header, pos = decode_metadata(buf, pos, limit)
    if pos + 8 > limit:
        raise FormatError(f"log block at {offset}: content length field runs past the block end")
    if pos + 8 > len(buf):
        raise NeedMoreBytes
    (content_length,) = _I64.unpack_from(buf, pos)
    pos += 8
    if content_length < 0 or pos + content_length + 4 > limit:
        raise FormatError(
            f"log block at {offset}: content length {content_length} does not fit the block length {block_length}"
        )
    return version, block_type, header, offset + pos, content_length


def parse_footer(buf: bytes, offset: int) -> Header:
    """The footer map filling exactly ``buf`` (the bytes between content and trailing length)."""
    footer, end = decode_metadata(buf, 0, len(buf))
    if end != len(buf):
        raise FormatError(f"log block footer at {offset} leaves {len(buf) - end} unread bytes")
    return footer
