"""Incremental pulls on merge-on-read tables whose range holds a compaction, on real files
written by hoodie (inline compaction every two delta commits).

An incremental pull reads the latest slice as of its end and merges only its rows and
log records committed in the range, as Apache Hudi 0.15 and 1.x read it
(tests/oracle/test_incremental_pulls.py compares them): a base file's row committed
before the range takes no part in the merge, whether the base file is older than the
range or a compaction in the range rewrote it. So an update that lost the snapshot merge
to an older, larger ordering value (a stale update) after the last compaction is pulled
as written.
"""
from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest
from table_options import MOR_TRIPS

import hoodie
from hoodie.query import read_incremental
from hoodie.table.slice_reader.instants import CommitTimes
from hoodie.table.table import HoodieTable

OPTIONS = {
    **MOR_TRIPS,
    "hoodie.compact.inline": "true",
    "hoodie.compact.inline.max.delta.commits": "2",
    "hoodie.clean.automatic": "false",
}


def _write(path: Path, rows: list[tuple[str, str, int]], operation: str = "upsert") -> str:
    """Write (uuid, city, ts) rows; the fare is the ts, so every version is told apart."""
    uuid, city, ts = (list(c) for c in zip(*rows))
    batch = pa.table({"uuid": uuid, "city": city, "ts": ts, "fare": [float(t) for t in ts]})
    return hoodie.write(batch, str(path), {**OPTIONS, "hoodie.datasource.write.operation": operation})


def _compactions(path: Path) -> list[str]:
    return [i.timestamp for i in HoodieTable.open(str(path)).timeline.completed_writes() if i.action == "commit"]


def _pull(path: Path, begin: str, end: str | None = None) -> list[tuple[str, int, str]]:
    """(uuid, ts, commit time) of every row of the pull over (begin, end]."""
    options = {"hoodie.datasource.query.type": "incremental", "hoodie.datasource.read.begin.instanttime": begin}
    if end is not None:
        options["hoodie.datasource.read.end.instanttime"] = end
    return sorted((r["uuid"], r["ts"], r["_hoodie_commit_time"]) for r in hoodie.read(str(path), options).to_pylist())


def _snapshot(path: Path) -> list[tuple[str, int, str]]:
    return sorted((r["uuid"], r["ts"], r["_hoodie_commit_time"]) for r in hoodie.read(str(path)).to_pylist())


def test_a_stale_update_after_a_compaction_in_the_range_is_pulled(tmp_path: Path) -> None:
    """The issue's reproduction: an upsert, the inline compaction after it, then an update
    with a smaller ordering value than the compacted record; the pull from the upsert on
    returns the stale update as written, with its commit time."""
    path = tmp_path / "t"
    first = _write(path, [("k0", "sf", 5), ("k1", "sf", 5)])
    second = _write(path, [("k1", "sf", 6)])  # a log; then the compaction
    [compaction] = _compactions(path)
    stale = _write(path, [("k0", "sf", 1)])  # k0 stays at ts 5 in the snapshot
    assert _snapshot(path) == [("k0", 5, first), ("k1", 6, second)]
    # the compacted base file holds k0 as of `first`, before the range: not merged
    assert _pull(path, second) == [("k0", 1, stale)]
    assert _pull(path, compaction) == [("k0", 1, stale)]
    # k1's compacted version was committed in the range; k0's was not (same base file,
    # same row group: the rows are told apart one by one)
    assert _pull(path, first) == [("k0", 1, stale), ("k1", 6, second)]
    assert _pull(path, first, compaction) == [("k1", 6, second)]
    # without a compaction in the range the answer is the same
    assert _pull(path, "000", first) == [("k0", 5, first), ("k1", 5, first)]


def test_a_stale_update_before_a_compaction_in_the_range(tmp_path: Path) -> None:
    """The stale update is in a log the compaction then folds into its base file, where the
    stored version wins: a pull whose end is at or after the compaction reads that base
    file (the latest slice as of the end), which no longer holds the stale version, as
    Apache Hudi reads it; a pull ending before the compaction reads the log."""
    path = tmp_path / "t"
    first = _write(path, [("k0", "sf", 5), ("k1", "sf", 5)])
    second = _write(path, [("k0", "sf", 1), ("k1", "sf", 6)])  # k0 stale; then the compaction
    [compaction] = _compactions(path)
    third = _write(path, [("k1", "sf", 7)])
    assert _snapshot(path) == [("k0", 5, first), ("k1", 7, third)]
    assert _pull(path, first, second) == [("k0", 1, second), ("k1", 6, second)]  # before the compaction
    assert _pull(path, first, compaction) == [("k1", 6, second)]
    assert _pull(path, first) == [("k1", 7, third)]
    assert _pull(path, second) == [("k1", 7, third)]


def test_a_compaction_of_some_file_groups(tmp_path: Path) -> None:
    """Only sf's file group has a log when the compaction runs; la's file group keeps its
    base file. A stale update of each after the compaction is pulled from either."""
    path = tmp_path / "t"
    _write(path, [("k0", "sf", 5)])
    second = _write(path, [("k1", "la", 5), ("k0", "sf", 6)])  # la: a new base file; sf: a log
    [compaction] = _compactions(path)
    table = HoodieTable.open(str(path))
    compacted = [s for s in table.view().latest_slices_all() if s.base_instant == compaction]
    assert [s.partition_path for s in compacted] == ["sf"]
    stale = _write(path, [("k0", "sf", 1), ("k1", "la", 1)])
    assert _pull(path, second) == [("k0", 1, stale), ("k1", 1, stale)]
    # from before the second write, both stored versions are in the range and win
    first_pull = _pull(path, "000")
    assert [(k, ts) for k, ts, _ in first_pull] == [("k0", 6), ("k1", 5)]


def test_deletes_below_and_after_a_compaction(tmp_path: Path) -> None:
    """A delete in a log the compaction folds in (the key is gone from its base file), and
    a delete after the compaction of a key whose stored version is older than the range:
    neither key is pulled; a stale update of a key stored before the range is."""
    path = tmp_path / "t"
    first = _write(path, [("k0", "sf", 5), ("k1", "sf", 5), ("k2", "sf", 5), ("k3", "sf", 5)])
    deleted = _write(path, [("k0", "sf", 9)], operation="delete")  # then the first compaction
    third = _write(path, [("k1", "sf", 6)])
    _write(path, [("k2", "sf", 9)], operation="delete")  # then the second compaction
    first_compaction, second_compaction = _compactions(path)
    stale = _write(path, [("k1", "sf", 1), ("k3", "sf", 1)])
    assert _snapshot(path) == [("k1", 6, third), ("k3", 5, first)]
    assert _pull(path, first, first_compaction) == []
    assert _pull(path, first) == [("k1", 6, third), ("k3", 1, stale)]
    assert _pull(path, deleted) == [("k1", 6, third), ("k3", 1, stale)]
    assert _pull(path, third) == [("k1", 1, stale), ("k3", 1, stale)]
    assert _pull(path, second_compaction) == [("k1", 1, stale), ("k3", 1, stale)]


def test_projected_pull_still_merges_the_range_only(tmp_path: Path) -> None:
    """Asked for columns without the commit time, the merge still reads it to keep the
    range's base rows."""
    path = tmp_path / "t"
    _write(path, [("k0", "sf", 5), ("k1", "sf", 5)])
    second = _write(path, [("k1", "sf", 6)])
    _write(path, [("k0", "sf", 1)])
    pulled = read_incremental(HoodieTable.open(str(path)), second, columns=["uuid", "fare"])
    assert pulled.column_names == ["uuid", "fare"]
    assert pulled.to_pylist() == [{"uuid": "k0", "fare": 1.0}]


@pytest.mark.parametrize(
    ("times", "kept"),
    [
        (CommitTimes(after="20240101000001000", upto="20240101000003000"), ["20240101000002000", "20240101000003000"]),
        (CommitTimes(after="20240101000001000"), ["20240101000002000", "20240101000003000"]),
        (CommitTimes(upto="20240101000001000"), ["20240101000001000"]),
        (CommitTimes(only=frozenset({"20240101000001000", "20240101000003000"})), ["20240101000001000", "20240101000003000"]),
        (CommitTimes(), ["20240101000001000", "20240101000002000", "20240101000003000"]),
    ],
)
def test_commit_times_filter_rows(times: CommitTimes, kept: list[str]) -> None:
    data = pa.table({
        "_hoodie_commit_time": ["20240101000001000", None, "20240101000002000", "20240101000003000"],
        "id": [1, 2, 3, 4],
    })
    assert times.filter(data).column("_hoodie_commit_time").to_pylist() == kept
