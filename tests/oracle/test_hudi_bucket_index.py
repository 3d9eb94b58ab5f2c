"""The bucket index between hoodie and Apache Hudi 0.15: one table written in turns by
both with ``hoodie.index.type=BUCKET`` (engine SIMPLE), each side placing its upserts and
deletes in the file groups of the buckets the other side created. hoodie starts the table
on copy-on-write (hive-style), Apache Hudi on merge-on-read. After every write both read
the model's rows (no key twice), and every partition holds at most one file group a
bucket, each holding only the keys of its bucket: the hash and the file-id format are
Hudi's both ways. Apache Hudi's own ``BucketIdentifier`` also computes the buckets of
random keys, which hoodie's equal."""
from __future__ import annotations

import random
import subprocess
from collections.abc import Callable
from pathlib import Path

import pyarrow as pa
import pytest
from hudi_oracle import HUDI_0_15, HUDI_1, HudiOracle, OracleRefused, OracleSetup
from oracle_reads import HOODIE, HUDI, Turn, write_in_turns
from readers import hudi_rs_table
from sequences import Layout, batch, record

import hoodie
from hoodie.config.properties import parse_properties
from hoodie.errors import ConfigError
from hoodie.index.bucket import BucketSpec, bucket_ids, bucket_of_file_id
from hoodie.table.table import HoodieTable

BUCKETS = 4
BUCKET_OPTIONS = {"hoodie.index.type": "BUCKET", "hoodie.index.bucket.engine": "SIMPLE", "hoodie.bucket.index.num.buckets": str(BUCKETS)}
CASES = [(Layout("COPY_ON_WRITE", "hive"), HOODIE), (Layout("MERGE_ON_READ", "plain"), HUDI)]

# Apache Hudi's BucketIdentifier on the keys of a file, one "key<TAB>fields<TAB>buckets" a line
BUCKET_IDS_JAVA = """
import java.nio.file.*;
import org.apache.hudi.index.bucket.BucketIdentifier;
public class BucketIds {
  public static void main(String[] args) throws Exception {
    for (String line : Files.readAllLines(Paths.get(args[0]), java.nio.charset.StandardCharsets.UTF_8)) {
      String[] f = line.split("\\t", -1);
      System.out.println(BucketIdentifier.getBucketId(f[0], f[1], Integer.parseInt(f[2])));
    }
  }
}
"""


def test_hudis_bucket_identifier_places_keys_as_hoodie_does(hudi_setup: Callable[[str], OracleSetup], tmp_path: Path) -> None:
    setup = hudi_setup(HUDI_0_15)
    rng = random.Random(11)
    alphabet = "abcXYZ0189-_.é中ß😀\U0001f9ea"
    words = ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 30))) for _ in range(300)]
    cases = [(w, "uuid", 256) for w in words]
    cases += [(f"id:{a},name:{b}", fields, n) for a, b in zip(words[:100], words[100:200]) for fields, n in [("id,name", 1000), ("name", 7)]][:200]
    cases += [("id:__null__,name:x", "id,name", 16), ("id:__empty__,name:", "id,name", 16), ("urn:x:1", "uuid", 8)]
    lines = tmp_path / "keys.tsv"
    lines.write_text("".join(f"{k}\t{f}\t{n}\n" for k, f, n in cases), encoding="utf-8")
    source = tmp_path / "BucketIds.java"
    source.write_text(BUCKET_IDS_JAVA)
    done = subprocess.run(["java", "-cp", str(setup.jar), str(source), str(lines)], capture_output=True, text=True, timeout=300, check=True)
    hudi = [int(x) for x in done.stdout.split()]
    ours = [int(bucket_ids(pa.array([k]), BucketSpec(n, tuple(f.split(","))))[0]) for k, f, n in cases]
    assert ours == hudi


def turns(first: str) -> list[Turn]:
    """Apache Hudi 0.15 loses the arrays of the records its own bulk_insert wrote once it
    merges them (docs/apache-hudi.md): its table starts with an insert. Its fifth delta
    commit on merge-on-read is followed by its compaction, which keeps the buckets."""
    other = HUDI if first == HOODIE else HOODIE
    return [
        (first, "bulk_insert" if first == HOODIE else "insert", [record(n, 1) for n in range(30)]),
        (other, "upsert", [record(n, 2) for n in range(0, 12)] + [record(n, 1) for n in range(30, 45)]),
        (first, "upsert", [record(n, 3) for n in range(6, 16)] + [record(n, 3) for n in (31, 32)] + [record(n, 1) for n in range(45, 60)]),
        (other, "delete", [record(n, 9) for n in (0, 1, 30, 99)]),
        (first, "delete", [record(n, 9) for n in (2, 40, 98)]),
        (other, "upsert", [record(n, 4) for n in (3, 6, 31, 41)] + [record(n, 1) for n in range(60, 70)]),
        (first, "insert", [record(n, 1) for n in range(70, 80)]),
    ]


def check_buckets(path: Path, step: str) -> None:
    """At most one file group a bucket in every partition, each holding only its bucket's keys."""
    table = HoodieTable.open(str(path))
    view = table.view()
    for partition in view.all_partition_paths():
        numbers = [bucket_of_file_id(g.file_id) for g in view.file_groups(partition)]
        assert all(n is not None and n < BUCKETS for n in numbers) and len(set(numbers)) == len(numbers), f"{step}: {partition} {numbers}"
    rows = hoodie.read(str(path))
    keys = rows.column("_hoodie_record_key")
    assert [bucket_of_file_id(f) for f in rows.column("_hoodie_file_name").to_pylist()] == bucket_ids(keys, BucketSpec(BUCKETS, ("uuid",))).tolist(), step
    rs_keys = hudi_rs_table(str(path)).column("_hoodie_record_key").to_pylist()
    assert len(rs_keys) == len(set(rs_keys)) == len(keys), f"{step}: hudi-rs reads a key twice"


@pytest.mark.parametrize(("layout", "first"), CASES, ids=[f"{x.id}-{w.split()[-1].lower()}-first" for x, w in CASES])
def test_both_sides_write_to_the_buckets_the_other_created(
    layout: Layout, first: str, hudi_oracle: Callable[[str], HudiOracle], tmp_path: Path
) -> None:
    oracle = hudi_oracle(HUDI_0_15)
    path = tmp_path / "table"
    options = layout.options("hoodie_bucket", **BUCKET_OPTIONS)
    write_in_turns(oracle, path, layout, options, turns(first), lambda step, op, records: check_buckets(path, step))
    if layout.is_mor:  # Apache Hudi compacted the slices hoodie appended to: the buckets stayed
        assert any(i.action == "commit" for i in HoodieTable.open(str(path)).timeline.completed_writes())


#: the entries hoodie records in hoodie.properties of a bucket-indexed table it creates
RECORDED = {"hoodie.index.type": "BUCKET", "hoodie.bucket.index.num.buckets": str(BUCKETS), "hoodie.bucket.index.hash.field": "uuid"}


def recorded(path: Path) -> dict[str, str]:
    props = parse_properties((path / ".hoodie" / "hoodie.properties").read_text())
    return {k: props[k] for k in RECORDED if k in props}


def keys_read(rows: pa.Table) -> list[str]:
    return sorted(rows.column("_hoodie_record_key").to_pylist())


def upsert(options: dict[str, str], **more: str) -> dict[str, str]:
    return {**options, "hoodie.datasource.write.operation": "upsert", **more}


def keys(numbers: range) -> list[str]:
    return [f"k{n:03d}" for n in numbers]


@pytest.mark.parametrize("version", [HUDI_0_15, HUDI_1])
def test_hudi_keeps_and_enforces_the_buckets_hoodie_records(version: str, hudi_oracle: Callable[[str], HudiOracle], tmp_path: Path) -> None:
    """A bucket table hoodie creates records its bucket options in hoodie.properties under
    the options' own keys: Apache Hudi reads it, writes on it with the same options (1.x
    upgrading it) and keeps the entries, and refuses a write giving other values, as
    hoodie does (its check of the write's options against hoodie.properties)."""
    oracle = hudi_oracle(version)
    path = tmp_path / "table"
    options = Layout("MERGE_ON_READ", "plain").options("hoodie_bucket", **BUCKET_OPTIONS)
    hoodie.write(batch([record(n, 1) for n in range(30)]), str(path), {**options, "hoodie.datasource.write.operation": "insert"})
    assert recorded(path) == RECORDED
    assert keys_read(oracle.read(path)) == keys(range(30))
    oracle.write(path, batch([record(n, 2) for n in range(0, 40, 2)]), upsert(options))  # new keys: logs of existing buckets
    assert recorded(path) == RECORDED
    assert keys_read(oracle.read(path)) == keys(range(30)) + keys(range(30, 40, 2))
    check_buckets(path, f"{version}'s upsert")  # hoodie and hudi-rs read each key once
    if version == HUDI_0_15:  # a version-6 table hoodie still writes, with the recorded buckets
        hoodie.write(batch([record(n, 3) for n in range(25, 45)]), str(path), upsert(options))
        assert keys_read(oracle.read(path)) == keys(range(45))
        with pytest.raises(ConfigError, match=f"was created with hoodie.bucket.index.num.buckets={BUCKETS}"):
            hoodie.write(batch([record(1, 4)]), str(path), upsert(options, **{"hoodie.bucket.index.num.buckets": "8"}))
    before = keys_read(oracle.read(path))
    for other in ({"hoodie.index.type": "BLOOM"}, {"hoodie.bucket.index.num.buckets": "8"}):
        with pytest.raises(OracleRefused, match=f"(?s)Config conflict.*{next(iter(other))}"):
            oracle.write(path, batch([record(n, 5) for n in range(30, 40, 2)]), upsert(options, **other))
    assert keys_read(oracle.read(path)) == before and recorded(path) == RECORDED


def test_a_bucket_table_hudi_made_is_checked_by_a_footer(hudi_oracle: Callable[[str], HudiOracle], tmp_path: Path) -> None:
    """Apache Hudi records nothing of its bucket index in the table: hoodie checks the
    number of buckets a write gives against one base file's footer keys (refused: 8 for a
    table of 4), and Apache Hudi itself refuses nothing there, writing with another index
    on merge-on-read stores keys that live only in logs again."""
    oracle = hudi_oracle(HUDI_0_15)
    path = tmp_path / "table"
    options = Layout("MERGE_ON_READ", "plain").options("hudi_bucket", **BUCKET_OPTIONS)
    oracle.write(path, batch([record(n, 1) for n in range(30)]), {**options, "hoodie.datasource.write.operation": "insert"})
    assert recorded(path) == {}
    instants = sorted(p.name for p in (path / ".hoodie").iterdir())
    refused = r"num.buckets=8 \(hoodie.bucket.index.hash.field=uuid\) puts key 'k\d+' of file group \d{8}-.* but that group is bucket"
    with pytest.raises(ConfigError, match=refused):
        hoodie.write(batch([record(n, 3) for n in range(25, 45)]), str(path), upsert(options, **{"hoodie.bucket.index.num.buckets": "8"}))
    assert sorted(p.name for p in (path / ".hoodie").iterdir()) == instants  # nothing written
    hoodie.write(batch([record(n, 2) for n in range(0, 40, 2)]), str(path), upsert(options))  # new keys: logs of existing buckets
    assert keys_read(oracle.read(path)) == keys(range(30)) + keys(range(30, 40, 2))
    oracle.write(path, batch([record(n, 5) for n in range(30, 40, 2)]), upsert(options, **{"hoodie.index.type": "BLOOM"}))
    assert keys_read(oracle.read(path)) == sorted(keys(range(30)) + 2 * keys(range(30, 40, 2)))
