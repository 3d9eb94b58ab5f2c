"""Bloom and simple indexes find exactly the files holding the keys; the bloom index
prunes by key range and bloom filter before reading any file's keys, and a bloom false
positive never turns an insert into an update."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

import hoodie
from hoodie.formats import parquet as pq_format
from hoodie.index import BucketSpec, FileRef, IndexSettings, tag_partition
from hoodie.storage.local import LocalStorage
from hoodie.table.table import HoodieTable

OPTS = {
    "hoodie.table.name": "t",
    "hoodie.datasource.write.recordkey.field": "k",
    "hoodie.datasource.write.partitionpath.field": "p",
    "hoodie.index.bloom.num_entries": "1000",
    "hoodie.parquet.small.file.limit": "0",
}


def build(tmp_path: Path, files: int = 6, per_file: int = 200) -> tuple[HoodieTable, list[FileRef]]:
    path = str(tmp_path / "t")
    for f in range(files):  # one commit per file: disjoint, increasing key ranges
        keys = [f"key-{f:02d}-{i:04d}" for i in range(per_file)]
        hoodie.write(
            pa.table({"k": keys, "p": ["a"] * per_file, "v": list(range(per_file))}), path, {**OPTS, "hoodie.datasource.write.operation": "bulk_insert"}
        )
    table = HoodieTable.open(path)
    refs = [FileRef(s.file_id, s.base_instant, s.base_file.path) for s in table.view().latest_slices("a")]
    return table, refs


@pytest.mark.parametrize("index_type", ["BLOOM", "SIMPLE"])
def test_tagging_finds_existing_keys_only(tmp_path: Path, index_type: str) -> None:
    table, refs = build(tmp_path)
    # a batch not combined before upserting may hold a key twice: both copies are found
    keys = pa.array(["key-03-0007", "key-00-0199", "nope", "key-05-0000", "key-99-0000", "key-03-0007", "nope"])
    result = tag_partition(keys, refs, table.storage, IndexSettings(index_type))
    holders = [refs[p].file_id if p >= 0 else None for p in result.file_pos]
    by_key = {}
    for ref in refs:
        for k in pq_format.read_record_keys(table.storage, ref.path).to_pylist():
            by_key[k] = ref.file_id
    assert holders == [by_key.get(k) for k in keys.to_pylist()]


def test_bloom_index_prunes_before_reading_keys(tmp_path: Path) -> None:
    table, refs = build(tmp_path)
    storage = LocalStorage()
    result = tag_partition(pa.array(["key-02-0100"]), refs, storage, IndexSettings("BLOOM"))
    assert refs[result.file_pos[0]].file_id
    assert result.keys_verified == 1, "only the one file whose range and bloom filter match is read"
    simple = tag_partition(pa.array(["key-02-0100"]), refs, storage, IndexSettings("SIMPLE"))
    assert simple.keys_verified == len(refs)


def test_bloom_false_positive_is_verified_away(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    table, refs = build(tmp_path, files=2)
    # force every bloom filter to answer "maybe" and disable range pruning
    from hoodie.formats.bloom_footer import EncodedBloomFilter

    monkeypatch.setattr(EncodedBloomFilter, "might_contain_many", lambda self, keys: np.ones(len(keys), dtype=bool))
    monkeypatch.setattr(EncodedBloomFilter, "might_contain", lambda self, key: True)
    result = tag_partition(pa.array(["key-00-0005", "key-00-9999"]), refs, table.storage, IndexSettings("BLOOM", prune_by_ranges=False))
    assert result.file_pos[0] >= 0 and result.file_pos[1] == -1
    path = table.base_path
    hoodie.write(pa.table({"k": ["key-00-9999"], "p": ["a"], "v": [1]}), path, OPTS)
    rows = hoodie.read(path).column("k").to_pylist()
    assert rows.count("key-00-9999") == 1 and len(rows) == 401


def test_bloom_probe_stops_at_the_first_key_through(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A file whose filter lets one key through is read, and every candidate is checked
    against its keys without probing the rest; a file ruling out every candidate has all
    of them probed and is not read."""
    from hoodie.formats.bloom_footer import EncodedBloomFilter

    table, refs = build(tmp_path, files=1, per_file=200)
    probed: list[int] = []
    real_many, real_one = EncodedBloomFilter.might_contain_many, EncodedBloomFilter.might_contain

    def counting_many(self: EncodedBloomFilter, keys: pa.Array) -> np.ndarray:
        probed.append(len(keys))
        return real_many(self, keys)

    def counting_one(self: EncodedBloomFilter, key: str) -> bool:
        probed.append(1)
        return real_one(self, key)

    monkeypatch.setattr(EncodedBloomFilter, "might_contain_many", counting_many)
    monkeypatch.setattr(EncodedBloomFilter, "might_contain", counting_one)
    present = [f"key-00-{i:04d}" for i in range(0, 200, 2)]
    absent = [f"key-00-{i:04d}x" for i in range(150)]  # inside the key range, not in the file
    result = tag_partition(pa.array(present + absent), refs, table.storage, IndexSettings("BLOOM"))
    assert probed == [1], "the first key is probed alone, and probing stops once a key gets through"
    assert result.keys_verified == len(present) + len(absent)
    assert (result.file_pos[: len(present)] == 0).all() and (result.file_pos[len(present) :] == -1).all()

    probed.clear()
    result = tag_partition(pa.array(absent), refs, table.storage, IndexSettings("BLOOM"))
    assert sum(probed) == len(absent) and result.keys_verified == 0 and (result.file_pos == -1).all()


@pytest.mark.parametrize(
    "settings, routed",
    [
        (IndexSettings("BUCKET", bucket=BucketSpec(4, ("k",))), r"BUCKET, which places keys by their hash .*writer.steps.tag_by_bucket"),
        (IndexSettings("RECORD_INDEX"), r"RECORD_INDEX, a global index .*writer.global_tag"),
    ],
)
def test_indexes_that_read_no_partition_are_a_callers_mistake(tmp_path: Path, settings: IndexSettings, routed: str) -> None:
    """The writer never tags bucket or record-index writes per partition: a caller that
    does is told so, as an internal error naming where they go, with or without files."""
    table, refs = build(tmp_path)
    for files in (refs, []):
        with pytest.raises(ValueError, match=rf"^internal error: tag_partition was called for hoodie.index.type={routed}"):
            tag_partition(pa.array(["key-02-0100"]), files, table.storage, settings)
