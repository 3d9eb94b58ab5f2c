"""Replaying the log files of one file slice: which blocks count, in which order.

This module owns block selection for a merge-on-read read. The log files of a slice are
read in their slice order (base instant, version, write token), each block in file
order, and a block is replayed only when

* it is not a :class:`~hoodie.formats.log.blocks.CorruptBlock` (a torn write);
* its ``INSTANT_TIME`` is an instant the query sees (:class:`~.instants.InstantFilter`:
  completed, inside the as-of or incremental range — never pending or failed);
* no later rollback ``COMMAND`` block of the slice targets its instant. As in Java and
  hudi-rs, a command removes the blocks of its target read *before* it (in any earlier
  log file of the slice); a block of that instant further on counts again. Command
  blocks apply whatever their own instant (a rollback is not a write the query could
  fail to see).

Headers are scanned first (no content is decoded) so rollbacks and instant filters are
known before any data block is decoded; then the surviving data and delete blocks are
decoded one at a time. Memory is one slice's log files at most.
"""
from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

from hoodie.errors import FormatError, UnsupportedTableError
from hoodie.formats.log import (
    BlockInfo,
    BlockType,
    CorruptBlock,
    HeaderKey,
    LogFileReader,
)
from hoodie.formats.log.blocks import AvroDataBlock, DeleteBlock, ParquetDataBlock
from hoodie.storage.base import Storage
from hoodie.table.file_group import LogFile

__all__ = ["LogScanStats", "ReplayBlock", "replay_blocks"]

ReplayBlock = AvroDataBlock | ParquetDataBlock | DeleteBlock
_REPLAYED = (BlockType.AVRO_DATA, BlockType.PARQUET_DATA, BlockType.DELETE)


@dataclass
class LogScanStats:
    """What a replay met (feeds compaction write stats and read diagnostics)."""

    log_files: int = 0
    blocks: int = 0
    corrupt_blocks: int = 0
    rollback_blocks: int = 0
    rolled_back_blocks: int = 0
    invisible_blocks: int = 0  # from instants the query does not see
    replayed_blocks: int = 0


def _instant(info: BlockInfo, path: str) -> str:
    instant = info.header.get(HeaderKey.INSTANT_TIME)
    if not instant:
        # hudi-rs refuses such a block too: without it no reader can tell whose data it is
        raise FormatError(f"{path}: {info.block_type.name} block at byte {info.offset} has no INSTANT_TIME header")
    return instant


def replay_blocks(
    storage: Storage,
    log_files: Sequence[LogFile],
    visible: Callable[[str], bool],
    stats: LogScanStats | None = None,
) -> Iterator[ReplayBlock]:
    """The data and delete blocks of ``log_files`` a query applies, oldest first."""
    stats = stats if stats is not None else LogScanStats()
    readers: list[LogFileReader] = []
    queued: list[tuple[int, BlockInfo, str]] = []  # (reader, block, instant) in replay order
    try:
        for lf in log_files:
            reader = LogFileReader(storage, lf.path)
            readers.append(reader)
            stats.log_files += 1
            for found in reader.scan():
                stats.blocks += 1
                if isinstance(found, CorruptBlock):
                    stats.corrupt_blocks += 1
                    continue
                if found.block_type is BlockType.COMMAND:
                    stats.rollback_blocks += 1
                    target = found.header.get(HeaderKey.TARGET_INSTANT_TIME)
                    kept = [q for q in queued if q[2] != target]
                    stats.rolled_back_blocks += len(queued) - len(kept)
                    queued = kept
                    continue
                if found.block_type not in _REPLAYED:
                    raise UnsupportedTableError(
                        f"{lf.path}: {found.block_type.name} log blocks cannot be merged into a data table read"
                    )
                queued.append((len(readers) - 1, found, _instant(found, lf.path)))
        for index, info, instant in queued:
            if not visible(instant):
                stats.invisible_blocks += 1
                continue
            stats.replayed_blocks += 1
            block = readers[index].read_block(info)
            assert isinstance(block, (AvroDataBlock, ParquetDataBlock, DeleteBlock))
            yield block
    finally:
        for reader in readers:
            reader.close()
