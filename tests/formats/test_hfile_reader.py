"""HFile v3 reader: every vector Apache Hudi's own tests read (hudi-io ``TestHFileReader``:
keys ``hudi-key-%09d``, values ``hudi-value-%09d``, a custom file info entry and a dummy
bloom filter meta block), their point, sorted and prefix lookups with the blocks each
reads, damaged files, ranged reads from storage, and every HFile of the conformance
tables' metadata tables."""
from __future__ import annotations

import io
import json
import re
import zipfile
from collections import Counter
from pathlib import Path

import fastavro
import pytest
from shared import cases_or_skip, shared_dir

from hoodie.errors import FormatError
from hoodie.formats.hfile import HFileReader
from hoodie.formats.hfile.blocks import BlockHeader
from hoodie.storage.local import LocalStorage

VECTORS = shared_dir() / "conformance" / "vectors" / "hfile"
TABLES = shared_dir() / "conformance" / "tables"
NAMES = sorted(p.name for p in VECTORS.glob("*.hfile")) if VECTORS.is_dir() else []
DUMMY_BLOOM = b"/////wAAABQBAAABID797Rg6cC9QEnS/mT3C01cdQGaLYH2jbOCLtMA0RWppEH1HQg=="
LARGE_PREFIX = "hudi-key-" + "a" * 100 + "-"


def _key_of(name: str) -> tuple[int, object]:
    """(entry count, key function) of a vector, from its name as Hudi's test builds it."""
    count = int(re.search(r"_(\d+)(?:_fake_first_key|_large_keys.*|_non_unique)?\.hfile$", name).group(1))  # type: ignore[union-attr]
    if "fake_first_key" in name:
        return count, lambda i: f"hudi-key-{i:09d}-abcdefghij"
    if "large_keys" in name:
        return count, lambda i: f"{LARGE_PREFIX}{i:09d}"
    return count, lambda i: f"hudi-key-{i:09d}"


def _open(name: str) -> HFileReader:
    if not (VECTORS / name).is_file():
        pytest.skip(f"no HFile vector {name} under {VECTORS}")
    return HFileReader.from_bytes((VECTORS / name).read_bytes(), name)


UNIQUE = [n for n in NAMES if "non_unique" not in n and "no_entry" not in n]


@pytest.mark.parametrize("name", cases_or_skip(UNIQUE, UNIQUE, "HFile vectors"))
def test_vector_reads_in_order_with_metadata(name: str) -> None:
    count, key = _key_of(name)
    reader = _open(name)
    assert reader.entry_count == count
    assert reader.read_all() == [(key(i), f"hudi-value-{i:09d}".encode()) for i in range(count)]  # type: ignore[operator]
    assert reader.file_info["hudi_hfile_testing.custom_key"] == b"hudi_custom_value"
    assert reader.meta_block("bloomFilter") == DUMMY_BLOOM
    assert reader.meta_block("nothing") is None


@pytest.mark.parametrize("name", cases_or_skip(UNIQUE, UNIQUE, "HFile vectors"))
def test_vector_point_lookups_read_one_block_per_index_level(name: str) -> None:
    count, key = _key_of(name)
    reader = _open(name)
    levels = reader.trailer.num_data_index_levels
    for i in (0, 99, 277, 278, 2501, count // 2, count - 2, count - 1):
        fresh = HFileReader.from_bytes((VECTORS / name).read_bytes(), name)
        assert fresh.get(key(i)) == f"hudi-value-{i:09d}".encode()  # type: ignore[operator]
        # the root index is in memory; one block per lower level, then the data block
        assert fresh.block_reads == levels
    for missing in ("", "as", key(0)[:-2], key(100) + "a", key(count - 1) + "a", "zzz"):  # type: ignore[operator]
        assert reader.get(missing) is None


def test_deep_index_has_three_levels_and_every_key_is_found() -> None:
    reader = _open("hudi_1_0_hbase_2_4_13_1KB_GZ_10000_large_keys_deep_index.hfile")
    assert reader.trailer.num_data_index_levels == 3
    keys = [f"{LARGE_PREFIX}{i:09d}" for i in range(10000)]
    found = reader.get_many(keys)
    assert len(found) == 10000 and found[keys[9100]] == b"hudi-value-000009100"
    # sorted keys read each data block and each leaf/intermediate index block once
    assert reader.block_reads == sum(_block_kinds(reader)[m] for m in (b"DATABLK*", b"IDXLEAF2", b"IDXINTE2"))


def _block_kinds(reader: HFileReader) -> Counter[bytes]:
    """How many blocks of each magic the file holds before its load-on-open section."""
    data = (VECTORS / reader.name).read_bytes()
    kinds: Counter[bytes] = Counter()
    pos = 0
    while pos < reader.trailer.load_on_open_offset:
        header = BlockHeader.parse(data[pos : pos + 33], reader.name)
        kinds[header.magic] += 1
        pos += header.on_disk_size
    return kinds


def test_sorted_lookups_read_each_block_once() -> None:
    reader = _open("hudi_1_0_hbase_2_4_9_16KB_GZ_20000.hfile")
    # block 0 holds keys 0..277, block 1 starts at 278 (Hudi's test)
    got = reader.get_many([f"hudi-key-{i:09d}" for i in (0, 5, 277, 278, 300)] + ["hudi-key-000000300a"])
    assert list(got) == [f"hudi-key-{i:09d}" for i in (0, 5, 277, 278, 300)]
    assert reader.block_reads == 2
    with pytest.raises(FormatError, match="sorted"):
        reader.get_many(["hudi-key-000000002", "hudi-key-000000001"])


def test_prefix_scan() -> None:
    reader = _open("hudi_1_0_hbase_2_4_9_16KB_GZ_20000.hfile")
    got = list(reader.scan_prefix("hudi-key-0000196"))
    assert [k for k, _ in got] == [f"hudi-key-{i:09d}" for i in range(19600, 19700)]
    # a prefix whose keys span a block boundary (block 1 starts at 278)
    got = list(reader.scan_prefix("hudi-key-00000027"))
    assert [k for k, _ in got] == [f"hudi-key-{i:09d}" for i in range(270, 280)]
    assert list(reader.scan_prefix("hudi-key-000019999a")) == []
    assert list(reader.scan_prefix("a")) == []
    assert len(list(reader.scan_prefix(""))) == 20000
    assert [k for k, _ in reader.scan_prefixes(["hudi-key-00000001", "hudi-key-0000196"])][:10] == [f"hudi-key-{i:09d}" for i in range(10, 20)]


def test_fake_first_keys_in_the_index() -> None:
    reader = _open("hudi_1_0_hbase_2_4_13_16KB_GZ_20000_fake_first_key.hfile")
    # block 2's index key is the shortened row "hudi-key-00000047", not a real key
    assert reader.root_index[2].row == b"hudi-key-00000047"
    assert reader.get("hudi-key-00000047") is None
    assert reader.get("hudi-key-000000470-abcdefghij") == b"hudi-value-000000470"
    assert reader.get("hudi-key-000000469-abcdefghij") == b"hudi-value-000000469"
    assert [k for k, _ in reader.scan_prefix("hudi-key-00000047")] == [f"hudi-key-{i:09d}-abcdefghij" for i in range(470, 480)]


def test_non_unique_keys() -> None:
    reader = _open("hudi_1_0_hbase_2_4_9_16KB_GZ_200_20_non_unique.hfile")
    entries = reader.read_all()
    assert len(entries) == 4200
    expected = [
        (f"hudi-key-{i:09d}", (f"hudi-value-{i:09d}" + ("" if j < 0 else f"_{j}")).encode())
        for i in range(200)
        for j in range(-1, 20)
    ]
    assert entries == expected
    for i in range(200):  # the first entry of a key
        assert reader.get(f"hudi-key-{i:09d}") == f"hudi-value-{i:09d}".encode()
    assert len(list(reader.scan_prefix("hudi-key-000000006"))) == 21


def test_file_without_entries() -> None:
    reader = _open("hudi_1_0_hbase_2_4_9_no_entry.hfile")
    assert reader.entry_count == 0 and reader.read_all() == []
    assert reader.get("random") is None and list(reader.scan_prefix("")) == []
    assert reader.schema is not None and json.loads(reader.schema)["name"] == "trip"
    assert reader.file_info["bloomFilterTypeCode"] == b"DYNAMIC_V0"
    assert reader.trailer.comparator == "org.apache.hudi.io.storage.HoodieHBaseKVComparator"


# --------------------------------------------------------------------------------------
# damaged files
# --------------------------------------------------------------------------------------


def test_damaged_data_block_names_file_and_offset() -> None:
    name = "hudi_1_0_hbase_2_4_9_16KB_GZ_20000.hfile"
    data = bytearray(_open(name) and (VECTORS / name).read_bytes())
    second = HFileReader.from_bytes(bytes(data)).root_index[1]
    data[second.offset + 100] ^= 0x01
    reader = HFileReader.from_bytes(bytes(data), "damaged.hfile")
    with pytest.raises(FormatError, match=rf"damaged\.hfile: HFile block at byte {second.offset}: checksum mismatch"):
        reader.read_all()
    with pytest.raises(FormatError, match="checksum mismatch"):
        reader.get("hudi-key-000000300")
    assert reader.get("hudi-key-000000001") == b"hudi-value-000000001"  # other blocks are fine


@pytest.mark.parametrize("cut", [1, 4096, 5000])
def test_truncated_or_damaged_trailer(cut: int) -> None:
    name = "hudi_1_0_hbase_2_4_9_16KB_NONE_5000.hfile"
    data = (_open(name) and (VECTORS / name).read_bytes())[:-cut]
    with pytest.raises(FormatError, match="cut.hfile"):
        HFileReader.from_bytes(data, "cut.hfile")


def test_damaged_load_on_open_section() -> None:
    name = "hudi_1_0_hbase_2_4_9_16KB_NONE_5000.hfile"
    data = bytearray(_open(name) and (VECTORS / name).read_bytes())
    at = HFileReader.from_bytes(bytes(data)).trailer.file_info_offset
    data[at + 40] ^= 0xFF
    with pytest.raises(FormatError, match=rf"bad.hfile: HFile block at byte {at}"):
        HFileReader.from_bytes(bytes(data), "bad.hfile")


# --------------------------------------------------------------------------------------
# from storage
# --------------------------------------------------------------------------------------


def test_ranged_reads_from_storage(tmp_path: Path) -> None:
    name = "hudi_1_0_hbase_2_4_9_16KB_GZ_20000.hfile"
    path = tmp_path / name
    path.write_bytes(_open(name) and (VECTORS / name).read_bytes())
    storage = LocalStorage()
    before = storage.counters.snapshot()
    with HFileReader.open(storage, str(path)) as reader:
        assert reader.get("hudi-key-000013900") == b"hudi-value-000013900"
        assert reader.block_reads == 1
    # trailer, load-on-open section, one data block
    assert storage.counters.since(before)["read"] == 3


# --------------------------------------------------------------------------------------
# the conformance tables' metadata tables
# --------------------------------------------------------------------------------------


def _mdt_hfiles() -> list[tuple[Path, str]]:
    out = []
    for z in sorted(TABLES.rglob("*.zip")) if TABLES.is_dir() else []:
        with zipfile.ZipFile(z) as zf:
            out += [(z, m) for m in zf.namelist() if m.endswith(".hfile") and "__MACOSX" not in m and "/.hoodie/metadata/" in m]
    return out


MDT_HFILES = _mdt_hfiles()


@pytest.mark.parametrize(
    "zip_path, member",
    cases_or_skip(MDT_HFILES, [f"{z.stem}:{m.rsplit('/', 1)[-1][:48]}" for z, m in MDT_HFILES], "metadata table HFiles", argcount=2),
)
def test_metadata_table_hfiles_read(zip_path: Path, member: str) -> None:
    with zipfile.ZipFile(zip_path) as zf:
        reader = HFileReader.from_bytes(zf.read(member), member)
    entries = reader.read_all()
    keys = [k for k, _ in entries]
    assert keys == sorted(keys, key=str.encode) and len(set(keys)) == len(keys)
    assert reader.trailer.comparator == "org.apache.hudi.io.storage.HoodieHBaseKVComparator"
    assert reader.meta_block("bloomFilter") is not None
    schema = fastavro.parse_schema(json.loads(reader.schema or "null"))
    for key, value in entries:
        buf = io.BytesIO(value)
        record = fastavro.schemaless_reader(buf, schema, schema)
        assert buf.tell() == len(value)
        # the HFile key is the record key; Hudi 1.x leaves the value's own key empty
        assert record["key"] in ("", key)  # type: ignore[index, call-overload]
        assert record["type"] in range(1, 8)  # type: ignore[index, call-overload]
        assert reader.get(key) == value


@pytest.mark.parametrize("name", cases_or_skip(NAMES, NAMES, "HFile vectors"))
def test_vector_sorted_lookups_equal_one_lookup_a_key(name: str) -> None:
    """``get_many`` (numpy over each block's entries) finds what ``get`` finds."""
    if "no_entry" in name:
        assert _open(name).get_many(["a", "b"]) == {}
        return
    count, key = _key_of(name)
    keys = sorted({key(i) for i in range(0, count, 7)} | {key(i) + "a" for i in range(3, count, 11)} | {"", "zzz"})  # type: ignore[operator]
    got = _open(name).get_many(keys)
    assert got == {k: v for k in keys if (v := _open(name).get(k)) is not None}
    assert len(got) == len(range(0, count, 7))
