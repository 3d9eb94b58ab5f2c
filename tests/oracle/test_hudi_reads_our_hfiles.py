"""Apache Hudi's own HFile reader (hudi-io ``HFileReaderImpl``, the reader of the
metadata table) reads the HFiles hoodie writes: every entry in order, the file info,
the bloom filter meta block and its point and prefix seeks."""
from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from hudi_oracle import HUDI_0_15, HudiOracle

from hoodie.formats.bloom import new_bloom_filter, serialize_filter
from hoodie.formats.hfile import HFileSettings, write_hfile
from hoodie.storage.local import LocalStorage

SEEK_TO_BEFORE_FILE_FIRST_KEY, SEEK_TO_FOUND, SEEK_TO_IN_RANGE, SEEK_TO_EOF = -1, 0, 1, 2


@pytest.mark.parametrize("version", [HUDI_0_15])
def test_apache_hudi_reads_hoodies_hfile(version: str, hudi_oracle: Callable[[str], HudiOracle], tmp_path: Path) -> None:
    oracle = hudi_oracle(version)
    # metadata-table-like keys and values of varied size, in 4 KiB GZ blocks (many
    # blocks, midpoint index keys), one value larger than a block
    keys = sorted([f"city={c}/{i:05d}" for c in ("austin", "chennai", "sao_paulo") for i in range(400)])
    entries = [(k, (k.encode() * (1 + i % 7))[: 20 + (i * 37) % 300]) for i, k in enumerate(keys)]
    entries[500] = (entries[500][0], bytes(range(256)) * 40)
    bloom = new_bloom_filter(2000, 0.000001, "DYNAMIC_V0", 10000)
    for key, _ in entries:
        bloom.add(key)
    schema = '{"type":"record","name":"HoodieMetadataRecord","fields":[{"name":"key","type":"string"}]}'
    path = tmp_path / "files-0000-0_0-1-1_20250101000000000.hfile"
    write_hfile(LocalStorage(), str(path), entries, HFileSettings(block_size=4096), schema=schema, bloom_filter=bloom)

    lookups = ["a", "city=austin/00007", "city=chennai/00399", "city=chennai/00399a", "city=sao_paulo/00000", "city=sao_paulo/00399", "zzz"]
    answer = oracle.read_hfile(path, ["schema", "minRecordKey", "maxRecordKey", "bloomFilterTypeCode"], ["bloomFilter"], lookups)

    assert answer["count"] == len(entries)
    assert [(k, bytes.fromhex(v)) for k, v in answer["entries"]] == entries
    assert {k: bytes.fromhex(v) for k, v in answer["info"].items()} == {
        "schema": schema.encode(), "minRecordKey": keys[0].encode(), "maxRecordKey": keys[-1].encode(), "bloomFilterTypeCode": b"DYNAMIC_V0",
    }
    assert bytes.fromhex(answer["meta"]["bloomFilter"]).decode() == serialize_filter(bloom)
    value = dict(entries)
    codes = [(code, cursor[0] if cursor else None) for code, cursor in answer["lookups"]]
    assert codes == [
        (SEEK_TO_BEFORE_FILE_FIRST_KEY, keys[0]),
        (SEEK_TO_FOUND, "city=austin/00007"),
        (SEEK_TO_FOUND, "city=chennai/00399"),
        (SEEK_TO_IN_RANGE, "city=chennai/00399"),
        (SEEK_TO_FOUND, "city=sao_paulo/00000"),
        (SEEK_TO_FOUND, "city=sao_paulo/00399"),
        (SEEK_TO_EOF, None),
    ]
    for _code, cursor in answer["lookups"]:
        if cursor:
            assert bytes.fromhex(cursor[1]) == value[cursor[0]]


@pytest.mark.parametrize("version", [HUDI_0_15])
def test_apache_hudi_reads_hoodies_empty_hfile(version: str, hudi_oracle: Callable[[str], HudiOracle], tmp_path: Path) -> None:
    path = tmp_path / "empty.hfile"
    write_hfile(LocalStorage(), str(path), [], schema='{"type":"record","name":"r","fields":[]}')
    answer = hudi_oracle(version).read_hfile(path, ["schema"], [], ["any"])
    assert answer["count"] == 0 and answer["entries"] == []
    assert answer["lookups"] == [[SEEK_TO_EOF, None]]
