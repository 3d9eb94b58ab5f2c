"""Block content ⇄ block objects, per block type.

This module owns what sits between a block's content length and its footer:

* AVRO_DATA: int32 block version (3), int32 record count, then per record an int32
  length and the record in schemaless Avro binary of the header's SCHEMA;
* DELETE: see :mod:`.delete_codec`;
* PARQUET_DATA: a whole Parquet file (GZIP, as Java writes it);
* COMMAND: empty; the command is in the header;
* HFILE_DATA: a whole HFile, kept as bytes (its records are decoded on demand, see
  :mod:`.hfile_content`); its trailer and index are checked when the block is read;
* CDC_DATA: kept as raw bytes (hudi-rs rejects CDC blocks).
"""
from __future__ import annotations

import dataclasses
import functools
import struct
from collections.abc import Sequence
from typing import NoReturn

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from hoodie.errors import FormatError, SchemaError
from hoodie.formats.avro_nodes import AvroNode, parse_avro_schema
from hoodie.formats.avro_schema import avro_schema_to_arrow
from hoodie.formats.hfile import HFileReader
from hoodie.formats.log.avro_decode import decode_columns
from hoodie.formats.log.avro_encode import encode_records
from hoodie.formats.log.avro_vector import can_vectorize, decode_records, encode_avro_content, encode_avro_contents
from hoodie.formats.log.blocks import (
    AvroDataBlock,
    BlockType,
    CdcDataBlock,
    CommandBlock,
    CommandType,
    CorruptBlock,
    DeleteBlock,
    Header,
    HeaderKey,
    HFileDataBlock,
    LogBlock,
    ParquetDataBlock,
)
from hoodie.formats.log.delete_codec import decode_delete_content, encode_delete_content
from hoodie.formats.parquet import compression_of

__all__ = ["AVRO_BLOCK_VERSION", "compiled_schema", "decode_avro_together", "decode_content", "encode_content"]

AVRO_BLOCK_VERSION = 3
_I32 = struct.Struct(">i")
_TWO_I32 = struct.Struct(">ii")


@functools.lru_cache(maxsize=64)
def compiled_schema(schema_json: str) -> tuple[AvroNode, pa.Schema]:
    """(resolved tree, Arrow schema) of a writer schema; cached: every block of a file
    usually carries the same SCHEMA header."""
    return parse_avro_schema(schema_json), avro_schema_to_arrow(schema_json)


def _avro_schema(header: Header) -> tuple[str, AvroNode, pa.Schema]:
    schema_json = header.get(HeaderKey.SCHEMA)
    if schema_json is None:
        raise FormatError("AVRO_DATA block has no SCHEMA header")
    try:
        return (schema_json, *compiled_schema(schema_json))
    except SchemaError as exc:
        raise FormatError(f"AVRO_DATA block schema is unusable: {exc}") from exc


def _avro_spans(content: bytes) -> tuple[np.ndarray, np.ndarray]:
    """(starts, ends) of the records of an AVRO_DATA content, its version and count checked."""
    if len(content) < 8:
        raise FormatError(f"AVRO_DATA content is {len(content)} bytes, too short")
    version, count = _TWO_I32.unpack_from(content, 0)
    # Versions 1-3 share this layout (HoodieAvroDataBlockVersion always has a count).
    if not 1 <= version <= AVRO_BLOCK_VERSION:
        raise FormatError(f"AVRO_DATA block version {version} is not supported")
    if count < 0:
        raise FormatError(f"AVRO_DATA block record count {count} is negative")
    return _record_spans(content, count)


def _decode_avro(content: bytes, header: Header, footer: Header) -> AvroDataBlock:
    schema_json, node, arrow_schema = _avro_schema(header)
    starts, ends = _avro_spans(content)
    if can_vectorize(node):
        records = decode_records(node, content, starts, ends, arrow_schema)
    else:
        records = decode_columns(node, content, list(zip(starts.tolist(), ends.tolist())), arrow_schema)
    return AvroDataBlock(records, schema_json, header, footer)


def _record_spans(content: bytes, count: int) -> tuple[np.ndarray, np.ndarray]:
    """(starts, ends) of the ``count`` length-prefixed records after the 8-byte block header.

    A pointer chase, so a Python loop; kept to the bare minimum (about 0.15 µs a record,
    a tenth of the vector decoding of a typical record).
    Any anomaly is diagnosed by :func:`_check_spans`, which gives the precise message.
    """
    starts: list[int] = []
    append = starts.append
    unpack = _I32.unpack_from
    pos = 8
    try:
        for _ in range(count):
            (length,) = unpack(content, pos)
            if length < 0:  # also keeps the walk moving forward: at most len/4 steps
                break
            pos += 4
            append(pos)
            pos += length
    except struct.error:  # a length prefix past the end
        pass
    if len(starts) != count or pos != len(content):
        _check_spans(content, count)
    start = np.array(starts, np.int64)
    lengths = np.empty(count, np.int64)
    lengths[:-1] = np.diff(start) - 4
    if count:
        lengths[-1] = len(content) - start[-1]
    return start, start + lengths


def decode_avro_together(parts: Sequence[tuple[Header, Header, bytes]]) -> list[AvroDataBlock]:
    """AVRO_DATA blocks given as (header, footer, content), decoded in one pass over all
    their records when they share a writer schema the vectorized codec takes (else one
    by one): each block is exactly the one :func:`decode_content` gives, its records a
    slice of one table. The vectorized codec's cost is largely per field, so blocks of a
    few thousand records decode together at about two thirds of the cost one by one.

    Raises :class:`FormatError` as :func:`decode_content` does; when the records of the
    blocks together do not match their schema, the blocks are decoded one by one, so the
    error names the block at fault."""
    def one_by_one() -> list[AvroDataBlock]:
        return [_decode_avro(content, header, footer) for header, footer, content in parts]

    if len(parts) < 2 or len({h.get(HeaderKey.SCHEMA) for h, _, _ in parts}) != 1:
        return one_by_one()
    schema_json, node, arrow_schema = _avro_schema(parts[0][0])
    if not can_vectorize(node):
        return one_by_one()
    starts, ends, counts = [], [], []
    base = 0
    for _, _, content in parts:
        s, e = _avro_spans(content)
        starts.append(s + base)
        ends.append(e + base)
        counts.append(len(s))
        base += len(content)
    try:
        records = decode_records(node, b"".join(c for _, _, c in parts), np.concatenate(starts), np.concatenate(ends), arrow_schema)
    except FormatError:
        return one_by_one()
    blocks, at = [], 0
    for (header, footer, _), count in zip(parts, counts):
        blocks.append(AvroDataBlock(records.slice(at, count), schema_json, header, footer))
        at += count
    return blocks


def _check_spans(content: bytes, count: int) -> NoReturn:
    """Raise the FormatError that describes why the record lengths do not fit."""
    pos = 8
    for i in range(count):
        if pos + 4 > len(content):
            raise FormatError(f"AVRO_DATA block ends after {i} of {count} records")
        (length,) = _I32.unpack_from(content, pos)
        pos += 4
        if length < 0 or pos + length > len(content):
            raise FormatError(f"AVRO_DATA record {i} length {length} runs past the content")
        pos += length
    raise FormatError(f"AVRO_DATA block has {len(content) - pos} bytes after its {count} records")


def encode_together(blocks: Sequence[AvroDataBlock]) -> list[AvroDataBlock]:
    """``blocks`` with their content encoded in one pass over all their records, when they
    share a schema the vectorized codec takes (else as they are): the bytes are exactly
    each block's own, at a fraction of the per-block overhead."""
    if len(blocks) < 2 or len({b.schema_json for b in blocks}) != 1:
        return list(blocks)
    node, arrow_schema = compiled_schema(blocks[0].schema_json)
    if not can_vectorize(node):
        return list(blocks)
    names = blocks[0].records.column_names
    if any(b.records.column_names != names for b in blocks):
        return list(blocks)
    try:
        records = pa.concat_tables([b.records for b in blocks])
    except pa.ArrowInvalid:  # column types differ between blocks: encode one by one
        return list(blocks)
    contents = encode_avro_contents(node, records, arrow_schema, AVRO_BLOCK_VERSION, [b.records.num_rows for b in blocks])
    return [dataclasses.replace(b, encoded=c) for b, c in zip(blocks, contents)]


def _encode_avro(block: AvroDataBlock) -> bytes | bytearray:
    if block.encoded is not None:
        return block.encoded
    node, arrow_schema = compiled_schema(block.schema_json)
    if can_vectorize(node):
        return encode_avro_content(node, block.records, arrow_schema, AVRO_BLOCK_VERSION)
    records = encode_records(node, block.records, arrow_schema)
    parts = [_TWO_I32.pack(AVRO_BLOCK_VERSION, len(records))]
    for r in records:
        parts.append(_I32.pack(len(r)))
        parts.append(r)
    return b"".join(parts)


def _decode_parquet(content: bytes, header: Header, footer: Header) -> ParquetDataBlock:
    try:
        records = pq.read_table(pa.BufferReader(content))
    except (pa.ArrowInvalid, OSError) as exc:
        raise FormatError(f"PARQUET_DATA block content is not a Parquet file: {exc}") from exc
    return ParquetDataBlock(records, header, footer)


def _encode_parquet(block: ParquetDataBlock) -> bytes:
    sink = pa.BufferOutputStream()
    # The table's base-file codec, as Java's append handle passes it; no ARROW:schema so
    # that readers see the Parquet types, exactly as for base files (hoodie.formats.parquet).
    codec, level = compression_of(block.compression)
    pq.write_table(
        block.records.replace_schema_metadata(None),
        sink,
        compression=codec,
        compression_level=level,
        store_schema=False,
        write_statistics=True,
    )
    return sink.getvalue().to_pybytes()


def _decode_command(header: Header, footer: Header) -> CommandBlock:
    raw_type = header.get(HeaderKey.COMMAND_BLOCK_TYPE)
    target = header.get(HeaderKey.TARGET_INSTANT_TIME)
    if raw_type is None or target is None:
        raise FormatError("COMMAND block lacks COMMAND_BLOCK_TYPE or TARGET_INSTANT_TIME header")
    try:
        command = CommandType(int(raw_type))
    except ValueError:
        raise FormatError(f"COMMAND block has unknown command type {raw_type!r}") from None
    return CommandBlock(target, command, header, footer)


def decode_content(block_type: BlockType, header: Header, footer: Header, content: bytes) -> LogBlock:
    """The block object of a framed block's parts. Raises :class:`FormatError`."""
    if block_type is BlockType.AVRO_DATA:
        return _decode_avro(content, header, footer)
    if block_type is BlockType.DELETE:
        return DeleteBlock(decode_delete_content(content), header, footer)
    if block_type is BlockType.PARQUET_DATA:
        return _decode_parquet(content, header, footer)
    if block_type is BlockType.COMMAND:
        return _decode_command(header, footer)
    if block_type is BlockType.HFILE_DATA:
        HFileReader.from_bytes(content, "HFILE_DATA content")  # a damaged HFile fails here, not later
        return HFileDataBlock(content, header, footer)
    if block_type is BlockType.CDC_DATA:
        return CdcDataBlock(content, header, footer)
    raise FormatError(f"a {block_type.name} block cannot be decoded")


def encode_content(block: LogBlock) -> bytes | bytearray:
    """The content bytes of ``block`` (a bytearray when building bytes would only copy it)."""
    if isinstance(block, AvroDataBlock):
        return _encode_avro(block)
    if isinstance(block, DeleteBlock):
        return encode_delete_content(block.keys)
    if isinstance(block, ParquetDataBlock):
        return _encode_parquet(block)
    if isinstance(block, CommandBlock):
        return b""
    if isinstance(block, (HFileDataBlock, CdcDataBlock)):
        return block.content
    if isinstance(block, CorruptBlock):
        raise ValueError("a CorruptBlock has no content to write")
    raise TypeError(f"not a log block: {block!r}")
