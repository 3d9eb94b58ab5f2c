"""Bloom filters: byte-exact against every Java-written base file footer, plus hashing,
growth of the dynamic filter, serialization errors and speed."""
from __future__ import annotations

import base64
import random
import string
import uuid
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from hoodie.errors import ConfigError, FormatError, RecordError
from hoodie.formats.bloom import (
    BLOOM_FILTER_KEY,
    BLOOM_TYPE_CODE_KEY,
    MAX_KEY,
    MIN_KEY,
    OLD_BLOOM_FILTER_KEY,
    DynamicBloomFilter,
    SimpleBloomFilter,
    deserialize_filter,
    hadoop_murmur_hash,
    key_positions,
    new_bloom_filter,
    serialize_filter,
)
from hoodie.formats.bloom_footer import footer_metadata, read_footer_index

HOODIE_FOOTER_KEYS = {k.encode() for k in (BLOOM_FILTER_KEY, BLOOM_TYPE_CODE_KEY, MIN_KEY, MAX_KEY)}


def _foreign_keys(count: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    keys = [str(uuid.UUID(int=rng.getrandbits(128), version=4)) for _ in range(count // 2)]
    keys += [f"id:{rng.randrange(10**6, 10**9)},name:{rng.choice(['Zed', 'Yan', 'Xi'])}" for _ in range(count // 4)]
    keys += [str(rng.randrange(10**6, 10**12)) for _ in range(count - len(keys))]
    return keys


# --------------------------------------------------------------------------------------
# Conformance: every base file of every table
# --------------------------------------------------------------------------------------


def test_conformance_base_file(conformance_tables: dict[str, Path], conformance_base_file: tuple[str, str]) -> None:
    table_key, rel = conformance_base_file
    path = conformance_tables[table_key] / rel
    metadata = pq.read_metadata(path).metadata
    keys = pq.read_table(path, columns=["_hoodie_record_key"]).column(0).to_pylist()
    index = read_footer_index(metadata)

    if index is None:
        # Only tables written with hoodie.populate.meta.fields=false lack the footer; their
        # record key column is null (spec 4.2 / 5).
        assert all(k is None for k in keys), f"{rel}: keys present but no bloom footer"
        return

    bloom = index.bloom_filter
    assert bloom is not None
    assert isinstance(bloom, DynamicBloomFilter)  # every sample uses the default type
    assert keys and all(k is not None for k in keys)

    # Every own key tests positive, through both paths.
    assert all(bloom.might_contain(k) for k in keys)
    assert bloom.might_contain_many(keys).all()

    # Foreign keys test negative (fpp 1e-9 with at most a handful of keys per file).
    foreign = [k for k in _foreign_keys(2000, seed=len(rel)) if k not in set(keys)]
    assert not bloom.might_contain_many(foreign).any()
    assert not any(bloom.might_contain(k) for k in foreign[:50])

    # Re-serializing gives the footer string byte for byte.
    footer_text = metadata[BLOOM_FILTER_KEY.encode()].decode("ascii")
    assert serialize_filter(bloom) == footer_text

    # Rebuilding from the file's keys (in file order) gives identical bits and counters,
    # both vectorised and key by key.
    rebuilt = new_bloom_filter()
    rebuilt.add_many(keys)
    assert rebuilt.to_bytes() == bloom.to_bytes()
    one_by_one = new_bloom_filter()
    for k in keys:
        one_by_one.add(k)
    assert one_by_one == rebuilt

    # Min/max keys are the string extremes, and the whole Hudi footer is reproduced.
    assert index.min_key == min(keys) and index.max_key == max(keys)
    ours = footer_metadata(rebuilt, min(keys), max(keys))
    theirs = [(k, v) for k, v in metadata.items() if k in HOODIE_FOOTER_KEYS]
    assert ours == dict(theirs)
    if Path(table_key).name.startswith("v6"):
        # Java 0.x wrote the entries in HashMap order (min, bloom, max, type code); Hudi
        # 1.1's Spark-native writer uses another order, which nothing depends on.
        assert list(ours.items()) == theirs


def test_conformance_sample_header(conformance_tables: dict[str, Path]) -> None:
    """Spec 5.1's worked example: header, nr, currentNbRecord and rows of a known file."""
    table = conformance_tables["sample_table/cow/v6_nonpartitioned"]
    path = next(table.glob("a079bdb3-*_0-182-253_20240418173550988.parquet"))
    data = base64.b64decode(pq.read_metadata(path).metadata[BLOOM_FILTER_KEY.encode()])
    assert data[:13].hex() == "ffffffff0000001e0100277d3e"
    assert data[13:25].hex() == "0000ea60" "00000003" "00000001"
    assert data[25:38].hex() == "ffffffff0000001e0100277d3e"  # the single row's own header
    assert len(data) == 38 + (2587966 + 7) // 8


# --------------------------------------------------------------------------------------
# Hash
# --------------------------------------------------------------------------------------

# Kafka's Utils.murmur2 (seed 0x9747b28c) is Appleby's MurmurHash2; its published test
# values are independent known answers. Hadoop's variant XORs a 2–3 byte tail in reverse
# order, so for those inputs the tail bytes are reversed here:
#   canonical(W + [t0, t1]) == hadoop(W + [t1, t0]),
#   canonical(W + [t0, t1, t2]) == hadoop(W + [t2, t1, t0]).
KAFKA_SEED = 0x9747B28C
KNOWN_ANSWERS = [
    (b"a-little-bit-long-string", -985981536),  # 24 bytes, no tail
    (b"lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8", -58897971),  # 48 bytes, no tail
    (b"12", -973932308),  # Kafka: "21"
    (b"foobra", -790332482),  # Kafka: "foobar"
    (b"cba", 479470107),  # Kafka: "abc"
    (b"a-little-bit-longer-strign", -1486304829),  # Kafka: "...-string"
]


@pytest.mark.parametrize(("data", "expected"), KNOWN_ANSWERS)
def test_murmur_known_answers(data: bytes, expected: int) -> None:
    assert hadoop_murmur_hash(data, KAFKA_SEED) == expected
    # A signed seed (what Java chains between rounds) gives the same result.
    assert hadoop_murmur_hash(data, KAFKA_SEED - (1 << 32)) == expected


def test_murmur_sign_extended_tail() -> None:
    """A single tail byte >= 0x80 is sign-extended (Java byte), spelled out step by step."""
    m = 0x5BD1E995
    mask = 0xFFFFFFFF
    h = (0 ^ 1) & mask  # seed 0 XOR length 1
    h ^= 0xFFFFFF80  # (int) (byte) 0x80
    h = (h * m) & mask
    h ^= h >> 13
    h = (h * m) & mask
    h ^= h >> 15
    expected = h - (1 << 32) if h & 0x80000000 else h
    assert hadoop_murmur_hash(b"\x80", 0) == expected
    # Without sign extension the value would differ.
    assert hadoop_murmur_hash(b"\x80", 0) != hadoop_murmur_hash(b"\x00", 0)


def test_murmur_result_is_signed_int32() -> None:
    values = [hadoop_murmur_hash(f"k{i}".encode(), 0) for i in range(2000)]
    assert all(-(1 << 31) <= v < (1 << 31) for v in values)
    assert any(v < 0 for v in values)


def _random_keys(count: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    alphabet = string.ascii_letters + string.digits + ":,/_-=" + "éß中文😀"
    return ["".join(rng.choice(alphabet) for _ in range(rng.randint(1, 70))) for _ in range(count)]


def test_vectorised_hash_matches_scalar() -> None:
    keys = _random_keys(3000, seed=7)  # lengths 1..70 bytes+, every tail size, non-ASCII
    vec = SimpleBloomFilter(1_000_003, 7)
    vec.add_many(keys)
    scalar = SimpleBloomFilter(1_000_003, 7)
    for k in keys:
        scalar.add(k)
    assert vec == scalar
    probe = keys[:500] + _random_keys(2000, seed=8)
    expected = np.array([scalar.might_contain(k) for k in probe])
    assert np.array_equal(vec.might_contain_many(probe), expected)
    assert expected[:500].all()


def test_positions_hashed_once_build_the_same_filters() -> None:
    """key_positions of many keys, handed out in slices to add_positions, build exactly the
    filters add_many builds from each slice (dynamic rows growing included)."""
    keys = _random_keys(700, seed=11)
    sizing = DynamicBloomFilter(100, 1e-6, 250)
    positions = key_positions(keys, sizing.num_hashes, sizing.num_bits)
    for lo, hi in ((0, 40), (40, 400), (400, 700)):
        by_keys, by_positions = DynamicBloomFilter(100, 1e-6, 250), DynamicBloomFilter(100, 1e-6, 250)
        by_keys.add_many(keys[lo:hi])
        by_positions.add_positions(positions[lo:hi])
        assert by_positions.to_bytes() == by_keys.to_bytes()
    simple = SimpleBloomFilter(10_007, 5)
    simple.add_positions(key_positions(keys, 5, 10_007))
    reference = SimpleBloomFilter(10_007, 5)
    reference.add_many(keys)
    assert simple == reference
    with pytest.raises(ValueError, match="per key"):
        simple.add_positions(positions)  # sized for another filter
    with pytest.raises(ValueError, match="outside"):
        simple.add_positions(np.full((1, 5), 10_007))


def test_add_many_accepts_arrow_arrays() -> None:
    keys = [f"key-{i}" for i in range(1000)]
    from_list = new_bloom_filter()
    from_list.add_many(keys)
    sliced = pa.array(["x"] * 3 + keys, pa.string()).slice(3)  # non-zero offset
    from_arrow = new_bloom_filter()
    from_arrow.add_many(sliced)
    chunked = new_bloom_filter()
    chunked.add_many(pa.chunked_array([keys[:400], keys[400:]], pa.large_string()))
    assert from_list == from_arrow == chunked
    assert from_arrow.might_contain_many(pa.array(keys)).all()


def test_bad_keys_rejected() -> None:
    f = new_bloom_filter()
    with pytest.raises(RecordError):
        f.add("")
    with pytest.raises(RecordError):
        f.add_many(["a", ""])
    with pytest.raises(RecordError):
        f.add_many(["a", None])  # type: ignore[list-item]
    with pytest.raises(RecordError):
        f.add_many(pa.array([1, 2]))  # type: ignore[arg-type]
    assert f.might_contain_many([]).shape == (0,)


# --------------------------------------------------------------------------------------
# Sizing, growth, serialization
# --------------------------------------------------------------------------------------


def test_default_sizing() -> None:
    f = new_bloom_filter()
    assert isinstance(f, DynamicBloomFilter)
    assert (f.num_bits, f.num_hashes, f.num_entries, f.max_entries) == (2587966, 30, 60000, 100000)
    s = SimpleBloomFilter.for_entries(60000, 1e-9)
    assert (s.num_bits, s.num_hashes) == (2587966, 30)
    assert isinstance(new_bloom_filter(filter_type="simple"), SimpleBloomFilter)
    with pytest.raises(ConfigError):
        new_bloom_filter(filter_type="BLOOMIER")
    with pytest.raises(ConfigError):
        new_bloom_filter(num_entries=0)
    with pytest.raises(ConfigError):
        new_bloom_filter(fpp=1.5)


def test_dynamic_growth_matches_key_by_key() -> None:
    """Rows grow while rows*nr < max, then keys go round-robin (first overflow twice to row 0)."""
    keys = [f"key-{i:04d}" for i in range(47)]

    def build(chunks: list[int]) -> DynamicBloomFilter:
        f = DynamicBloomFilter(10, 1e-6, 25)
        start = 0
        for size in chunks:
            if size == 1:
                f.add(keys[start])
            else:
                f.add_many(keys[start : start + size])
            start += size
        assert start == len(keys)
        return f

    reference = build([1] * len(keys))
    for chunks in ([47], [5, 15, 20, 7], [30, 1, 16], [9, 1, 1, 1, 35]):
        assert build(chunks).to_bytes() == reference.to_bytes()

    assert len(reference.rows) == 3  # 3 * 10 >= 25 stops growth
    assert reference.current_nb_record == 10 + (47 - 30)  # keeps counting past nr
    assert reference.might_contain_many(keys).all()

    # Row of each key: 0-9 row 0, 10-19 row 1, 20-29 row 2, then 30 → row 0 (no index
    # advance), 31 → row 0, 32 → row 1, 33 → row 2, 34 → row 0, ...
    expected_rows = [0] * 10 + [1] * 10 + [2] * 10 + [0] + [i % 3 for i in range(16)]
    for key, row in zip(keys, expected_rows):
        hits = [r.might_contain(key) for r in reference.rows]
        assert hits[row], (key, row, hits)


def test_simple_roundtrip_and_offsets() -> None:
    f = SimpleBloomFilter(1001, 3)  # not a multiple of 8: exercises the padding byte
    f.add_many(["a", "bb", "ccc", "dddd"])
    data = f.to_bytes()
    assert data[:13] == bytes.fromhex("ffffffff" "00000003" "01" "000003e9")
    assert len(data) == 13 + 126
    g, end = SimpleBloomFilter.from_bytes(b"xx" + data + b"yy", 2)
    assert end == 2 + len(data)
    assert g == f
    assert g.cardinality() == f.cardinality() > 0
    assert deserialize_filter(serialize_filter(f), None) == f
    assert deserialize_filter(serialize_filter(f), "SIMPLE") == f


def test_padding_bits_are_dropped_on_read() -> None:
    f = SimpleBloomFilter(12, 2)
    data = bytearray(f.to_bytes())
    data[-1] = 0xFF  # bits 12..15 do not exist; Java ignores them
    g, _ = SimpleBloomFilter.from_bytes(bytes(data))
    assert g.to_bytes()[-1] == 0x0F


def test_dynamic_roundtrip() -> None:
    f = DynamicBloomFilter(100, 1e-4, 250)
    f.add_many([f"k{i}" for i in range(260)])
    text = serialize_filter(f)
    g = deserialize_filter(text, "DYNAMIC_V0")
    assert isinstance(g, DynamicBloomFilter)
    assert g == f and serialize_filter(g) == text
    assert len(g.rows) == 3 and g.current_nb_record == 60
    # Java does not serialize the bound: more keys never open a new row.
    g.add_many([f"x{i}" for i in range(500)])
    assert len(g.rows) == 3


def test_deserialize_errors() -> None:
    dynamic = serialize_filter(DynamicBloomFilter(100, 1e-3, 1000))
    with pytest.raises(FormatError):
        deserialize_filter(dynamic, None)  # dynamic bytes read as SIMPLE leave bytes over
    with pytest.raises(FormatError):
        deserialize_filter("not base64!!", None)
    with pytest.raises(FormatError):
        deserialize_filter(dynamic, "DYNAMIC_V9")
    raw = base64.b64decode(dynamic)
    with pytest.raises(FormatError):
        deserialize_filter(base64.b64encode(raw[:-1]).decode(), "DYNAMIC_V0")  # truncated
    jenkins = bytearray(SimpleBloomFilter(64, 2).to_bytes())
    jenkins[8] = 0  # hash type 0 = Jenkins
    with pytest.raises(FormatError):
        SimpleBloomFilter.from_bytes(bytes(jenkins))
    with pytest.raises(FormatError):
        SimpleBloomFilter.from_bytes(b"\x00\x00\x00\x05" + b"\x00" * 20)  # unversioned format


# --------------------------------------------------------------------------------------
# Footer helpers
# --------------------------------------------------------------------------------------


def test_footer_metadata_simple_and_old_key() -> None:
    f = new_bloom_filter(filter_type="SIMPLE")
    f.add_many(["b", "a", "c"])
    md = footer_metadata(f, "a", "c")
    assert list(md) == [MIN_KEY.encode(), BLOOM_FILTER_KEY.encode(), MAX_KEY.encode()]  # no type code
    idx = read_footer_index(md)
    assert idx is not None and idx.bloom_filter == f and (idx.min_key, idx.max_key) == ("a", "c")

    old = {OLD_BLOOM_FILTER_KEY.encode(): md[BLOOM_FILTER_KEY.encode()]}
    idx_old = read_footer_index(old)
    assert idx_old is not None and idx_old.bloom_filter == f and idx_old.min_key is None

    assert read_footer_index(None) is None
    assert read_footer_index({b"writer.model.name": b"avro"}) is None
    no_range = footer_metadata(new_bloom_filter(), None, None)
    assert list(no_range) == [BLOOM_FILTER_KEY.encode(), BLOOM_TYPE_CODE_KEY.encode()]


def test_footer_survives_parquet(tmp_path: Path) -> None:
    keys = [f"id:{i}" for i in range(100)]
    f = new_bloom_filter()
    f.add_many(keys)
    table = pa.table({"_hoodie_record_key": keys})
    path = tmp_path / "x.parquet"
    with pq.ParquetWriter(path, table.schema, store_schema=False) as w:
        w.write_table(table)
        w.add_key_value_metadata(footer_metadata(f, min(keys), max(keys)))
    idx = read_footer_index(pq.read_metadata(path).metadata)
    assert idx is not None and idx.bloom_filter == f
    assert (idx.min_key, idx.max_key) == ("id:0", "id:99")
