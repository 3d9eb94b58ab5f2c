"""An empty read says why, through the ``hoodie`` logger: time travel to before the first
commit, an incremental pull that begins at or after the latest commit, and a range with
no commit in it. A read that finds rows says nothing."""
from __future__ import annotations

import logging
from pathlib import Path

import pyarrow as pa
import pytest
from table_options import trip_options

import hoodie

INCREMENTAL = {"hoodie.datasource.query.type": "incremental"}


def batch(key: str) -> pa.Table:
    return pa.table({"uuid": [key], "city": ["sf"], "ts": [1], "fare": [1.0]})


@pytest.fixture
def two_commits(tmp_path: Path) -> tuple[str, str, str]:
    path = str(tmp_path / "t")
    first = hoodie.write(batch("a"), path, trip_options())
    latest = hoodie.write(batch("b"), path, trip_options())
    return path, first, latest


def reasons(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name.startswith("hoodie") and r.levelno == logging.WARNING]


def test_time_travel_before_the_first_commit(two_commits, caplog) -> None:
    path, first, latest = two_commits
    with caplog.at_level(logging.WARNING, logger="hoodie"):
        assert hoodie.read(path, {"as.of.instant": "20000101000000000"}).num_rows == 0
    assert reasons(caplog) == [
        f"as.of.instant 20000101000000000 is before the first commit of {path} (its first commit is {first}, its latest {latest}): the read is empty"
    ]


@pytest.mark.parametrize("at", ["latest", "later"])
def test_incremental_from_the_latest_commit_or_later(two_commits, caplog, at: str) -> None:
    path, first, latest = two_commits
    begin = latest if at == "latest" else "29990101000000000"
    with caplog.at_level(logging.WARNING, logger="hoodie"):
        assert hoodie.read(path, {**INCREMENTAL, "hoodie.datasource.read.begin.instanttime": begin}).num_rows == 0
    assert reasons(caplog) == [
        f"incremental pull from {begin} on {path}: it begins at or after the latest commit, so nothing was committed after it "
        f"(its first commit is {first}, its latest {latest}): the read is empty"
    ]


def test_incremental_range_without_a_commit(two_commits, caplog) -> None:
    path, first, latest = two_commits
    with caplog.at_level(logging.WARNING, logger="hoodie"):
        options = {**INCREMENTAL, "hoodie.datasource.read.begin.instanttime": "0", "hoodie.datasource.read.end.instanttime": "20000101000000000"}
        assert hoodie.read(path, options).num_rows == 0
    assert reasons(caplog) == [
        f"no commit of {path} completed in (0, 20000101000000000] (its first commit is {first}, its latest {latest}): the read is empty"
    ]


def test_rows_found_say_nothing(two_commits, caplog) -> None:
    path, first, _ = two_commits
    with caplog.at_level(logging.WARNING, logger="hoodie"):
        assert hoodie.read(path).num_rows == 2
        assert hoodie.read(path, {"as.of.instant": first}).num_rows == 1
        assert hoodie.read(path, {**INCREMENTAL, "hoodie.datasource.read.begin.instanttime": first}).num_rows == 1
    assert reasons(caplog) == []
