"""Many sorted keys looked up at once (``HFileReader.get_many`` through
``formats/hfile/batch_lookup.py``): entries located and compared with numpy give exactly
what one lookup a key gives, in files hoodie writes (values full of zero bytes and false
entry starts, keys that differ by trailing NUL bytes, values of 64 KiB and more, which
take the entry-by-entry path) and in the HFiles HBase wrote for Hudi (memstore
timestamps: ``test_hfile_reader.py``)."""
from __future__ import annotations

import random

import numpy as np
import pytest

from hoodie.errors import FormatError
from hoodie.formats.hfile import HFileReader
from hoodie.formats.hfile.batch_lookup import entry_starts
from hoodie.formats.hfile.blocks import DATA
from hoodie.formats.hfile.writer import HFileSettings, encode_hfile


def _one_by_one(reader: HFileReader, keys: list[str]) -> dict[str, bytes]:
    return {k: v for k in keys if (v := reader.get(k)) is not None}


def _entries(rng: random.Random, n: int, big_every: int = 0) -> list[tuple[str, bytes]]:
    keys = sorted({f"k{rng.randrange(10**7):07d}" + "x" * rng.randrange(4) for _ in range(n)} | {"a", "a\x00", "a\x00\x00", "b\x00c"})
    out = []
    for i, key in enumerate(keys):
        # zero bytes and byte runs that look like an entry's lengths, inside values
        value = bytes([0, 0, 0, 33, 0, 0, 0, 9, 0, 21]) * rng.randrange(3) + bytes(rng.randrange(256) for _ in range(rng.randrange(40)))
        if big_every and i % big_every == 0:
            value += b"\x00" * 70_000
        out.append((key, value))
    return out


@pytest.mark.parametrize("big_every", [0, 97])
def test_sorted_lookups_equal_one_lookup_a_key(big_every: int) -> None:
    rng = random.Random(big_every + 5)
    entries = _entries(rng, 3000, big_every)
    data = encode_hfile(entries, HFileSettings(block_size=8192))
    reader = HFileReader.from_bytes(data, "t")
    keys = [k for k, _ in entries]
    asked = sorted(set(rng.sample(keys, 900)) | {k + "0" for k in rng.sample(keys, 300)} | {"", "a", "a\x00", "a\x00\x00\x00", "b", "zz"})
    got = reader.get_many(asked)
    assert got == _one_by_one(HFileReader.from_bytes(data, "t"), asked)
    assert got == {k: v for k, v in entries if k in set(asked)}
    assert got["a\x00"] == dict(entries)["a\x00"] and "a\x00\x00\x00" not in got
    # keys without NUL bytes go through numpy, among rows that differ by trailing NULs
    plain = [k for k in asked if "\x00" not in k]
    assert HFileReader.from_bytes(data, "t").get_many(plain) == {k: got[k] for k in plain if k in got}
    # every block read once, blocks holding none of the keys not at all
    assert reader.block_reads <= len(reader.root_index)
    assert HFileReader.from_bytes(data, "t").get_many(["k0000000x"]) == _one_by_one(reader, ["k0000000x"])


def test_entry_starts_are_the_entries_or_none() -> None:
    rng = random.Random(3)
    small = encode_hfile(_entries(rng, 500), HFileSettings(block_size=1 << 20))
    reader = HFileReader.from_bytes(small, "t")
    entry = reader.root_index[0]
    _, block = reader._read_block(entry.offset, entry.size, DATA)
    starts = entry_starts(np.frombuffer(block, np.uint8), reader._with_tags, reader._with_mvcc)
    assert starts is not None and len(starts) == reader.entry_count
    rows, _ = reader._parse_entries(block, entry.offset)
    assert [block[s + 10 : s + 10 + len(r)] for s, r in zip(starts.tolist(), rows)] == rows
    big = encode_hfile(_entries(random.Random(4), 50, big_every=7), HFileSettings(block_size=1 << 20))
    reader = HFileReader.from_bytes(big, "t")
    entry = reader.root_index[0]
    _, block = reader._read_block(entry.offset, entry.size, DATA)
    assert entry_starts(np.frombuffer(block, np.uint8), reader._with_tags, reader._with_mvcc) is None  # 64 KiB values
    assert entry_starts(np.frombuffer(block[:-3], np.uint8), reader._with_tags, reader._with_mvcc) is None  # cut short


def test_unsorted_keys_are_refused() -> None:
    reader = HFileReader.from_bytes(encode_hfile([("a", b"1"), ("b", b"2")]), "t")
    with pytest.raises(FormatError, match="'a' after 'b'"):
        reader.get_many(["b", "a"])


@pytest.mark.parametrize("odd_key", [None, "k0001234x", "k000"])
def test_entries_of_keys_of_one_length_are_found_by_their_key_length(odd_key: str | None) -> None:
    """Keys of one length (the record index's usual block) are found from the positions
    holding the first key's length, even when values hold those bytes too; a key of
    another length among them takes the search over every byte, with the same result."""
    rng = random.Random(11)
    keys = sorted({f"k{rng.randrange(10**7):07d}" for _ in range(3000)} | ({odd_key} if odd_key else set()))
    # the 4-byte key length of a 9-byte row (10 + 9 + family and qualifier + 9) inside values
    klen = (2 + 8 + 1 + 9).to_bytes(4, "big")
    entries = [(k, klen + bytes([0, 0, 0, rng.randrange(9)]) * rng.randrange(3) + bytes(rng.randrange(256) for _ in range(rng.randrange(30)))) for k in keys]
    data = encode_hfile(entries, HFileSettings(block_size=1 << 20))
    reader = HFileReader.from_bytes(data, "t")
    entry = reader.root_index[0]
    _, block = reader._read_block(entry.offset, entry.size, DATA)
    starts = entry_starts(np.frombuffer(block, np.uint8), reader._with_tags, reader._with_mvcc)
    rows, _ = reader._parse_entries(block, entry.offset)
    assert starts is not None and [block[s + 10 : s + 10 + len(r)] for s, r in zip(starts.tolist(), rows)] == rows
    asked = sorted(rng.sample(keys, 500) + ["k", "k99999999"])
    assert reader.get_many(asked) == _one_by_one(HFileReader.from_bytes(data, "t"), asked)
