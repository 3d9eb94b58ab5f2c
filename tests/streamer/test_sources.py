"""The streamer's sources: which files or commits a batch takes after a checkpoint."""
from __future__ import annotations

import pyarrow as pa
import pytest
from landing import land, trips

import hoodie
from hoodie.errors import ConfigError, InstantNotFoundError
from hoodie.storage.local import LocalStorage
from hoodie.streamer import DfsSource, FilePosition, HoodieIncrSource
from hoodie.streamer.arrow_engine import read_files, read_instants


def _source(root, fmt="json"):
    return DfsSource(LocalStorage(), str(root), fmt)


def test_files_in_modification_time_then_name_order_and_the_checkpoint_is_exact(tmp_path):
    # three files of the same millisecond: Hudi's time-only checkpoint would skip the
    # ones after the first batch; (time, name) takes each exactly once
    land(tmp_path, "b.json", trips([1], 1), mtime_ms=2000)
    land(tmp_path, "a.json", trips([2], 1), mtime_ms=2000)
    land(tmp_path, "z.json", trips([3], 1), mtime_ms=1000)
    land(tmp_path, "c.json", trips([4], 1), mtime_ms=2000)
    src = _source(tmp_path)
    first = src.plan(None, source_limit=1)
    assert [f.name for f in first.files] == ["z.json"] and first.checkpoint == "1000:z.json"
    assert first.files_behind == 3
    second = src.plan(first.checkpoint, source_limit=1)
    assert [f.name for f in second.files] == ["a.json"] and second.checkpoint == "2000:a.json"
    rest = src.plan(second.checkpoint)
    assert [f.name for f in rest.files] == ["b.json", "c.json"] and rest.files_behind == 0
    assert src.plan(rest.checkpoint) is None


def test_source_limit_bounds_the_bytes_but_takes_at_least_one_file(tmp_path):
    sizes = [land(tmp_path, f"f{i}.json", trips(range(i * 10, i * 10 + 10), 1), mtime_ms=1000 + i).stat().st_size for i in range(4)]
    src = _source(tmp_path)
    batch = src.plan(None, source_limit=sizes[0] + sizes[1])
    assert [f.name for f in batch.files] == ["f0.json", "f1.json"]
    assert batch.bytes_behind == sizes[2] + sizes[3]
    assert [f.name for f in src.plan(None, source_limit=1).files] == ["f0.json"]


def test_subfolders_are_read_and_hidden_or_underscore_names_skipped(tmp_path):
    land(tmp_path / "day=1", "a.json", trips([1], 1), mtime_ms=1000)
    land(tmp_path, "_SUCCESS", [], mtime_ms=1001)
    land(tmp_path / "_temporary", "x.json", trips([2], 1), mtime_ms=1002)
    (tmp_path / ".inflight.json").write_text("{not json")
    batch = _source(tmp_path).plan(None)
    assert [f.name for f in batch.files] == ["day=1/a.json"]


def test_apache_hudis_checkpoint_a_bare_time_takes_the_files_after_it(tmp_path):
    land(tmp_path, "a.json", trips([1], 1), mtime_ms=5000)
    land(tmp_path, "b.json", trips([2], 1), mtime_ms=5001)
    assert [f.name for f in _source(tmp_path).plan("5000").files] == ["b.json"]
    assert FilePosition.decode("5000") == FilePosition(5000, None)


@pytest.mark.parametrize("bad", ["abc", "12:", "１２:x", "-5:x"])
def test_a_checkpoint_that_is_no_position_is_refused_naming_it(tmp_path, bad):
    with pytest.raises(ConfigError, match="is not a file source's position"):
        _source(tmp_path).plan(bad)


@pytest.mark.parametrize("fmt", ["json", "csv", "parquet", "avro"])
def test_each_format_reads_the_rows_of_the_batch_files(tmp_path, fmt):
    land(tmp_path, f"a.{fmt}", trips([1, 2], 1), fmt, mtime_ms=1000)
    land(tmp_path, f"b.{fmt}", trips([3], 2), fmt, mtime_ms=2000)
    data = read_files(_source(tmp_path, fmt).plan(None))
    assert sorted(data.select(["uuid", "ts"]).to_pylist(), key=lambda r: r["uuid"]) == [
        {"uuid": "k1", "ts": 1}, {"uuid": "k2", "ts": 1}, {"uuid": "k3", "ts": 2}
    ]


def test_a_damaged_file_is_an_error_naming_it(tmp_path):
    bad = tmp_path / "a.json"
    bad.write_text('{"uuid": "k1", "ts": 1}\n{"uuid": \n')
    with pytest.raises(hoodie.errors.FormatError, match="a.json cannot be read as json"):
        read_files(_source(tmp_path).plan(None))


def test_unknown_format_is_refused(tmp_path):
    with pytest.raises(ConfigError, match="unknown file source format 'orc'"):
        _source(tmp_path, "orc")


# --- the incremental source -------------------------------------------------------------------

OPTS = {
    "hoodie.table.name": "up", "hoodie.datasource.write.recordkey.field": "uuid",
    "hoodie.datasource.write.partitionpath.field": "city", "hoodie.datasource.write.precombine.field": "ts",
}


def _commits(path, n, **extra):
    return [hoodie.write(pa.Table.from_pylist(trips([i, i + 100], i + 1)), str(path), {**OPTS, **extra}) for i in range(n)]


def test_incremental_source_takes_num_instants_commits_after_the_checkpoint(tmp_path):
    instants = _commits(tmp_path / "up", 5)
    src = HoodieIncrSource(str(tmp_path / "up"), num_instants=2)
    first = src.plan(None)
    assert first.instants == tuple(instants[:2]) and first.checkpoint == instants[1] and first.instants_behind == 3
    rows = read_instants(first)
    assert sorted(rows.column("uuid").to_pylist()) == ["k0", "k1", "k100", "k101"]
    assert "_hoodie_partition_path" in rows.column_names and "_hoodie_commit_time" not in rows.column_names
    assert src.plan(instants[3]).instants == (instants[4],)
    assert src.plan(instants[4]) is None


def test_incremental_source_read_latest_without_checkpoint_starts_at_the_latest_commit(tmp_path):
    instants = _commits(tmp_path / "up", 3)
    src = HoodieIncrSource(str(tmp_path / "up"), missing_checkpoint="READ_LATEST", drop_all_meta=True)
    batch = src.plan(None)
    assert batch.instants == (instants[2],)
    assert not [c for c in read_instants(batch).column_names if c.startswith("_hoodie")]


def test_incremental_source_behind_archival_is_a_clear_error(tmp_path):
    instants = _commits(tmp_path / "up", 8, **{"hoodie.keep.min.commits": "3", "hoodie.keep.max.commits": "4", "hoodie.cleaner.commits.retained": "2"})
    src = HoodieIncrSource(str(tmp_path / "up"))
    with pytest.raises(InstantNotFoundError, match=f"checkpoint {instants[0]} is behind the source table .* archived"):
        src.plan(instants[0])


def test_incremental_source_behind_cleaning_is_a_clear_error(tmp_path):
    # one file group per city, rewritten by every commit: cleaning keeps the slices of the
    # last commit only, so a pull ending at the second commit cannot be read any more
    instants = _commits(tmp_path / "up", 5, **{"hoodie.cleaner.commits.retained": "1", "hoodie.archive.automatic": "false"})
    src = HoodieIncrSource(str(tmp_path / "up"), num_instants=1)
    with pytest.raises(InstantNotFoundError, match=f"checkpoint {instants[0]} is behind the source table .*'s cleaning"):
        src.plan(instants[0])
    # a batch reaching the retained commits reads fine
    assert HoodieIncrSource(str(tmp_path / "up"), num_instants=10).plan(instants[0]).instants == tuple(instants[1:])


def test_incremental_source_refuses_a_checkpoint_that_is_no_instant(tmp_path):
    _commits(tmp_path / "up", 1)
    with pytest.raises(ConfigError, match="checkpoint '1000:a.json' is not an instant time of the source table"):
        HoodieIncrSource(str(tmp_path / "up")).plan("1000:a.json")
