"""The metadata table's records: the Avro codec (wrapper values, record-index file ids),
the keys Apache Hudi hashes, and HoodieMetadataPayload's merge rules, on records built
with the writer side of the codec and read back through HFiles and HFILE_DATA blocks."""
from __future__ import annotations

import datetime as dt
import hashlib
import io
import json
from decimal import Decimal

import fastavro
import pyarrow as pa
import pytest

from hoodie.errors import FormatError
from hoodie.formats.hfile import HFileReader, encode_hfile
from hoodie.formats.log import HeaderKey, HFileDataBlock
from hoodie.metadata_table.keys import bloom_filter_key, column_stats_key, file_group_index, file_group_indices, xxhash64
from hoodie.metadata_table.records import (
    BloomFilterInfo,
    ColumnStats,
    FileInfo,
    MetadataRecord,
    RecordLocation,
    SecondaryIndexEntry,
    _raw,
    decode_value,
    encode_value,
    merge,
)
from hoodie.metadata_table.schema import METADATA_RECORD_SCHEMA_JSON as SCHEMA

UTC = dt.timezone.utc


def _stats(file: str, lo: object, hi: object, count: int = 1, deleted: bool = False) -> MetadataRecord:
    return MetadataRecord("k", 3, ColumnStats(file, "c", lo, hi, count, 0, 10, 20, deleted))


def _files(key: str, **entries: tuple[int, bool]) -> MetadataRecord:
    return MetadataRecord(key, 2, {n.replace("_", "."): FileInfo(s, d) for n, (s, d) in entries.items()})


def _through_hfile(records: list[MetadataRecord]) -> list[MetadataRecord]:
    """Encode, store in an HFILE_DATA block, read back with the writer's schema."""
    content = encode_hfile(sorted((r.key, encode_value(r)) for r in records), schema=SCHEMA)
    block = HFileDataBlock(content, {HeaderKey.INSTANT_TIME: "20250101000000000", HeaderKey.SCHEMA: SCHEMA})
    reader = HFileReader.from_bytes(block.content)
    assert reader.schema == SCHEMA
    return [decode_value(k, v, reader.schema, "block") for k, v in reader.read_all()]


@pytest.mark.parametrize("value", [
    True, 7, 1 << 40, 2.5, "zurich", b"\x00\xff", Decimal("12.50"),
    dt.date(2024, 2, 29), dt.datetime(2024, 2, 29, 12, 30, 1, 123456, tzinfo=UTC), dt.time(23, 59, 59, 1),
    [1, "a", None],
])
def test_column_stats_values_round_trip_in_their_wrappers(value: object) -> None:
    (back,) = _through_hfile([_stats("f.parquet", value, value)])
    assert isinstance(back.payload, ColumnStats)
    assert back.payload.min == value and back.payload.max == value
    assert type(back.payload.min) is type(value)


def test_every_payload_round_trips() -> None:
    records = [
        MetadataRecord("__all_partitions__", 1, {"a": FileInfo(0), "b": FileInfo(0, True)}),
        _files("a", f1_parquet=(10, False), f2_parquet=(0, True)),
        _stats("f.parquet", 1, 9, 4),
        MetadataRecord("bf", 4, BloomFilterInfo("DYNAMIC_V0", "20250101000000000", b"AAAA", False)),
        MetadataRecord("key1", 5, RecordLocation("a", "9e1f2b4c-0d3a-4a8e-9b1c-2f3e4d5c6b7a-0", 1735689600000)),
        MetadataRecord("key2", 5, RecordLocation("a", "not-a-uuid-file-id", 1735689600000)),
        MetadataRecord("sk$key1", 7, SecondaryIndexEntry(False)),
    ]
    assert _through_hfile(records) == sorted(records, key=lambda r: r.key)


def test_record_index_file_id_bits_as_java_stores_them() -> None:
    # a UUID whose high bits are negative as a Java long
    file_id = "f1e2d3c4-b5a6-4798-8a7b-6c5d4e3f2a1b-12"
    (back,) = _through_hfile([MetadataRecord("k", 5, RecordLocation("p", file_id, 1))])
    assert back.payload == RecordLocation("p", file_id, 1)
    # and an empty fileId beside the bits, as Apache Hudi 0.15 writes it (its payload
    # reads that field whatever the encoding: a null stops its compaction)
    raw = fastavro.schemaless_reader(io.BytesIO(encode_value(back)), fastavro.parse_schema(json.loads(SCHEMA)), None)
    assert isinstance(raw, dict)
    assert {k: raw["recordIndexMetadata"][k] for k in ("fileId", "fileIdEncoding", "fileIndex")} == {"fileId": "", "fileIdEncoding": 0, "fileIndex": 12}


def test_decoding_uses_the_writer_schema_and_names_a_damaged_value() -> None:
    value = encode_value(_stats("f.parquet", 1, 2))
    with pytest.raises(FormatError, match=r"hfile-x: metadata record 'k'"):
        decode_value("k", value[:5], SCHEMA, "hfile-x")


# --- merge rules -----------------------------------------------------------------------------


def test_file_lists_union_later_entries_win_and_deletions_remove() -> None:
    base = _files("p", a_parquet=(100, False), b_parquet=(200, False))
    log1 = _files("p", b_parquet=(0, True), c_log=(50, False))
    log2 = _files("p", c_log=(80, False), d_parquet=(0, True))
    merged = merge(merge(base, log1), log2)
    assert merged.live_files() == {"a.parquet": 100, "c.log": 80}
    # a deletion with nothing before it is carried (for the base file it will meet)
    assert merged.files["d.parquet"].is_deleted
    # sizes only grow: an older, larger size of an appended log stays
    assert merge(_files("p", c_log=(90, False)), _files("p", c_log=(80, False))).live_files() == {"c.log": 90}


def test_log_merges_then_base_equal_sequential_merges() -> None:
    base = _files("p", a_parquet=(100, False))
    log1, log2 = _files("p", a_parquet=(0, True)), _files("p", e_parquet=(5, False))
    assert merge(base, merge(log1, log2)).live_files() == merge(merge(base, log1), log2).live_files() == {"e.parquet": 5}


def test_column_stats_widen_unless_deleted() -> None:
    merged = merge(_stats("f.log", 5, 10, 2), _stats("f.log", 1, 7, 3))
    assert isinstance(merged.payload, ColumnStats)
    assert (merged.payload.min, merged.payload.max, merged.payload.value_count) == (1, 10, 5)
    assert merged.payload.total_size == 20
    deleted = merge(_stats("f.log", 5, 10), _stats("f.log", None, None, 0, deleted=True))
    assert deleted.is_deleted
    revived = merge(deleted, _stats("f.log", 3, 4))
    assert isinstance(revived.payload, ColumnStats) and (revived.payload.min, revived.payload.max) == (3, 4)


def test_bloom_filters_and_record_locations_later_wins() -> None:
    old = MetadataRecord("bf", 4, BloomFilterInfo("SIMPLE", "1", b"old"))
    new = MetadataRecord("bf", 4, BloomFilterInfo("SIMPLE", "2", b"new"))
    assert merge(old, new) == new
    a = MetadataRecord("k", 5, RecordLocation("p", "f1-0", 1))
    b = MetadataRecord("k", 5, RecordLocation("q", "f2-0", 2))
    assert merge(a, b) == b


def test_a_type_change_is_refused() -> None:
    with pytest.raises(FormatError, match="'k' changes type from 3 to 5"):
        merge(_stats("f", 1, 2), MetadataRecord("k", 5, RecordLocation("p", "f-0", 1)))


# --- keys --------------------------------------------------------------------------------------


def test_xxhash64_reference_vectors() -> None:
    assert xxhash64(b"", 0) == 0xEF46DB3751D8E999
    assert xxhash64(b"a", 0) == 0xD24EC4F1A98C6E5B
    assert xxhash64(b"abc", 0) == 0x44BC2CF5AD770999
    assert xxhash64(b"Nobody inspects the spammish repetition", 0) == 0xFBCEA83C8A378BF1


def test_keys_as_apache_hudi_builds_them() -> None:
    # a key of the v9 conformance table's column_stats partition
    name = "3e93c8a9-fda0-4e8a-91dc-b4ade7dab76d-0_1-27-53_20260307162557587.parquet"
    assert column_stats_key("region=us", name, "currency") == "/m6lxu4Dh5w=431THTTwO5Q=F01d3NbdD9QcFpSCtykrRA=="
    assert bloom_filter_key("region=us", name).endswith("F01d3NbdD9QcFpSCtykrRA==")
    assert hashlib.md5(name.encode()).digest()  # (the file part is its MD5)


def test_file_group_index_is_java_string_hash() -> None:
    assert file_group_index("", 10) == 0
    assert file_group_index("a", 10) == 97 % 10
    assert file_group_index("polygenelubricants", 7) == (2 ** 31) % 7  # hashCode() == Integer.MIN_VALUE
    assert file_group_index("TXN-001", 10) == abs(_java_hash("TXN-001")) % 10


def test_file_group_indices_of_many_keys_are_each_keys_index() -> None:
    keys = ["", "a", "polygenelubricants", "TXN-001", "zürich-𝄞", "key-000000001234", *(f"k{i:0{i % 20}d}" for i in range(2000))]
    for groups in (1, 7, 10):
        assert file_group_indices(keys, groups).tolist() == [file_group_index(k, groups) for k in keys]
    assert file_group_indices([], 10).tolist() == []


def test_record_index_values_are_what_fastavro_writes_each_time() -> None:
    """Record-index values are kept by location (encoding) and by bytes (decoding): the
    same bytes as a fresh encoding, and each key decoded with its own key."""
    parsed = fastavro.parse_schema(json.loads(SCHEMA))

    def fresh(record: MetadataRecord) -> bytes:
        buf = io.BytesIO()
        fastavro.schemaless_writer(buf, parsed, {**_raw(record), "key": ""})
        return buf.getvalue()

    locations = [
        RecordLocation("a", "9e1f2b4c-0d3a-4a8e-9b1c-2f3e4d5c6b7a-0", 1735689600000),
        RecordLocation("a", "9e1f2b4c-0d3a-4a8e-9b1c-2f3e4d5c6b7a-1", 1735689600000),
        RecordLocation("b", "9e1f2b4c-0d3a-4a8e-9b1c-2f3e4d5c6b7a-0", 1735689600000),
        RecordLocation("a", "9e1f2b4c-0d3a-4a8e-9b1c-2f3e4d5c6b7a-0", 1735689600001),
        RecordLocation("a", "not-a-uuid-file-id", 1735689600000),
        RecordLocation(None, "f1e2d3c4-b5a6-4798-8a7b-6c5d4e3f2a1b-12", None, 42),
    ]
    for round_ in range(2):  # the second round meets every value again
        for i, loc in enumerate(locations):
            record = MetadataRecord(f"key-{round_}-{i}", 5, loc)
            value = encode_value(record)
            assert value == fresh(record)
            assert decode_value(record.key, value, SCHEMA, "block") == record
    # a value with its key in it (not blank) is not one of them
    keyed = encode_value(MetadataRecord("key-x", 5, locations[0]), blank_key=False)
    assert keyed != encode_value(MetadataRecord("key-x", 5, locations[0]))
    assert decode_value("key-x", keyed, SCHEMA, "block") == MetadataRecord("key-x", 5, locations[0])


def _java_hash(text: str) -> int:
    h = 0
    for ch in text:
        h = (31 * h + ord(ch)) & 0xFFFFFFFF
    return h - (1 << 32) if h >= 1 << 31 else h


def test_physical_values_as_the_column_type() -> None:
    from hoodie.metadata_table.records import as_arrow_type

    micros = 1709280056000008
    assert as_arrow_type(micros, pa.timestamp("us", "UTC")) == dt.datetime(2024, 3, 1, 8, 0, 56, 8, tzinfo=UTC)
    assert as_arrow_type(micros, pa.timestamp("us")) == dt.datetime(2024, 3, 1, 8, 0, 56, 8)
    assert as_arrow_type(19737, pa.date32()) == dt.date(2024, 1, 15)
    assert as_arrow_type(b"\x09\xc4", pa.decimal128(10, 2)) == Decimal("25.00")
    assert as_arrow_type(b"\xff\x38", pa.decimal128(10, 2)) == Decimal("-2.00")
    assert as_arrow_type(1000, pa.time64("us")) == dt.time(0, 0, 0, 1000)
    assert as_arrow_type(7, pa.int64()) == 7 and as_arrow_type(True, pa.timestamp("us")) is True
