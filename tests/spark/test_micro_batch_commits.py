"""BatchCommits' report of an ignored failed batch (hoodie.spark.micro_batch): whether its
rows are in the table or not, on a real table written in process (no JVM needed)."""
from __future__ import annotations

import logging

import pyarrow as pa
import pytest

import hoodie
from hoodie.spark.micro_batch import BatchCommits
from hoodie.timeline.checkpoints import SINK_CHECKPOINT_KEY

OPTIONS = {
    "hoodie.table.name": "t",
    "hoodie.datasource.write.recordkey.field": "uuid",
    "hoodie.datasource.write.partitionpath.field": "city",
    "hoodie.datasource.write.precombine.field": "ts",
    "hoodie.datasource.write.streaming.ignore.failed.batch": "true",
    "hoodie.datasource.write.streaming.retry.count": "1",
}


def _rows() -> pa.Table:
    return pa.table({"uuid": ["a"], "city": ["sf"], "ts": [1]})


def test_an_ignored_batch_that_failed_after_its_commit_is_reported_committed(tmp_path, caplog) -> None:
    path = str(tmp_path / "t")
    commits = BatchCommits(path, OPTIONS)

    def commit_then_fail() -> str | None:
        extra = commits.extra_metadata(0, None)
        hoodie.write(_rows(), path, {**OPTIONS, SINK_CHECKPOINT_KEY: extra[SINK_CHECKPOINT_KEY]})
        raise OSError("the catalog went away")

    with caplog.at_level(logging.ERROR, logger="hoodie.spark.micro_batch"):
        assert commits.write(0, commit_then_fail) is None
    assert hoodie.read(path).column("uuid").to_pylist() == ["a"]
    messages = [r.getMessage() for r in caplog.records]
    assert any("batch 0" in m and "is committed" in m and "the catalog went away" in m for m in messages), messages
    assert not any("not written" in m for m in messages), messages


def test_an_ignored_batch_that_failed_before_its_commit_is_reported_left_out(tmp_path, caplog) -> None:
    path = str(tmp_path / "t")
    hoodie.write(_rows(), path, OPTIONS)  # a table without this writer's checkpoint
    commits = BatchCommits(path, OPTIONS)

    def fail() -> str | None:
        raise OSError("disk full")

    with caplog.at_level(logging.ERROR, logger="hoodie.spark.micro_batch"):
        assert commits.write(3, fail) is None
    messages = [r.getMessage() for r in caplog.records]
    assert any("batch 3" in m and "left out, its rows not written" in m and "disk full" in m for m in messages), messages


def test_without_ignore_the_last_failure_is_raised(tmp_path) -> None:
    commits = BatchCommits(str(tmp_path / "t"), {**OPTIONS, "hoodie.datasource.write.streaming.ignore.failed.batch": "false"})

    def fail() -> str | None:
        raise OSError("disk full")

    with pytest.raises(OSError, match="disk full"):
        commits.write(0, fail)
