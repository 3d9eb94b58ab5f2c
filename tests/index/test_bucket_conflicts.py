"""Two writers on one bucket-indexed table: writes conflict when they touch one bucket of
one partition (Apache Hudi's ``BucketIndexConcurrentFileWritesConflictResolutionStrategy``),
not only one file group, so two writers each creating a bucket's first file group never
leave the bucket with two; and a bucket found with two file groups is an error naming
both, never one of them picked."""
from __future__ import annotations

import re
import shutil
import threading
from pathlib import Path

import pyarrow as pa
import pytest
from bucket_tables import batch, bucket_opts, check_buckets, file_groups, live_rows

import hoodie
from hoodie.errors import ConcurrentWriteError, TableError
from hoodie.index.bucket import BucketSpec, bucket_file_id, bucket_ids, shared_buckets
from hoodie.storage.local import LocalStorage
from hoodie.storage.paths import under

TYPES = ["COPY_ON_WRITE", "MERGE_ON_READ"]
BUCKETS = 4


def keys_of_bucket(bucket: int, partition: int, count: int, start: int = 0) -> list[int]:
    """``count`` ids from ``start`` on whose keys (``batch``'s) fall in ``bucket`` of partition ``p<partition>``."""
    ids = [i for i in range(start, start + 400 * count) if i % 3 == partition]
    found = bucket_ids(batch(ids, 0).column("id"), BucketSpec(BUCKETS, ("id",)))
    chosen = [i for i, b in zip(ids, found.tolist()) if b == bucket][:count]
    assert len(chosen) == count
    return chosen


class HeldBeforeItsInstant(LocalStorage):
    """Local storage whose writer stops just before it requests its instant until
    released: it has loaded the table by then (what it will take as seen), and another
    writer's whole write runs meanwhile, its eager rollback finding nothing of this one."""

    def __init__(self, base_path: str) -> None:
        super().__init__()
        self.timeline_dir = under(base_path, ".hoodie")
        self.reached, self.go = threading.Event(), threading.Event()

    def create_new(self, path: str, data: bytes, durable: bool = True) -> None:
        if path.rsplit("/", 1)[0] == self.timeline_dir and path.endswith(".requested") and not self.reached.is_set():
            self.reached.set()
            assert self.go.wait(120), "the other writer did not finish"
        super().create_new(path, data, durable)


def race(path: str, first: pa.Table, second: pa.Table, opts: dict[str, str]) -> BaseException | None:
    """``first`` written by a writer that loads the table, then waits while ``second`` is
    written whole by another: the error of the first writer, or None if it committed."""
    storage = HeldBeforeItsInstant(path)
    outcome: list[BaseException | None] = []

    def write_first() -> None:
        try:
            hoodie.write(first, path, opts, storage=storage)
            outcome.append(None)
        except BaseException as e:  # handed to the test
            outcome.append(e)

    writer = threading.Thread(target=write_first)
    writer.start()
    try:
        assert storage.reached.wait(120), outcome
        hoodie.write(second, path, opts)
    finally:
        storage.go.set()
        writer.join(120)
    assert len(outcome) == 1
    return outcome[0]


@pytest.mark.parametrize("table_type", TYPES)
def test_two_writers_creating_one_new_bucket_do_not_both_commit(tmp_path: Path, table_type: str) -> None:
    path = str(tmp_path / "t")
    opts = bucket_opts(BUCKETS, **{"hoodie.datasource.write.table.type": table_type})
    hoodie.write(batch(keys_of_bucket(1, 1, 5), 1), path, opts)  # the table exists; partition p0 holds nothing
    mine, theirs = keys_of_bucket(2, 0, 5), keys_of_bucket(2, 0, 5, start=3000)
    before = live_rows(path)

    error = race(path, batch(mine, 2), batch(theirs, 3), opts)

    assert isinstance(error, ConcurrentWriteError), error
    message = str(error)
    assert re.search(r"wrote to the same buckets \(bucket 2 of partition 'p0': file groups 00000002-\S+-0 and 00000002-\S+-0\)", message), message
    assert "Nothing of this write was committed and its files were removed" in message
    # the other writer's rows alone, in one file group of the bucket
    assert live_rows(path) == sorted(before + [(f"key-{i:04d}", "p0", 3, i) for i in theirs])
    assert len(file_groups(path)["p0"]) == 1
    check_buckets(path, BUCKETS)
    # nothing of the refused write is left: no pending instant, no data file of it
    lost = re.search(r"write (\d{17})", message)
    assert lost is not None
    assert not [p.name for p in (Path(path) / ".hoodie").iterdir() if p.name.startswith(lost[1])]
    assert not [p for p in Path(path).rglob(f"*{lost[1]}*") if ".hoodie" not in p.parts]
    # the refused writer runs again and lands in the bucket's one group
    hoodie.write(batch(mine, 2), path, opts)
    assert len(file_groups(path)["p0"]) == 1
    check_buckets(path, BUCKETS)
    assert [r[0] for r in live_rows(path) if r[1] == "p0"] == sorted(f"key-{i:04d}" for i in mine + theirs)


def test_writers_in_other_buckets_both_commit(tmp_path: Path) -> None:
    """The rule is per bucket: writes to other buckets of one partition both land."""
    path = str(tmp_path / "t")
    opts = bucket_opts(BUCKETS)
    hoodie.write(batch(keys_of_bucket(1, 1, 5), 1), path, opts)
    mine, theirs = keys_of_bucket(2, 0, 5), keys_of_bucket(3, 0, 5)
    assert race(path, batch(mine, 2), batch(theirs, 3), opts) is None
    assert [r[0] for r in live_rows(path) if r[1] == "p0"] == sorted(f"key-{i:04d}" for i in mine + theirs)
    check_buckets(path, BUCKETS)


def test_the_rule_compares_partition_and_bucket() -> None:
    a, b = bucket_file_id(5), bucket_file_id(5)
    assert a != b
    # one bucket of one partition through two file groups: a conflict naming both
    assert shared_buckets({("p0", a)}, {("p0", b)}) == [("p0", 5, (a, b) if a < b else (b, a))]
    # one file group: a conflict too
    assert shared_buckets({("p0", a)}, {("p0", a)}) == [("p0", 5, (a,))]
    # another partition, another bucket: none
    assert shared_buckets({("p0", a)}, {("p1", b)}) == []
    assert shared_buckets({("p0", a)}, {("p0", bucket_file_id(6))}) == []
    # an id naming no bucket (a table written with another index) is compared whole
    assert shared_buckets({("p0", "abcdefgh-1"), ("p0", a)}, {("p0", "abcdefgh-1")}) == [("p0", None, ("abcdefgh-1",))]
    assert shared_buckets({("p0", "abcdefgh-1")}, {("p0", "abcdefgh-2")}) == []


def test_a_bucket_with_two_file_groups_is_an_error_naming_both(tmp_path: Path) -> None:
    """A table where one bucket has two file groups (two writers that raced without the
    bucket rule, as older writers did): a write to its partition names both and writes
    nothing, whatever bucket its own keys fall in."""
    opts = bucket_opts(BUCKETS, **{"hoodie.metadata.enable": "false"})
    path, other = str(tmp_path / "t"), str(tmp_path / "other")
    hoodie.write(batch(keys_of_bucket(2, 0, 3), 1), path, opts)
    hoodie.write(batch(keys_of_bucket(2, 0, 3, start=3000), 2), other, opts)
    # the other table's commit and its file group of bucket 2, as the second writer left them
    for f in (Path(other) / ".hoodie").iterdir():
        if f.is_file() and f.name[:17].isdigit():
            shutil.copy(f, Path(path) / ".hoodie" / f.name)
    for f in (Path(other) / "p0").glob("*.parquet"):
        shutil.copy(f, Path(path) / "p0" / f.name)
    groups = sorted(file_groups(path)["p0"])
    assert len(groups) == 2 and all(g.startswith("00000002-") for g in groups)
    before = live_rows(path)
    for ids in (keys_of_bucket(2, 0, 2), keys_of_bucket(3, 0, 2)):
        with pytest.raises(TableError, match=rf"partition 'p0' holds several file groups of bucket 2: {groups[0]}, {groups[1]}"):
            hoodie.write(batch(ids, 3), path, opts)
    assert live_rows(path) == before
