"""Commit metadata decoded once per process: every table opened afresh (a write opens
several, each view reads every completed write) reuses what an earlier snapshot decoded,
keyed by the instant file's bytes, so a table rewritten at the same path never gets the
old table's metadata back; a timeline server's views keep none."""
from __future__ import annotations

from pathlib import Path
from unittest import mock

import pyarrow as pa
import pytest
from table_options import kp_insert_options

import hoodie
from hoodie.table.table import HoodieTable
from hoodie.timeline import decoded
from hoodie.timeline.commit_metadata import CommitMetadata

OPTS = kp_insert_options()


def _write(path: str, commits: int, tag: str = "") -> None:
    for c in range(commits):
        hoodie.write(pa.table({"k": [f"{tag}k{c}-{i}" for i in range(3)], "p": ["a", "b", "c"], "ts": [c] * 3}), path, OPTS)


@pytest.fixture
def shared() -> decoded.DecodedMetadata:
    """A fresh process-wide map for the test (others' entries neither help nor hinder)."""
    fresh = decoded.DecodedMetadata()
    with mock.patch.object(decoded, "SHARED", fresh):
        yield fresh


def _all_metadata(path: str) -> list[CommitMetadata]:
    timeline = HoodieTable.open(path).timeline
    return [m for _, m in timeline.commit_metadata_of(timeline.completed_writes())]


def test_fresh_snapshots_decode_each_commit_once(tmp_path: Path, shared: decoded.DecodedMetadata) -> None:
    path = str(tmp_path / "t")
    _write(path, 4)
    first = _all_metadata(path)
    HoodieTable.open(path).local_view().latest_slices_all()  # (the metadata table's commits too)
    after_first = shared.decoded
    assert after_first >= 4
    # every table opened after decodes nothing again, however many views read the commits
    for _ in range(3):
        again = _all_metadata(path)
        assert again == first
        HoodieTable.open(path).local_view().latest_slices_all()
    assert shared.decoded == after_first
    # a new commit is decoded once, the others not again
    _write(path, 1, "new")
    shared.decoded = 0
    assert len(_all_metadata(path)) == 5
    _all_metadata(path)
    assert shared.decoded <= 1


def test_a_table_rewritten_at_the_same_path_gets_its_own_metadata(tmp_path: Path, shared: decoded.DecodedMetadata) -> None:
    path = str(tmp_path / "t")
    _write(path, 1, "old")
    timeline = HoodieTable.open(path).timeline
    (instant,) = timeline.completed_writes()
    old = timeline.commit_metadata(instant)
    # the same instant file, other bytes (a table deleted and written again, a restored
    # copy): what was decoded from the old bytes is not served for the new ones
    content = timeline.read_content(instant)
    forged = content.replace(b'"operationType":"INSERT"', b'"operationType":"UPSERT"')
    assert forged != content
    Path(timeline.instant_path(instant)).write_bytes(forged)
    fresh = HoodieTable.open(path).timeline
    assert fresh.commit_metadata(instant).operation_type == "UPSERT"
    assert old.operation_type == "INSERT"


def test_a_timeline_that_keeps_no_metadata_leaves_none_behind(tmp_path: Path, shared: decoded.DecodedMetadata) -> None:
    path = str(tmp_path / "t")
    _write(path, 2)
    shared.clear()
    before = shared.decoded
    timeline = HoodieTable.open(path).timeline.without_metadata_cache()
    assert len(list(timeline.commit_metadata_of(timeline.completed_writes()))) == 2
    assert shared.decoded == before and not shared._entries


def test_the_map_is_bounded_by_the_bytes_it_decoded() -> None:
    kept = decoded.DecodedMetadata(max_bytes=10)
    for i in range(5):
        kept.get(f"p{i}", b"1234", lambda data: CommitMetadata(operation_type=data.decode()))
    assert kept._bytes <= 10 and len(kept._entries) == 2
    # the newest are kept; an older one is decoded again
    kept.get("p4", b"1234", lambda data: pytest.fail("p4 was kept"))
    before = kept.decoded
    kept.get("p0", b"1234", lambda data: CommitMetadata())
    assert kept.decoded == before + 1
