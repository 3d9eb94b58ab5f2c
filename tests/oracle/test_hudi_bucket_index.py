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
from hudi_oracle import HUDI_0_15, HudiOracle, OracleSetup
from oracle_reads import HOODIE, HUDI, Turn, write_in_turns
from readers import hudi_rs_table
from sequences import Layout, record

import hoodie
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
