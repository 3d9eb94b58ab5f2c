"""Where a streaming read stands (``hoodie.query.stream``): the commits it may reach, held
back by an older pending write, the next range's end under a commit limit, where a new
read starts; and the incremental pull's fallback when its range was cleaned or archived
(``hoodie.datasource.read.incr.fallback.fulltablescan.enable``), in process."""
from __future__ import annotations

import dataclasses
from pathlib import Path

import pyarrow as pa
import pytest

import hoodie
from hoodie.errors import ConfigError, InstantNotFoundError
from hoodie.query.stream import EARLIEST, commit_offsets, next_offset, parse_start, start_offset
from hoodie.table.table import HoodieTable
from hoodie.timeline.instant import Instant, State

OPTS = {
    "hoodie.table.name": "t",
    "hoodie.datasource.write.recordkey.field": "k",
    "hoodie.datasource.write.precombine.field": "ts",
    "hoodie.index.bloom.num_entries": "500",
}
SERVICES = {"hoodie.cleaner.commits.retained": "1", "hoodie.keep.min.commits": "2", "hoodie.keep.max.commits": "3"}


def write(path: str, keys: list[str], ts: int, **extra: str) -> str:
    return hoodie.write(pa.table({"k": keys, "ts": [ts] * len(keys)}), path, {**OPTS, **extra})


def test_offsets_stop_before_an_older_pending_write(tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    t1, t2, t3 = (write(path, ["a"], ts) for ts in (1, 2, 3))
    timeline = HoodieTable.open(path).timeline
    assert commit_offsets(timeline) == [t1, t2, t3]
    # t2 still inflight (a concurrent writer): t3 completed after it, but the stream waits
    # for t2, whose changes an offset past it would skip once it completes
    pending = tuple(Instant(i.timestamp, i.action, State.INFLIGHT) if i.timestamp == t2 else i for i in timeline.instants)
    assert commit_offsets(dataclasses.replace(timeline, instants=pending)) == [t1]
    # a pending compaction holds nothing back (its records keep their commit times)
    compaction = (*timeline.instants, Instant("20000101000000000", "compaction", State.REQUESTED))
    assert commit_offsets(dataclasses.replace(timeline, instants=tuple(sorted(compaction, key=Instant.sort_key)))) == [t1, t2, t3]


def test_next_offset_and_the_start() -> None:
    offsets = ["20260101000000001", "20260101000000002", "20260101000000003"]
    assert next_offset(offsets, EARLIEST) == offsets[-1]
    assert next_offset(offsets, EARLIEST, max_commits=2) == offsets[1]
    assert next_offset(offsets, offsets[1], max_commits=2) == offsets[2]
    assert next_offset(offsets, offsets[2]) == offsets[2]  # nothing new: the start itself
    assert next_offset(offsets, EARLIEST, upto=offsets[1]) == offsets[1]  # Trigger.AvailableNow's target
    assert next_offset(offsets, "20260101000000002999", upto=offsets[1]) == "20260101000000002999"
    assert parse_start(" Latest ") == "latest" and parse_start("2026-01-01 00:00:00") == "20260101000000000"
    with pytest.raises(ConfigError, match=r"'tomorrow' for option hoodie\.datasource\.streaming\.startOffset"):
        parse_start("tomorrow")


def test_start_offsets(tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    write(path, ["a"], 1)
    t2 = write(path, ["a"], 2)
    timeline = HoodieTable.open(path).timeline
    assert start_offset(timeline, "earliest") == EARLIEST
    assert start_offset(timeline, "latest") == t2
    assert start_offset(timeline, "20200101") == "20200101"


def test_a_pull_of_a_cleaned_and_archived_range_names_the_fallback_which_reads_the_latest_records(tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    t1 = write(path, ["a", "b"], 1, **SERVICES)
    for ts in range(2, 8):
        write(path, ["a", f"k{ts}"], ts, **SERVICES)
    table = HoodieTable.open(path)
    assert table.timeline.completed(["clean"]) and t1 not in [i.timestamp for i in table.timeline.completed_writes()]
    pull = {"hoodie.datasource.query.type": "incremental", "hoodie.datasource.read.begin.instanttime": t1}
    with pytest.raises(InstantNotFoundError, match=rf"{t1}.*archived.*hoodie\.datasource\.read\.incr\.fallback\.fulltablescan\.enable=true"):
        hoodie.read(path, pull)
    fallback = {**pull, "hoodie.datasource.read.incr.fallback.fulltablescan.enable": "true"}
    got = hoodie.read(path, fallback)
    assert sorted((r["k"], r["ts"]) for r in got.to_pylist()) == [("a", 7), *((f"k{ts}", ts) for ts in range(2, 8))]
    # hoodie.dataset takes the same options as hoodie.read: the same refusal, the same fallback
    with pytest.raises(InstantNotFoundError, match=rf"{t1}.*archived"):
        hoodie.dataset(path, pull)
    assert hoodie.dataset(path, fallback).to_table().sort_by("k").equals(got.sort_by("k"))


def test_a_pull_of_a_cleaned_range_names_the_fallback(tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    no_archival = {**SERVICES, "hoodie.archive.automatic": "false"}
    t1 = write(path, ["a", "b"], 1, **no_archival)
    t2 = write(path, ["a"], 2, **no_archival)
    for ts in range(3, 6):
        write(path, ["a"], ts, **no_archival)
    assert HoodieTable.open(path).timeline.completed(["clean"])
    # (t1, t2] reads a's slice as of t2, which the cleaner removed
    pull = {"hoodie.datasource.query.type": "incremental", "hoodie.datasource.read.begin.instanttime": t1, "hoodie.datasource.read.end.instanttime": t2}
    with pytest.raises(InstantNotFoundError, match=rf"\({t1}, {t2}\].*cleaned.*fallback\.fulltablescan\.enable=true"):
        hoodie.read(path, pull)
    # the fallback: a is now at ts 5, committed after t2: a later range pulls it
    assert hoodie.read(path, {**pull, "hoodie.datasource.read.incr.fallback.fulltablescan.enable": "true"}).num_rows == 0
