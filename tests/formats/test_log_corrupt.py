"""Partial and corrupt log blocks: reported as CorruptBlock, never fatal, and the next good
block is still read — in both reader modes (whole file in memory, and streamed block by
block for large files). Resynchronisation follows Java's HoodieLogFileReader."""
from __future__ import annotations

import struct
from pathlib import Path

import pyarrow as pa
import pytest

from hoodie.formats import byte_source
from hoodie.formats.avro_schema import arrow_to_avro_schema, avro_schema_json
from hoodie.formats.log import (
    MAGIC,
    AvroDataBlock,
    CommandBlock,
    CorruptBlock,
    DeleteBlock,
    DeleteRecord,
    LogBlock,
    LogFileReader,
    encode_block,
    read_log_file,
)
from hoodie.formats.log import reader as reader_module
from hoodie.storage.local import LocalStorage

INSTANT = "20250101000000000"


def _avro_block(riders: list[str], instant: str = INSTANT) -> AvroDataBlock:
    n = len(riders)
    table = pa.table(
        {
            "_hoodie_commit_time": [instant] * n,
            "_hoodie_commit_seqno": [f"{instant}_0_{i}" for i in range(n)],
            "_hoodie_record_key": [f"k{i}" for i in range(n)],
            "_hoodie_partition_path": [""] * n,
            "_hoodie_file_name": ["f1-0"] * n,
            "rider": riders,
        }
    )
    schema = arrow_to_avro_schema(table.select(["rider"]).schema, "t", include_meta_fields=True)
    return AvroDataBlock.create(table, avro_schema_json(schema), instant)


B1 = _avro_block(["rider-A", "rider-B"])
B2 = DeleteBlock.create([DeleteRecord("k0", "")], "20250102000000000")
B3 = CommandBlock.rollback("20250103000000000", "20250102000000000")
E1, E2, E3 = encode_block(B1), encode_block(B2), encode_block(B3)


@pytest.fixture(params=["memory", "streamed"])
def read(request: pytest.FixtureRequest, tmp_path: Path):  # type: ignore[no-untyped-def]
    """Reads bytes as a log file, either buffered whole or streamed (whole_file_limit=0)."""
    limit = reader_module.WHOLE_FILE_LIMIT if request.param == "memory" else 0

    def run(data: bytes) -> list[LogBlock]:
        path = tmp_path / f".f1-0_{INSTANT}.log.1_0-1-2"
        path.write_bytes(data)
        return read_log_file(LocalStorage(), str(path), whole_file_limit=limit)

    return run


def _corrupt(block: LogBlock) -> tuple[int, int]:
    assert isinstance(block, CorruptBlock), block
    return block.offset, block.length


def test_clean_file(read) -> None:  # type: ignore[no-untyped-def]
    assert read(E1 + E2 + E3) == [B1, B2, B3]


def test_truncated_last_block_at_every_position(read) -> None:  # type: ignore[no-untyped-def]
    # Cuts inside the magic, the length, the header, the content, the footer and the trailer.
    for cut in [1, 5, 6, 10, 14, 20, 40, len(E2) // 2, len(E2) - 9, len(E2) - 1]:
        blocks = read(E1 + E2[:cut])
        assert blocks[0] == B1, cut
        assert _corrupt(blocks[1]) == (len(E1), cut), cut
        assert len(blocks) == 2


def test_truncated_only_block(read) -> None:  # type: ignore[no-untyped-def]
    for cut in [3, 14, len(E1) - 1]:
        (only,) = read(E1[:cut])
        assert _corrupt(only) == (0, cut)


def test_wrong_trailing_length_then_good_block(read) -> None:  # type: ignore[no-untyped-def]
    bad = E1[:-8] + struct.pack(">q", len(E1) - 8 + 1)
    blocks = read(bad + E2)
    assert _corrupt(blocks[0]) == (0, len(E1))
    assert "trailing length" in blocks[0].reason
    assert blocks[1:] == [B2]


def test_block_length_past_end_of_file_then_nothing(read) -> None:  # type: ignore[no-untyped-def]
    huge = E1[:6] + struct.pack(">q", 10**9) + E1[14:]
    (only,) = read(huge)
    assert _corrupt(only) == (0, len(E1))
    assert "past the end" in only.reason


def test_too_small_or_negative_block_length(read) -> None:  # type: ignore[no-untyped-def]
    for length in (-5, 0, 7):
        bad = MAGIC + struct.pack(">q", length) + b"\x00" * 20
        blocks = read(bad + E2)
        assert _corrupt(blocks[0]) == (0, len(bad))
        assert blocks[1:] == [B2]


def test_garbage_between_blocks(read) -> None:  # type: ignore[no-untyped-def]
    garbage = b"not a block at all" * 3
    blocks = read(E1 + garbage + E2)
    # Java checks that a block is followed by a magic or EOF, so B1 goes down with the
    # garbage; the next good block is read.
    assert _corrupt(blocks[0]) == (0, len(E1) + len(garbage))
    assert "not followed by a block magic" in blocks[0].reason
    assert blocks[1:] == [B2]


def test_garbage_at_start(read) -> None:  # type: ignore[no-untyped-def]
    blocks = read(b"\x00garbage" + E1 + E2)
    assert _corrupt(blocks[0]) == (0, 8)
    assert blocks[1:] == [B1, B2]


def test_trailing_partial_magic(read) -> None:  # type: ignore[no-untyped-def]
    blocks = read(E1 + b"#HU")
    assert blocks[0] == B1
    assert _corrupt(blocks[1]) == (len(E1), 3)


def test_partial_block_followed_by_a_later_complete_block(read) -> None:  # type: ignore[no-untyped-def]
    """A crashed append (on storage that appends) followed by the next writer's block."""
    partial = E2[: len(E2) // 2]
    blocks = read(E1 + partial + E3)
    assert blocks[0] == B1
    assert _corrupt(blocks[1]) == (len(E1), len(partial))
    assert blocks[2] == B3


def test_decoy_magic_inside_a_partial_block(read) -> None:  # type: ignore[no-untyped-def]
    """Resynchronisation may land on "#HUDI#" inside record data; that is checked too."""
    decoy = encode_block(_avro_block(["#HUDI#" + "x" * 30, "#HUDI#\x00\x00\x00\x00\x00\x00\x00\x05"]))
    partial = decoy[: len(decoy) - 10]
    blocks = read(partial + E2)
    assert all(isinstance(b, CorruptBlock) for b in blocks[:-1])
    assert blocks[-1] == B2
    assert sum(b.length for b in blocks[:-1]) == len(partial)
    # complete, the same block reads fine: magic-looking bytes in content are skipped by length
    assert read(decoy + E2)[1] == B2


def test_format_version_zero_is_reported_not_decoded(read) -> None:  # type: ignore[no-untyped-def]
    content = b"legacy"
    v0 = MAGIC + struct.pack(">q", 4 + len(content)) + struct.pack(">i", 0) + content
    blocks = read(v0 + E1)
    assert _corrupt(blocks[0]) == (0, len(v0))
    assert "version 0" in blocks[0].reason
    assert blocks[1] == B1


def test_streamed_resync_across_scan_windows(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """In streamed mode the magic search reads windows; a magic straddling two is found."""
    monkeypatch.setattr(byte_source, "_FIND_WINDOW", 64)
    path = tmp_path / f".f1-0_{INSTANT}.log.1_0-1-2"
    for garbage_len in range(60, 70):
        path.write_bytes(b"g" * garbage_len + E1 + b"z" * garbage_len + E2)
        blocks = read_log_file(LocalStorage(), str(path), whole_file_limit=0)
        assert _corrupt(blocks[0]) == (0, garbage_len)
        assert _corrupt(blocks[1]) == (garbage_len, len(E1) + garbage_len)
        assert blocks[2] == B2


def test_streamed_reader_never_reads_the_whole_file(tmp_path: Path) -> None:
    blocks = [_avro_block([f"rider-{i}-{j}" * 20 for j in range(200)]) for i in range(20)]
    data = b"".join(encode_block(b) for b in blocks)
    path = tmp_path / f".f1-0_{INSTANT}.log.1_0-1-2"
    path.write_bytes(data)
    largest_block = max(len(encode_block(b)) for b in blocks)
    reads: list[int] = []
    with LogFileReader(LocalStorage(), str(path), whole_file_limit=0) as reader:
        source = reader._source
        original = source.read_at

        def counting(offset: int, n: int) -> bytes:
            out = original(offset, n)
            reads.append(len(out))
            return out

        source.read_at = counting  # type: ignore[method-assign]
        decoded = list(reader)
    assert decoded == blocks
    assert max(reads) <= largest_block < len(data) // 10
    # headers only: no content is read at all
    reads.clear()
    with LogFileReader(LocalStorage(), str(path), whole_file_limit=0) as reader:
        original_scan_read = reader._source.read_at
        reader._source.read_at = lambda o, n: reads.append(n) or original_scan_read(o, n)  # type: ignore[method-assign]
        infos = list(reader.scan())
    assert len(infos) == 20
    assert sum(reads) < len(data) // 2


def test_small_file_is_read_in_one_call(tmp_path: Path) -> None:
    path = tmp_path / f".f1-0_{INSTANT}.log.1_0-1-2"
    path.write_bytes(E1 + E2 + E3)
    storage = LocalStorage()
    assert read_log_file(storage, str(path)) == [B1, B2, B3]
    assert storage.counters["read"] == 1
