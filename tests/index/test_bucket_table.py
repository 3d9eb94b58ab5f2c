"""A bucket-indexed table keeps its buckets: the number of buckets, the hash fields and
the index type a write gives must be the table's, else existing keys would be placed in
other file groups and stored twice. hoodie records them in ``hoodie.properties`` when it
creates the table; a table without them (Apache Hudi's) is checked by one footer."""
from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
from bucket_tables import OPTS, batch, bucket_opts, check_buckets, forget_bucket_entries, live_rows

import hoodie
from hoodie.config.properties import parse_properties
from hoodie.errors import ConfigError
from hoodie.index.bucket import BucketSpec
from hoodie.index.bucket_table import CHECKED, WALK_LIMIT, check_bucket_count
from hoodie.services.archival import ArchiveResult, ArchiveSettings, archive
from hoodie.services.compaction import UNBOUNDED_STRATEGY, CompactionSettings, schedule_compaction
from hoodie.storage.local import LocalStorage
from hoodie.table.table import HoodieTable

TYPES = ["COPY_ON_WRITE", "MERGE_ON_READ"]


def properties(path: str) -> dict[str, str]:
    return parse_properties((Path(path) / ".hoodie" / "hoodie.properties").read_text())


def unchanged(path: str, before: list[str], rows: list[tuple]) -> None:
    """Nothing was written: the same instants on the timeline, the same rows, no key twice."""
    assert instants(path) == before
    assert live_rows(path) == rows
    assert max(Counter(r[0] for r in rows).values()) == 1


def instants(path: str) -> list[str]:
    return [f"{i.timestamp}.{i.action}.{i.state.value}" for i in HoodieTable.open(path).timeline.instants]


@pytest.mark.parametrize("table_type", TYPES)
def test_a_new_bucket_table_records_its_buckets(tmp_path: Path, table_type: str) -> None:
    path = str(tmp_path / "t")
    hoodie.write(batch(range(20), 1), path, bucket_opts(8, **{"hoodie.datasource.write.table.type": table_type}))
    props = properties(path)
    assert (props["hoodie.index.type"], props["hoodie.bucket.index.num.buckets"], props["hoodie.bucket.index.hash.field"]) == ("BUCKET", "8", "id")
    # a write leaving the bucket options out takes them from the table: its keys are updated, not written again
    hoodie.write(batch(range(10, 30), 2), path, {**OPTS, "hoodie.datasource.write.table.type": table_type})
    check_buckets(path, 8)
    assert [r[0] for r in live_rows(path)] == [f"key-{i:04d}" for i in range(30)]
    # a table made with another index records nothing
    other = str(tmp_path / "bloom")
    hoodie.write(batch(range(20), 1), other, OPTS)
    assert not {"hoodie.index.type", "hoodie.bucket.index.num.buckets"} & set(properties(other))


@pytest.mark.parametrize("table_type", TYPES)
def test_raising_the_number_of_buckets_is_refused(tmp_path: Path, table_type: str) -> None:
    # the issue: a table written with 1 bucket, then upserted with 2; its keys would hash to
    # bucket 1 as well, where no group holds them, and be inserted again
    path = str(tmp_path / "t")
    opts = {"hoodie.datasource.write.table.type": table_type}
    hoodie.write(batch(range(40), 1), path, bucket_opts(1, **opts))
    before, rows = instants(path), live_rows(path)
    with pytest.raises(ConfigError, match=r"num.buckets=2, but .* was created with hoodie.bucket.index.num.buckets=1 .*written again"):
        hoodie.write(batch(range(40), 2), path, bucket_opts(2, **opts))
    unchanged(path, before, rows)
    # other hash fields of a complex key move keys to other buckets as well
    complex_key = str(tmp_path / "complex")
    keys = {**opts, "hoodie.datasource.write.recordkey.field": "id,v"}
    hoodie.write(batch(range(40), 1), complex_key, bucket_opts(4, **keys, **{"hoodie.bucket.index.hash.field": "id"}))
    before, rows = instants(complex_key), live_rows(complex_key)
    with pytest.raises(ConfigError, match=r"hash.field=id,v, but .* was created with hoodie.bucket.index.hash.field=id"):
        hoodie.write(batch(range(40), 2), complex_key, bucket_opts(4, **keys, **{"hoodie.bucket.index.hash.field": "id,v"}))
    unchanged(complex_key, before, rows)


@pytest.mark.parametrize("table_type", TYPES)
def test_raising_the_number_of_buckets_of_a_table_without_the_entries_is_refused(tmp_path: Path, table_type: str) -> None:
    path = str(tmp_path / "t")
    opts = {"hoodie.datasource.write.table.type": table_type}
    hoodie.write(batch(range(40), 1), path, bucket_opts(1, **opts))
    hoodie.write(batch(range(30, 50), 2), path, bucket_opts(1, **opts))  # merge-on-read: the last write appends logs
    forget_bucket_entries(path)
    before, rows = instants(path), live_rows(path)
    refused = r"num.buckets=2 \(hoodie.bucket.index.hash.field=id\) puts key 'key-00\d\d' of file group 00000000-.* in bucket 1, but that group is bucket 0"
    with pytest.raises(ConfigError, match=refused):
        hoodie.write(batch(range(40), 3), path, bucket_opts(2, **opts))
    unchanged(path, before, rows)
    hoodie.write(batch(range(40), 3), path, bucket_opts(1, **opts))  # the table's own number still writes
    assert [r[0] for r in live_rows(path)] == [f"key-{i:04d}" for i in range(50)]


@pytest.mark.parametrize("table_type", TYPES)
@pytest.mark.parametrize("index", ["BLOOM", "SIMPLE", "RECORD_INDEX"])
def test_another_index_on_a_bucket_table_is_refused(tmp_path: Path, table_type: str, index: str) -> None:
    path = str(tmp_path / "t")
    opts = {"hoodie.datasource.write.table.type": table_type}
    hoodie.write(batch(range(0, 40, 2), 1), path, bucket_opts(4, **opts))
    hoodie.write(batch(range(1, 40, 2), 2), path, bucket_opts(4, **opts))  # merge-on-read: new keys only in logs
    before, rows = instants(path), live_rows(path)
    more = {"hoodie.metadata.record.index.enable": "true"} if index == "RECORD_INDEX" else {}
    refused = rf"hoodie.index.type={index}, but .* is a bucket-indexed table \(hoodie.properties: hoodie.index.type=BUCKET, hoodie.bucket.index.num.buckets=4"
    with pytest.raises(ConfigError, match=refused):
        hoodie.write(batch(range(40), 3), path, {**OPTS, **opts, **more, "hoodie.index.type": index})
    unchanged(path, before, rows)


class CommitsRead(LocalStorage):
    """Local storage that counts the data table's commit files read."""

    def __init__(self) -> None:
        super().__init__()
        self.commits: list[str] = []

    def read_bytes(self, path: str) -> bytes:
        if "/.hoodie/metadata/" not in path and path.endswith((".commit", ".deltacommit")):
            self.commits.append(path)
        return super().read_bytes(path)


def reads_of_check(path: str, spec: BucketSpec) -> tuple[int, int, int]:
    """Commit files, footers and listings one check of the table at ``path`` read."""
    storage = CommitsRead()
    table = HoodieTable.open(path, storage)
    before = storage.counters.snapshot()
    check_bucket_count(table, spec)
    calls = storage.counters.since(before)
    return len(storage.commits), storage.counters.calls["footer"], calls["list"]


MOR = {"hoodie.datasource.write.table.type": "MERGE_ON_READ"}


def test_the_check_reads_the_newest_commit_and_a_footer_once(tmp_path: Path) -> None:
    """Merge-on-read with many delta commits that only append logs: the check reads the
    newest one (its logs name their slice's base file) and that file's footer, and in a
    process that checked that file already, no footer (nor anything, when no write
    completed since)."""
    path = str(tmp_path / "t")
    hoodie.write(batch(range(0, 60, 3), 1), path, bucket_opts(1, **MOR))
    for n in range(2, 25):
        hoodie.write(batch(range(0, 60, 15), n), path, bucket_opts(1, **MOR))  # logs appended to the one group
    forget_bucket_entries(path)
    spec = BucketSpec(1, ("id",))
    CHECKED.clear()
    assert reads_of_check(path, spec) == (1, 1, 0)
    assert reads_of_check(path, spec) == (0, 0, 0)  # nothing completed since
    hoodie.write(batch(range(0, 60, 15), 30), path, bucket_opts(1, **MOR))
    assert reads_of_check(path, spec) == (1, 0, 0)  # the same base file: checked already
    CHECKED.clear()
    assert reads_of_check(path, spec) == (1, 1, 0)
    # other options are checked anew, and refused
    with pytest.raises(ConfigError, match=r"num.buckets=2 \(hoodie.bucket.index.hash.field=id\) puts key 'key-00\d\d' of file group 00000000-.* in bucket 1"):
        check_bucket_count(HoodieTable.open(path), BucketSpec(2, ("id",)))


def test_delta_commits_naming_no_base_file_are_read_up_to_a_bound(tmp_path: Path) -> None:
    """Delta commits whose logs name no base file (the slices a pending compaction opened;
    Apache Hudi's log-only file groups): the check reads WALK_LIMIT of them, then lists the
    partition the newest touched for its newest committed base file."""
    path = str(tmp_path / "t")
    hoodie.write(batch(range(0, 60, 3), 1), path, bucket_opts(1, **MOR))
    hoodie.write(batch(range(0, 60, 15), 2), path, bucket_opts(1, **MOR))  # a slice with logs to compact
    pending, _ = schedule_compaction(HoodieTable.open(path), CompactionSettings(strategy=UNBOUNDED_STRATEGY), require_threshold=False)
    assert pending is not None
    for n in range(3, WALK_LIMIT + 6):
        hoodie.write(batch(range(0, 60, 15), n), path, bucket_opts(1, **MOR))
    table = HoodieTable.open(path)
    newest = table.commit_metadata(table.timeline.completed_writes()[-1]).write_stats()
    assert newest and all(not s.baseFile and ".log." in s.path for s in newest)
    forget_bucket_entries(path)
    CHECKED.clear()
    assert reads_of_check(path, BucketSpec(1, ("id",))) == (WALK_LIMIT, 1, 1)
    with pytest.raises(ConfigError, match=r"num.buckets=2 \(hoodie.bucket.index.hash.field=id\) puts key 'key-00\d\d' of file group 00000000-.* in bucket 1"):
        check_bucket_count(HoodieTable.open(path), BucketSpec(2, ("id",)))


def test_a_base_file_of_an_archived_write_is_checked(tmp_path: Path) -> None:
    """The base file the check falls back to may be of a write archived since (its commit
    no longer on the active timeline): it is committed all the same, and checked."""
    path = str(tmp_path / "t")
    opts = bucket_opts(1, **MOR, **{"hoodie.metadata.enable": "false", "hoodie.archive.automatic": "false", "hoodie.clean.automatic": "false"})
    hoodie.write(batch(range(0, 60, 3), 1), path, opts)
    hoodie.write(batch(range(0, 60, 15), 2), path, opts)
    pending, _ = schedule_compaction(HoodieTable.open(path), CompactionSettings(strategy=UNBOUNDED_STRATEGY), require_threshold=False)
    assert pending is not None
    for n in range(3, WALK_LIMIT + 6):
        hoodie.write(batch(range(0, 60, 15), n), path, opts)
    first = HoodieTable.open(path).timeline.completed_writes()[0].timestamp
    assert isinstance(archive(HoodieTable.open(path), ArchiveSettings(min_commits=2, max_commits=3)), ArchiveResult)
    table = HoodieTable.open(path)
    assert first not in {i.timestamp for i in table.timeline.instants}
    assert [p.name for p in Path(path, "p0").glob("*.parquet") if first in p.name]  # its base file, still the slice's
    forget_bucket_entries(path)
    CHECKED.clear()
    with pytest.raises(ConfigError, match=r"num.buckets=2 \(hoodie.bucket.index.hash.field=id\) puts key 'key-00\d\d' of file group 00000000-.* in bucket 1"):
        check_bucket_count(table, BucketSpec(2, ("id",)))
