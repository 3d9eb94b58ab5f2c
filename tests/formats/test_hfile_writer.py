"""HFile v3 writer: byte-identical to the files Apache Hudi (HBase 2.4's writer) wrote for
the same entries, file info and block size; round trips of many shapes; every block
checked independently of the reader (CRC32C, gzip, sizes, index offsets, trailer); keys
out of order refused before anything is written; Hudi's bloom filter meta block."""
from __future__ import annotations

import re
import struct
import zlib
from pathlib import Path

import google_crc32c
import pytest
from shared import cases_or_skip, shared_dir

from hoodie.errors import FileAlreadyExistsError, FormatError
from hoodie.formats.bloom import deserialize_filter, new_bloom_filter, serialize_filter
from hoodie.formats.hfile import HFileReader, HFileSettings, encode_hfile, write_hfile
from hoodie.formats.hfile.blocks import Codec, decode_non_root_index
from hoodie.storage.local import LocalStorage

VECTORS = shared_dir() / "conformance" / "vectors" / "hfile"
NAMES = sorted(p.name for p in VECTORS.glob("*.hfile")) if VECTORS.is_dir() else []


def _vector(name: str) -> bytes:
    if not (VECTORS / name).is_file():
        pytest.skip(f"no HFile vector {name} under {VECTORS}")
    return (VECTORS / name).read_bytes()


def _settings_of(name: str, reader: HFileReader) -> HFileSettings:
    size = re.search(r"_(\d+)KB_", name)
    return HFileSettings(
        block_size=int(size.group(1)) * 1024 if size else 1024 * 1024,
        codec=Codec(reader.trailer.codec),
        comparator=reader.trailer.comparator,
    )


def _rewrite(name: str) -> tuple[bytes, bytes]:
    """(the vector, what hoodie writes for its entries, file info and meta block)."""
    data = _vector(name)
    reader = HFileReader.from_bytes(data, name)
    standard = ("hfile.", "MAX_MEMSTORE_TS_KEY", "KEY_VALUE_VERSION")
    info = {k: v for k, v in reader.file_info.items() if not k.startswith(standard)}
    bloom = reader.meta_block("bloomFilter")
    mine = encode_hfile(reader.read_all(), _settings_of(name, reader), file_info=info, meta_blocks={"bloomFilter": bloom} if bloom else None)
    return data, mine


SINGLE_LEVEL = [n for n in NAMES if "large_keys" not in n and "non_unique" not in n]
MULTI_LEVEL = [n for n in NAMES if "large_keys" in n]


@pytest.mark.parametrize("name", cases_or_skip(SINGLE_LEVEL, SINGLE_LEVEL, "HFile vectors"))
def test_same_bytes_as_apache_hudi(name: str) -> None:
    data, mine = _rewrite(name)
    assert mine == data


@pytest.mark.parametrize("name", cases_or_skip(MULTI_LEVEL, MULTI_LEVEL, "HFile vectors"))
def test_same_data_blocks_as_apache_hudi_with_a_one_level_index(name: str) -> None:
    """HBase made these with a multi-level index (leaf index blocks between the data
    blocks); hoodie writes one level, as for every metadata-table file, with the same
    data blocks, byte for byte, and the same index keys as HBase's leaf level."""
    data, mine = _rewrite(name)
    theirs, ours = _blocks(data), _blocks(mine)
    # the same compressed bytes in each data block (their offsets differ by the leaf blocks)
    def stored(blocks: list[tuple[bytes, bytes, bytes]]) -> list[bytes]:
        return [b[33 : 33 + struct.unpack_from(">i", b, 29)[0] - 33] for m, _, b in blocks if m == b"DATABLK*"]

    assert stored(theirs) == stored(ours)
    leaf_keys = [e.key for m, plain, _ in theirs if m == b"IDXLEAF2" for e in decode_non_root_index(plain, name)]
    ours_reader = HFileReader.from_bytes(mine)
    assert ours_reader.trailer.num_data_index_levels == 1
    assert [e.key for e in ours_reader.root_index] == leaf_keys
    assert ours_reader.read_all() == HFileReader.from_bytes(data).read_all()


def test_non_unique_keys_are_refused() -> None:
    reader = HFileReader.from_bytes(_vector("hudi_1_0_hbase_2_4_9_16KB_GZ_200_20_non_unique.hfile"))
    with pytest.raises(FormatError, match="'hudi-key-000000000' repeats"):
        encode_hfile(reader.read_all())


# --------------------------------------------------------------------------------------
# structure, checked without the reader
# --------------------------------------------------------------------------------------

_HEADER = struct.Struct(">8siiqbii")


def _blocks(data: bytes) -> list[tuple[bytes, bytes, bytes]]:
    """(magic, uncompressed data, whole block) of every block before the trailer, each
    block's CRC32C chunks and sizes checked here, independently of hoodie's reader."""
    version = int.from_bytes(data[-4:], "big")
    assert (version >> 24, version & 0xFFFFFF) == (3, 3)
    assert data[-4096:-4088] == b'TRABLK"$'
    gz = data[-4096:].find(b"\x60\x01") >= 0  # codec field 12 = GZ
    out, pos = [], 0
    while pos < len(data) - 4096:
        magic, on_disk, plain_size, _prev, kind, per_chunk, with_header = _HEADER.unpack_from(data, pos)
        assert kind == 2 and per_chunk == 16384
        block = data[pos : pos + 33 + on_disk]
        chunks = [block[i : min(i + per_chunk, with_header)] for i in range(0, with_header, per_chunk)]
        sums = struct.unpack(f">{len(chunks)}I", block[with_header:])
        assert list(sums) == [google_crc32c.value(c) for c in chunks]
        stored = block[33:with_header]
        plain = zlib.decompress(stored, 31) if gz else stored
        assert len(plain) == plain_size
        out.append((magic, plain, block))
        pos += len(block)
    assert pos == len(data) - 4096
    return out


def _entries(n: int, value_size: int = 20) -> list[tuple[str, bytes]]:
    return [(f"key-{i:07d}", (f"value-{i}-".encode() * value_size)[:value_size]) for i in range(n)]


@pytest.mark.parametrize("codec", [Codec.GZ, Codec.NONE])
@pytest.mark.parametrize(("n", "block_size", "value_size"), [(0, 4096, 10), (1, 4096, 10), (2, 64, 10), (100, 256, 30), (5000, 4096, 40), (30, 200, 5000)])
def test_structure_and_round_trip(n: int, block_size: int, value_size: int, codec: Codec) -> None:
    entries = _entries(n, value_size)
    data = encode_hfile(entries, HFileSettings(block_size=block_size, codec=codec))
    blocks = _blocks(data)
    offsets, pos = {}, 0
    for magic, _plain, block in blocks:
        offsets[pos] = magic
        pos += len(block)
    data_blocks = [b for b in blocks if b[0] == b"DATABLK*"]
    reader = HFileReader.from_bytes(data)
    t = reader.trailer
    assert reader.read_all() == entries
    assert t.entry_count == n and t.data_index_count == len(data_blocks) == len(reader.root_index)
    assert t.num_data_index_levels == 1 and t.meta_index_count == 0
    data_offsets = sorted(o for o, m in offsets.items() if m == b"DATABLK*")
    assert [e.offset for e in reader.root_index] == data_offsets
    assert (t.first_data_block_offset, t.last_data_block_offset) == ((data_offsets[0], data_offsets[-1]) if n else (-1, -1))
    assert offsets[t.load_on_open_offset] == b"IDXROOT2" and offsets[t.file_info_offset] == b"FILEINF2"
    root_plain = next(p for m, p, _ in blocks if m == b"IDXROOT2")
    assert t.uncompressed_data_index_size == len(root_plain)
    # HBase's total: every block's uncompressed size with header but the data root index's
    assert t.total_uncompressed_bytes == sum(33 + len(p) for _m, p, _b in blocks) - (33 + len(root_plain)) + 4096
    assert t.codec == codec and t.comparator == "org.apache.hudi.io.storage.HoodieHBaseKVComparator"
    # every data block but the last reaches the block size; none goes past it by more than an entry
    entry_size = 8 + (2 + 11 + 10) + value_size + 1
    for _m, plain, _b in data_blocks[:-1]:
        assert block_size <= len(plain) < block_size + entry_size
    for key, value in entries[:: max(1, n // 50)]:
        assert reader.get(key) == value
    assert reader.get("key-") is None and reader.get("zzz") is None


def test_keys_at_block_boundaries() -> None:
    # 52-byte entries: a block closes once it holds the block size, so 208 bytes (exactly
    # 4 entries) make blocks of 4, one byte more blocks of 5
    entries = _entries(40, 20)
    assert len(HFileReader.from_bytes(encode_hfile(entries, HFileSettings(block_size=209))).root_index) == 8
    reader = HFileReader.from_bytes(encode_hfile(entries, HFileSettings(block_size=208)))
    assert len(reader.root_index) == 10
    for i in range(40):
        assert reader.get(f"key-{i:07d}") == entries[i][1]
    assert [k for k, _ in reader.scan_prefix("key-000000")] == [f"key-{i:07d}" for i in range(10)]
    assert reader.get_many([f"key-{i:07d}" for i in (3, 4, 7, 8)]) == {f"key-{i:07d}": entries[i][1] for i in (3, 4, 7, 8)}


def test_index_keys_are_hbase_midpoints() -> None:
    keys = ["a-1", "a-5", "b", "bz", "c\xff", "d"]
    reader = HFileReader.from_bytes(encode_hfile([(k, b"v") for k in keys], HFileSettings(block_size=1)))
    # one entry per block; the index keeps the first key of the file, then the shortest
    # row after the previous block's last (type Maximum, 0xFF)
    rows = [e.row for e in reader.root_index]
    assert rows == [b"a-1", b"a-2", b"b", b"bz", b"c", b"d"]
    assert reader.root_index[0].key[-1] == 4 and all(e.key[-1] == 0xFF for e in reader.root_index[1:])
    assert reader.read_all() == [(k, b"v") for k in keys]


@pytest.mark.parametrize("keys", [["b", "a"], ["a", "a"], ["a", "b", "b"]])
def test_unsorted_or_repeated_keys_name_the_key_and_write_nothing(keys: list[str], tmp_path: Path) -> None:
    path = tmp_path / "x.hfile"
    with pytest.raises(FormatError, match=repr(keys[-1])):
        write_hfile(LocalStorage(), str(path), [(k, b"") for k in keys])
    assert not path.exists()


def test_write_to_storage_with_schema_and_bloom_filter(tmp_path: Path) -> None:
    entries = _entries(300)
    bloom = new_bloom_filter(1000, 0.000001, "DYNAMIC_V0", 10000)
    for key, _ in entries:
        bloom.add(key)
    schema = '{"type":"record","name":"HoodieMetadataRecord","fields":[]}'
    path = str(tmp_path / "files-0000-0_0-1-1_001.hfile")
    storage = LocalStorage()
    size = write_hfile(storage, path, entries, HFileSettings(block_size=1024), schema=schema, bloom_filter=bloom)
    assert size == Path(path).stat().st_size
    with HFileReader.open(storage, path) as reader:
        assert reader.read_all() == entries
        assert reader.schema == schema
        assert reader.file_info["bloomFilterTypeCode"] == b"DYNAMIC_V0"
        assert reader.file_info["minRecordKey"] == b"key-0000000"
        assert reader.file_info["maxRecordKey"] == b"key-0000299"
        text = reader.meta_block("bloomFilter")
        assert text is not None and text.decode() == serialize_filter(bloom)
        again = deserialize_filter(text, "DYNAMIC_V0")
        assert all(again.might_contain(k) for k, _ in entries)
    with pytest.raises(FileAlreadyExistsError):
        write_hfile(storage, path, entries)


def test_unsupported_settings_are_refused() -> None:
    with pytest.raises(FormatError, match="block size"):
        HFileSettings(block_size=0)
    with pytest.raises(FormatError, match="SNAPPY"):
        HFileSettings(codec=Codec.SNAPPY)
