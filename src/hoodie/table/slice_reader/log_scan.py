"""Replaying the log files of one file slice: which blocks count, in which order.

This module owns block selection for a merge-on-read read. The log files of a slice are
read in their slice order (base instant, version, write token), each block in file
order, and a block is replayed only when

* it is not a :class:`~hoodie.formats.log.blocks.CorruptBlock` (a torn write). A
  corrupt block inside the bytes a completed delta commit wrote (the log file's
  ``committed`` extents), or a log file shorter than they reach, is damage, not a torn
  write: :class:`~hoodie.errors.DamagedTableError` naming the file and the instant,
  unless the read tolerates corrupt files (``ignore_corrupt``: a warning, then the
  corrupt bytes are skipped as a torn write's are);
* its ``INSTANT_TIME`` is an instant the query sees (:class:`~.instants.InstantFilter`:
  completed, inside the as-of or incremental range — never pending or failed);
* no later rollback ``COMMAND`` block of the slice targets its instant. As in Java and
  hudi-rs, a command removes the blocks of its target read *before* it (in any earlier
  log file of the slice); a block of that instant further on counts again. Command
  blocks apply whatever their own instant (a rollback is not a write the query could
  fail to see).

Headers are scanned first (no content is decoded) so rollbacks and instant filters are
known before any data block is decoded; then the surviving data and delete blocks are
read (:func:`scan_log`) and decoded (:func:`decode_pending`). Consecutive Avro data
blocks of one writer schema are decoded together, up to about 1 MiB of content at a time:
the vectorized Avro codec's cost is largely per field, and a read that merges several
slices in one task (:func:`hoodie.table.slice_reader.merge.run_merge_tasks`) hands all their blocks to
one :func:`decode_pending`. Memory is the log files of the slices decoded together.
"""
from __future__ import annotations

import itertools
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from hoodie.engine.runs import bounded_runs
from hoodie.errors import DamagedTableError, FormatError, UnsupportedTableError
from hoodie.formats.log import (
    BlockInfo,
    BlockType,
    CorruptBlock,
    HeaderKey,
    LogFileReader,
)
from hoodie.formats.log.blocks import AvroDataBlock, DeleteBlock, ParquetDataBlock
from hoodie.formats.log.content import decode_avro_together
from hoodie.formats.log.reader import decode_block
from hoodie.storage.base import Storage
from hoodie.table.file_group import LogFile

log = logging.getLogger(__name__)

__all__ = ["METADATA_TABLE_BLOCKS", "LogScanStats", "PendingBlock", "ReplayBlock", "decode_pending", "replay_blocks", "scan_log"]

ReplayBlock = AvroDataBlock | ParquetDataBlock | DeleteBlock
_REPLAYED = (BlockType.AVRO_DATA, BlockType.PARQUET_DATA, BlockType.DELETE)
#: the blocks a metadata-table read replays (``scan_log(..., replayed=...)``)
METADATA_TABLE_BLOCKS = (BlockType.HFILE_DATA, BlockType.DELETE)
# Avro content decoded in one pass: measured on blocks of ~1,000 records of 18 fields
# (260 KB), four together cost 0.6× four alone; eight together, whose buffers no longer
# fit a core's cache, 0.75×.
_DECODE_BATCH_BYTES = 1 << 20


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


@dataclass(frozen=True)
class PendingBlock:
    """A block a replay applies: found and read from the log file at ``path``, not decoded."""

    path: str
    info: BlockInfo
    content: bytes


def scan_log(
    storage: Storage,
    log_files: Sequence[LogFile],
    visible: Callable[[str], bool],
    stats: LogScanStats | None = None,
    ignore_corrupt: bool = False,
    replayed: tuple[BlockType, ...] = _REPLAYED,
) -> list[PendingBlock]:
    """The data and delete blocks of ``log_files`` a query applies, oldest first, read but
    not decoded (``replayed``: the kinds of block a read applies; any other but a rollback
    command is refused)."""
    stats = stats if stats is not None else LogScanStats()
    readers: list[LogFileReader] = []
    queued: list[tuple[int, BlockInfo, str]] = []  # (reader, block, instant) in replay order
    try:
        for lf in log_files:
            try:
                reader = LogFileReader(storage, lf.path)
            except FileNotFoundError as e:
                # named by the view (listings or the metadata table): committed blocks lost
                raise DamagedTableError(
                    f"log file {lf.path} is missing from storage, though the table's file listing names it; `hoodie validate` lists every damaged file"
                ) from e
            readers.append(reader)
            stats.log_files += 1
            _check_length(lf, reader.size, ignore_corrupt)
            for found in reader.scan():
                stats.blocks += 1
                if isinstance(found, CorruptBlock):
                    _check_corrupt(lf, found, ignore_corrupt)
                    stats.corrupt_blocks += 1
                    continue
                if found.block_type is BlockType.COMMAND:
                    stats.rollback_blocks += 1
                    target = found.header.get(HeaderKey.TARGET_INSTANT_TIME)
                    kept = [q for q in queued if q[2] != target]
                    stats.rolled_back_blocks += len(queued) - len(kept)
                    queued = kept
                    continue
                if found.block_type not in replayed:
                    raise UnsupportedTableError(
                        f"{lf.path}: {found.block_type.name} log blocks cannot be merged into this read"
                    )
                queued.append((len(readers) - 1, found, _instant(found, lf.path)))
        pending = []
        for index, info, instant in queued:
            if not visible(instant):
                stats.invisible_blocks += 1
                continue
            stats.replayed_blocks += 1
            pending.append(PendingBlock(readers[index].name, info, readers[index].read_content(info)))
        return pending
    finally:
        for reader in readers:
            reader.close()


def _damage(message: str, ignore_corrupt: bool) -> None:
    if not ignore_corrupt:
        raise DamagedTableError(f"{message}; `hoodie validate` lists every damaged file, and ignoreCorruptFiles=true reads around it")
    log.warning("%s; reading around it (ignoreCorruptFiles)", message)


def _check_length(lf: LogFile, size: int, ignore_corrupt: bool) -> None:
    """A log file shorter than what completed delta commits wrote into it lost committed
    blocks: damage, whatever the blocks before the cut look like."""
    furthest = lf.committed_end()
    if furthest is not None and size < furthest.end:
        _damage(f"log file {lf.path} is {size} bytes long, but the completed instant {furthest.instant} wrote up to byte {furthest.end}", ignore_corrupt)


def _check_corrupt(lf: LogFile, block: CorruptBlock, ignore_corrupt: bool) -> None:
    """A corrupt block where a completed delta commit wrote is damage; elsewhere it is
    the torn tail of a failed or inflight writer, skipped as Java skips it."""
    end = block.offset + block.length
    hit = lf.committed_within(block.offset, end)
    if hit is not None:
        _damage(
            f"log file {lf.path} is corrupt at bytes {block.offset}-{end} ({block.reason}), "
            f"which the completed instant {hit.instant} wrote",
            ignore_corrupt,
        )


def decode_pending(pending: Sequence[PendingBlock]) -> list[ReplayBlock]:
    """The blocks of ``pending``, decoded, in order (runs of Avro data blocks of one writer
    schema together, up to about 1 MiB of content)."""
    out: list[ReplayBlock] = []
    for _, alike in itertools.groupby(pending, key=_decoded_with):
        for run in bounded_runs(alike, lambda p: len(p.content), _DECODE_BATCH_BYTES):
            if len(run) == 1:
                out.append(_decoded(run[0]))
                continue
            try:
                out.extend(decode_avro_together([(p.info.header, p.info.footer, p.content) for p in run]))
            except FormatError:
                out.extend(_decoded(p) for p in run)  # again one by one: the error names its block
    return out


def _decoded_with(p: PendingBlock) -> object:
    """What a block decodes together with: the Avro data blocks of its writer schema next
    to it; any other block, nothing (a key no other block has)."""
    return p.info.header.get(HeaderKey.SCHEMA) if p.info.block_type is BlockType.AVRO_DATA else id(p)


def _decoded(p: PendingBlock) -> ReplayBlock:
    block = decode_block(p.path, p.info, p.content)
    assert isinstance(block, (AvroDataBlock, ParquetDataBlock, DeleteBlock))
    return block


def replay_blocks(
    storage: Storage,
    log_files: Sequence[LogFile],
    visible: Callable[[str], bool],
    stats: LogScanStats | None = None,
    ignore_corrupt: bool = False,
) -> list[ReplayBlock]:
    """The data and delete blocks of ``log_files`` a query applies, oldest first, decoded."""
    return decode_pending(scan_log(storage, log_files, visible, stats, ignore_corrupt))
