"""Bloom filters probed and extended in their footer Base64 text (hoodie.formats.bloom_footer)
agree bit for bit with decoding the filter, adding keys and encoding it again."""
from __future__ import annotations

import base64
import random

import numpy as np
import pytest

from hoodie.errors import FormatError
from hoodie.formats.bloom import DynamicBloomFilter, SimpleBloomFilter, new_bloom_filter, serialize_filter
from hoodie.formats.bloom_footer import EncodedBloomFilter, continue_encoded, read_footer_index


def _keys(n: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    return [f"key-{rng.getrandbits(48):012x}-{i}" for i in range(n)]


def _encoded(f) -> EncodedBloomFilter:
    return EncodedBloomFilter(serialize_filter(f).encode(), f.type_code)


# Sizes chosen so the decoded length is 0, 1 and 2 modulo 3 (Base64 with 0, 2 and 1 '=').
@pytest.mark.parametrize("num_entries", [997, 1000, 1001, 60000])
@pytest.mark.parametrize("filter_type", ["SIMPLE", "DYNAMIC_V0"])
def test_probe_matches_decoded(num_entries: int, filter_type: str) -> None:
    f = new_bloom_filter(num_entries=num_entries, fpp=1e-4, filter_type=filter_type, max_entries=4 * num_entries)
    members = _keys(min(num_entries, 3000) * (2 if filter_type == "DYNAMIC_V0" else 1), seed=num_entries)
    f.add_many(members)
    if filter_type == "DYNAMIC_V0":
        assert len(f.rows) >= 2 or num_entries >= len(members)
    probe = members + _keys(5000, seed=7)
    enc = _encoded(f)
    assert np.array_equal(enc.might_contain_many(probe), f.might_contain_many(probe))
    assert enc.might_contain_many(members).all()
    assert [enc.might_contain(k) for k in probe[::97]] == [f.might_contain(k) for k in probe[::97]]
    assert enc.decode() == f


@pytest.mark.parametrize("num_entries", [998, 1000, 1001])
def test_with_keys_is_byte_identical(num_entries: int) -> None:
    f = new_bloom_filter(num_entries=num_entries, fpp=1e-6, max_entries=10 * num_entries)
    f.add_many(_keys(1500, seed=1))  # two rows, the second partly full
    enc = _encoded(f)
    added = _keys(num_entries - f.current_nb_record, seed=2)  # exactly fills the active row
    out = enc.with_keys(added)
    f.add_many(added)
    assert out is not None and out.text == serialize_filter(f).encode()
    assert out.current_nb_record == f.current_nb_record and out.key_count == 1500 + len(added)
    assert out.with_keys(["one more"]) is None  # would open a new row: caller decodes instead


def test_with_keys_refuses_simple_filters() -> None:
    f = SimpleBloomFilter.for_entries(100, 1e-3)
    assert _encoded(f).with_keys(["a"]) is None


def test_continue_encoded_follows_continue_filter_rules() -> None:
    f = new_bloom_filter()  # Hudi's defaults: 60,000 keys a row at 1e-9
    f.add_many(_keys(1000, seed=3))
    enc = _encoded(f)
    new = _keys(10, seed=4)
    out = continue_encoded(enc, new, live_keys=1010, num_entries=60000, fpp=1e-9, filter_type="DYNAMIC_V0")
    f.add_many(new)
    assert out is not None and out.text == serialize_filter(f).encode()
    # other sizing, other type, or a filter holding far more keys than the file: rebuild
    assert continue_encoded(enc, new, 1010, 50000, 1e-9, "DYNAMIC_V0") is None
    assert continue_encoded(enc, new, 1010, 60000, 1e-9, "SIMPLE") is None
    assert continue_encoded(enc, new, 100, 60000, 1e-9, "DYNAMIC_V0") is None


def test_footer_index_keeps_text_and_decodes_on_demand() -> None:
    f = new_bloom_filter(num_entries=500, fpp=1e-5)
    f.add_many(["a", "b"])
    md = {b"org.apache.hudi.bloomfilter": serialize_filter(f).encode(), b"hoodie_bloom_filter_type_code": b"DYNAMIC_V0"}
    idx = read_footer_index(md)
    assert idx is not None and idx.bloom is not None and idx.bloom.text == md[b"org.apache.hudi.bloomfilter"]
    assert isinstance(idx.bloom_filter, DynamicBloomFilter) and idx.bloom_filter == f


def test_corrupt_text_is_refused() -> None:
    f = new_bloom_filter(num_entries=500, fpp=1e-5)
    f.add_many(_keys(100, seed=5))
    text = serialize_filter(f).encode()
    with pytest.raises(FormatError, match="multiple of 4"):
        EncodedBloomFilter(text[:-1], "DYNAMIC_V0")
    with pytest.raises(FormatError, match="truncated"):
        EncodedBloomFilter(text[: len(text) // 2], "DYNAMIC_V0")
    with pytest.raises(FormatError, match="type code"):
        EncodedBloomFilter(text, "SIMPLE")  # a dynamic filter read as simple
    with pytest.raises(FormatError, match="not recognizable"):
        EncodedBloomFilter(text, "BLOOMIER")
    with pytest.raises(FormatError, match="Base64"):
        EncodedBloomFilter(b"!!!!" + text[4:], "DYNAMIC_V0")
    # a bad character in the bit vector: found by the probes that read it, or on extending
    broken = bytearray(text)
    broken[100:-8] = b"*" * (len(text) - 108)
    enc = EncodedBloomFilter(bytes(broken), "DYNAMIC_V0")
    with pytest.raises(FormatError, match="invalid character"):
        enc.might_contain_many(_keys(2000, seed=6))
    with pytest.raises(FormatError, match="invalid character"):
        enc.with_keys(["x"])
    assert base64.b64decode(text)  # the original is fine
