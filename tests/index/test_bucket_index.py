"""The bucket index: a key's bucket is bit for bit Apache Hudi 0.15's, every partition
holds at most ``hoodie.bucket.index.num.buckets`` file groups (one a bucket, its number
the file id's first eight characters), tagging reads no file, and writes give the rows
the bloom index gives."""
from __future__ import annotations

import os
from collections import Counter
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pytest
from bucket_tables import OPTS, batch, bucket_opts, check_buckets, file_groups, forget_bucket_entries, live_rows
from opened_files import OpenedFiles
from readers import hudi_rs_table

import hoodie
from hoodie.config.options import HoodieConfig
from hoodie.errors import ConfigError
from hoodie.index.bucket import BucketSpec, bucket_file_id, bucket_ids, bucket_of_file_id, hash_values, java_string_hashes
from hoodie.table.table import HoodieTable
from hoodie.writer import steps
from hoodie.writer.keygen import KeyGenerator
from hoodie.writer.prepare import add_keys
from hoodie.writer.settings import WriteSettings

# (record key, hash fields, buckets, bucket): computed by Apache Hudi 0.15.0's
# BucketIdentifier.getBucketId(recordKey, indexKeyFields, numBuckets) on the JVM
HUDI_0_15_VECTORS = [
    ("uuid-0001", "uuid", 256, 242),
    ("a", "uuid", 8, 0),
    ("", "uuid", 4, 3),
    ("ключ-ü-😀", "uuid", 256, 38),
    ("日本語キー", "uuid", 7, 4),
    ("id:1,name:bob", "id,name", 256, 101),
    ("id:1,name:bob", "name", 256, 212),
    ("id:1,name:bob", "name,id", 256, 101),  # the key's order, not the hash fields'
    ("id:__null__,name:bob", "id,name", 16, 6),
    ("id:__empty__,name:x", "id,name", 16, 9),
    ("id:a:b,name:c", "id,name", 32, 27),
    ("a:b", "uuid", 8, 1),  # a simple key holding ':' is read as a field:value part, as 0.15 does
    ("id:1,,name:2", "id,name", 10, 0),
    ("id:1,name:2,", "id,name", 10, 0),
    ("id:ü😀,name:ß", "id", 100, 2),
    ("7d8e1f3a-0000-4c1d-9f3e-1234567890ab", "uuid", 2147483647, 1876187387),
    ("z" * 68, "uuid", 1000, 31),
]


@pytest.mark.parametrize("key,fields,buckets,expected", HUDI_0_15_VECTORS)
def test_bucket_of_a_key_is_hudi_0_15s(key: str, fields: str, buckets: int, expected: int) -> None:
    assert bucket_ids(pa.array([key]), BucketSpec(buckets, tuple(fields.split(",")))).tolist() == [expected]


def test_buckets_of_a_mixed_batch_equal_one_key_at_a_time() -> None:
    spec = BucketSpec(256, ("id", "name"))
    keys = [k for k, f, n, _ in HUDI_0_15_VECTORS if f == "id,name" or ":" not in k] * 3
    one_by_one = [int(bucket_ids(pa.array([k]), spec)[0]) for k in keys]
    assert bucket_ids(pa.chunked_array([pa.array(keys[:5]), pa.array(keys[5:])]), spec).tolist() == one_by_one


def java_hash(text: str) -> int:
    """String.hashCode as the JLS defines it, one UTF-16 code unit at a time."""
    units = text.encode("utf-16-le")
    h = 0
    for i in range(0, len(units), 2):
        h = (31 * h + int.from_bytes(units[i : i + 2], "little")) & 0xFFFFFFFF
    return h


def test_string_hashes_over_utf16_code_units_with_int_overflow() -> None:
    rng = np.random.default_rng(7)
    alphabet = list("abcXYZ019-_:,") + ["é", "ß", "中", "😀", "\U0001f9ea", "\u0000"]
    texts = ["".join(rng.choice(alphabet, size=int(rng.integers(0, 80)))) for _ in range(300)] + ["", "a" * 5000]
    assert java_string_hashes(texts).tolist() == [java_hash(t) for t in texts]
    ascii_only = [t.encode("ascii", "ignore").decode() for t in texts]
    assert java_string_hashes(pa.array(ascii_only)[3:]).tolist() == [java_hash(t) for t in ascii_only[3:]]
    assert java_hash("hello") == 99162322  # Java: "hello".hashCode()


def key_bucket(key: str, spec: BucketSpec) -> int:
    """Apache Hudi 0.15's ``getBucketId`` of one key, as the JLS and ``List.hashCode`` spell
    it, over :func:`hash_values` (the one-key reading of a key's parts)."""
    h = 1
    for v in hash_values(key, spec.hash_fields) if ":" in key else [key]:
        h = (31 * h + (java_hash(v) if v is not None else 0)) & 0xFFFFFFFF
    return (h & 0x7FFFFFFF) % spec.num_buckets


@pytest.mark.parametrize("fields", [("id", "name"), ("name",), ("id", "x", "name"), ()])
def test_composite_keys_over_whole_arrays_equal_one_key_at_a_time(fields: tuple[str, ...]) -> None:
    """Composite keys in any shape (empty and trailing parts, parts without a field, a
    ':' in a value, placeholders, non-ASCII), hashed over the whole array as one at a time."""
    rng = np.random.default_rng(11)
    words = ["id", "name", "x", "", "__null__", "__empty__", "a:b", "ü😀", "中", "7", ":"]
    keys = [
        ",".join(
            f"{rng.choice(words)}:{rng.choice(words)}" if rng.random() < 0.8 else str(rng.choice(words))
            for _ in range(int(rng.integers(1, 6)))
        )
        + ("," * int(rng.integers(0, 3)) if rng.random() < 0.3 else "")
        for _ in range(2000)
    ] + [",,:", ":,", "id:1,,", "id:", ":", "a,b:c", "id:1,name:2,,,"]
    spec = BucketSpec(2147483647, fields)
    assert bucket_ids(pa.array(keys), spec).tolist() == [key_bucket(k, spec) for k in keys]
    assert bucket_ids(pa.array(keys, pa.large_string())[5:], spec).tolist() == [key_bucket(k, spec) for k in keys[5:]]


def test_file_ids_carry_their_bucket() -> None:
    file_id = bucket_file_id(42)
    assert file_id.startswith("00000042-") and file_id.endswith("-0") and len(file_id) == 38
    assert bucket_of_file_id(file_id) == 42
    assert bucket_of_file_id("d1c5d0b0-88d4-4c57-9cfd-0db3d6c6f3b5-0") is None


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_writes_give_the_rows_of_the_bloom_index(tmp_path: Path, table_type: str) -> None:
    steps_ = [
        ("insert", batch(range(0, 120), 1)),
        ("upsert", batch(range(60, 200, 2), 2, value=-1)),  # updates and inserts, some into existing buckets
        ("upsert", batch(range(0, 30), 0, value=-9)),  # older ordering values: the stored records stay
        ("delete", batch(list(range(0, 300, 7)), 3)),  # some keys the table never held, in buckets with and without groups
        ("upsert", batch(range(195, 260), 4)),
    ]
    tables = {}
    for index in ("BLOOM", "BUCKET"):
        path = str(tmp_path / index)
        opts = {**OPTS, "hoodie.index.type": index, "hoodie.bucket.index.num.buckets": "8", "hoodie.datasource.write.table.type": table_type}
        for op, data in steps_:
            hoodie.write(data, path, {**opts, "hoodie.datasource.write.operation": op})
            if index == "BUCKET":
                check_buckets(path, 8)
        tables[index] = path
    assert live_rows(tables["BUCKET"]) == live_rows(tables["BLOOM"])
    assert len(live_rows(tables["BUCKET"])) > 150
    # an independent reader sees the same rows, each key once
    rs = hudi_rs_table(tables["BUCKET"])
    assert sorted(rs.column("id").to_pylist()) == sorted(r[0] for r in live_rows(tables["BLOOM"]))


def test_merge_on_read_appends_updates_and_inserts_to_existing_buckets(tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    opts = bucket_opts(4, **{"hoodie.datasource.write.table.type": "MERGE_ON_READ"})
    hoodie.write(batch(range(0, 40, 3), 1), path, opts)
    before = file_groups(path)
    hoodie.write(batch(range(0, 40), 2), path, opts)  # new keys land in existing buckets: their logs
    after = file_groups(path)
    view = HoodieTable.open(path).view()
    for partition, ids in after.items():
        assert set(before.get(partition, [])) <= set(ids)
        for s in view.latest_slices(partition):
            if s.file_id in before.get(partition, []):
                assert s.log_files, s.file_id  # appended to, not rewritten
            else:
                assert s.base_file is not None and not s.log_files  # a new bucket starts with a base file
    check_buckets(path, 4)
    assert [r[0] for r in live_rows(path)] == [f"key-{i:04d}" for i in range(40)]


def test_tagging_reads_no_file(tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    hoodie.write(batch(range(100), 1), path, bucket_opts(8, **{"hoodie.datasource.write.table.type": "MERGE_ON_READ"}))
    table = HoodieTable.open(path)
    storage = OpenedFiles()
    view = table.view()
    settings = WriteSettings.of(HoodieConfig.of(bucket_opts(8)), "upsert")
    refs = {p: steps.index_refs(view.latest_slices(p), settings.index) for p in view.all_partition_paths()}
    records = add_keys(batch(range(50, 150), 2), KeyGenerator.from_config(HoodieConfig.of(bucket_opts(8))), False)
    tagged = steps.dedupe_and_tag(records, refs, storage, settings)
    assert storage.opened == [] and sum(storage.counters.by_kind().values()) == 0
    located = tagged.filter(pc.is_valid(tagged.column(steps.FILE_ID_COLUMN)))
    assert located.num_rows == 100  # every record has its bucket's group: existing, or one to create
    # the whole upsert on merge-on-read reads no data file either: its records go to logs or new base files
    hoodie.write(batch(range(50, 150), 2), path, bucket_opts(8), storage=storage)
    assert data_files(storage) == []
    # on a table that does not record its number of buckets (Apache Hudi's), one footer is read
    # to check it (index.bucket_table.check_bucket_count), and nothing else
    forget_bucket_entries(path)
    storage = OpenedFiles()
    hoodie.write(batch(range(100, 200), 3), path, bucket_opts(8), storage=storage)
    opened = data_files(storage)
    assert len(opened) == 1 and opened[0].endswith(".parquet") and storage.counters.calls["footer"] == 1, opened


def data_files(storage: OpenedFiles) -> list[str]:
    """The data files (base and log files, not the metadata table's) a write opened."""
    return [f for f in storage.opened if "/.hoodie/" not in f and (f.endswith(".parquet") or ".log." in os.path.basename(f))]


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_bulk_insert_insert_and_overwrite_keep_one_group_a_bucket(tmp_path: Path, table_type: str) -> None:
    path = str(tmp_path / "t")
    opts = bucket_opts(4, **{"hoodie.datasource.write.table.type": table_type})
    hoodie.write(batch(range(0, 60), 1), path, {**opts, "hoodie.datasource.write.operation": "bulk_insert"})
    check_buckets(path, 4)
    hoodie.write(batch(range(60, 90), 1), path, {**opts, "hoodie.datasource.write.operation": "bulk_insert"})
    hoodie.write(batch(range(90, 120), 1), path, {**opts, "hoodie.datasource.write.operation": "insert"})
    check_buckets(path, 4)
    assert [r[0] for r in live_rows(path)] == [f"key-{i:04d}" for i in range(120)]
    groups_before = file_groups(path)
    hoodie.write(batch(range(0, 9, 3), 5), path, {**opts, "hoodie.datasource.write.operation": "insert_overwrite"})
    check_buckets(path, 4)
    rows = live_rows(path)
    # the partition written holds only the new rows, in new groups of their buckets; the others stay
    assert [r[0] for r in rows if r[1] == "p0"] == [f"key-{i:04d}" for i in range(0, 9, 3)]
    assert not set(file_groups(path)["p0"]) & set(groups_before["p0"])
    assert [r[0] for r in rows if r[1] != "p0"] == [f"key-{i:04d}" for i in range(120) if i % 3]


def test_refusals_name_the_values(tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    with pytest.raises(ConfigError, match="CONSISTENT_HASHING|expected 'SIMPLE'"):
        hoodie.write(batch(range(3), 1), path, bucket_opts(4, **{"hoodie.index.bucket.engine": "CONSISTENT_HASHING"}))
    with pytest.raises(ConfigError, match="hoodie.bucket.index.hash.field='ts'.*subset.*ts is not one"):
        hoodie.write(batch(range(3), 1), path, bucket_opts(4, **{"hoodie.bucket.index.hash.field": "ts"}))
    with pytest.raises(ConfigError, match="invalid value '0' for option hoodie.bucket.index.num.buckets"):
        hoodie.write(batch(range(3), 1), path, bucket_opts(0))
    assert not os.path.exists(path)  # nothing was created
    hoodie.write(batch(range(40), 1), path, bucket_opts(8))
    with pytest.raises(ConfigError, match=r"num.buckets=4, but .* was created with hoodie.bucket.index.num.buckets=8"):
        hoodie.write(batch(range(40), 2), path, bucket_opts(4))
    forget_bucket_entries(path)  # as Apache Hudi makes it: the footer checked, or a group of a bucket beyond the number given
    with pytest.raises(ConfigError, match=r"is bucket [4-7], but hoodie.bucket.index.num.buckets=4: the number of buckets|but that group is bucket [4-7]"):
        hoodie.write(batch(range(40), 2), path, bucket_opts(4))
    with pytest.raises(ConfigError, match="insert.drop.duplicates=true with hoodie.index.type=BUCKET"):
        drop = {"hoodie.datasource.write.insert.drop.duplicates": "true", "hoodie.datasource.write.operation": "insert"}
        hoodie.write(batch(range(3), 1), path, bucket_opts(8, **drop))
    assert live_rows(path) == sorted((f"key-{i:04d}", f"p{i % 3}", 1, i) for i in range(40))
    other = str(tmp_path / "bloom")
    hoodie.write(batch(range(40), 1), other, OPTS)
    with pytest.raises(ConfigError, match="not a bucket's.*written with another index type"):
        hoodie.write(batch(range(40), 2), other, bucket_opts(8))


def test_hash_field_subset_of_a_complex_key(tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    opts = {**bucket_opts(4), "hoodie.datasource.write.recordkey.field": "id,v", "hoodie.bucket.index.hash.field": "id"}
    hoodie.write(batch(range(30), 1), path, opts)
    hoodie.write(batch(range(0, 30, 2), 2), path, opts)
    t = hoodie.read(path)
    assert t.num_rows == 30 and Counter(t.column("ts").to_pylist()) == {1: 15, 2: 15}
    # the bucket comes from the id part alone
    spec = BucketSpec(4, ("id",))
    for key, file_name in zip(t.column("_hoodie_record_key").to_pylist(), t.column("_hoodie_file_name").to_pylist()):
        assert bucket_of_file_id(file_name) == bucket_ids(pa.array([key]), spec)[0]
        assert bucket_ids(pa.array([key.split(",")[0].split(":")[1]]), spec)[0] == bucket_of_file_id(file_name)
