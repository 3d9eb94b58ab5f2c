"""Encoding blocks and creating log files.

This module owns the write side: :func:`encode_block` gives the exact bytes Java's
``HoodieLogFormatWriter`` writes for a block (see :mod:`.framing`), and
:func:`write_log_file` creates a *new* log file holding some blocks. Since Hudi 0.14 a v6
writer never appends to an existing log file (each write goes to the next log version),
and object stores cannot append at all, so an existing path is refused.
"""
from __future__ import annotations

import posixpath
from collections.abc import Iterable

from hoodie.formats.log.blocks import CorruptBlock, HeaderKey, LogBlock
from hoodie.formats.log.content import encode_content
from hoodie.formats.log.framing import frame_block
from hoodie.layout import parse_log_file_name
from hoodie.storage.base import Storage

__all__ = ["encode_block", "encode_log_file", "write_log_file"]


def encode_block(block: LogBlock) -> bytes:
    """The complete bytes of ``block``: magic, frame, header, content, footer, trailer.

    Header and footer entries are written in their dicts' order.
    """
    if isinstance(block, CorruptBlock):
        raise ValueError("a CorruptBlock cannot be written")
    return frame_block(block.block_type, block.header, encode_content(block), block.footer)


def encode_log_file(blocks: Iterable[LogBlock]) -> bytes:
    """The bytes of a log file holding ``blocks`` in order."""
    return b"".join(encode_block(b) for b in blocks)


def write_log_file(storage: Storage, path: str, blocks: Iterable[LogBlock]) -> int:
    """Create the log file ``path`` holding ``blocks``; returns its size in bytes.

    The file appears whole or not at all (``storage.create_new``), so readers never see a
    partial block from this writer. Raises :class:`~hoodie.errors.FileAlreadyExistsError`
    if ``path`` exists. The file name must be a Hudi log file name (otherwise no reader
    would ever attach it to a file slice), and every block needs an ``INSTANT_TIME``
    header, without which hudi-rs refuses the whole file.
    """
    name = posixpath.basename(path.rstrip("/"))
    if parse_log_file_name(name) is None:
        raise ValueError(f"{name!r} is not a Hudi log file name (.<fileId>_<instant>.log.<version>_<token>)")
    blocks = list(blocks)
    if not blocks:
        raise ValueError("a log file needs at least one block")
    for i, block in enumerate(blocks):
        if HeaderKey.INSTANT_TIME not in block.header:
            raise ValueError(f"block {i} ({block.block_type.name}) has no INSTANT_TIME header")
    data = encode_log_file(blocks)
    # Not fsynced, like base files: the instant that makes a write visible is what is made
    # durable (Java's log writer only flushes to the file system, too).
    storage.create_new(path, data, durable=False)
    return len(data)
