"""Extra metadata a write carries into its commit (options under
``hoodie.datasource.write.commitmeta.key.prefix`` and ``extra_metadata``), and checkpoints
read back from it (``timeline.checkpoints``)."""
from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pytest
from readers import hudi_rs_table
from table_options import MOR_TRIPS, trip_options

import hoodie
from hoodie.errors import ConfigError, FormatError
from hoodie.services.for_writers import WRITER_SERVICES
from hoodie.table.table import HoodieTable
from hoodie.timeline.checkpoints import (
    SINK_CHECKPOINT_KEY,
    STREAMER_CHECKPOINT_KEY,
    latest_checkpoint,
    sink_batch_of,
    sink_checkpoint_value,
)
from hoodie.timeline.instant import Action
from hoodie.writer.client import WriteClient


def trips(uuids: list[str], ts: int) -> pa.Table:
    return pa.table({"uuid": uuids, "city": ["sf"] * len(uuids), "ts": [ts] * len(uuids), "fare": [float(ts)] * len(uuids)})


def extra_of(path: str, instant: str) -> dict[str, str]:
    table = HoodieTable.open(path)
    return table.timeline.commit_metadata(table.timeline.get(instant)).extra_metadata


def test_prefixed_options_and_extra_metadata_reach_the_commit(tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    opts = trip_options(**{"_source.offset": "42", "_job": "nightly"})
    instant = hoodie.write(trips(["a", "b"], 1), path, opts, extra_metadata={"deltastreamer.checkpoint.key": "file-7", "_job": "given"})
    extra = extra_of(path, instant)
    assert extra["_source.offset"] == "42"
    assert extra["_job"] == "given", "the caller's extra metadata wins over an option of the same key"
    assert extra[STREAMER_CHECKPOINT_KEY] == "file-7"
    assert "schema" in extra and "hoodie.storage.calls" in extra, "the commit's own keys stay"
    assert "hoodie.table.name" not in extra, "options outside the prefix stay out"
    # the JSON on disk carries them as Hudi's extraMetadata
    raw = json.loads((Path(path) / ".hoodie" / f"{instant}.commit").read_bytes())
    assert raw["extraMetadata"]["_source.offset"] == "42"
    assert sorted(r["uuid"] for r in hudi_rs_table(path).to_pylist()) == ["a", "b"]


def test_a_configured_prefix_picks_other_keys(tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    opts = trip_options(**{"hoodie.datasource.write.commitmeta.key.prefix": "checkpoint.", "checkpoint.kafka": "p0:17", "_x": "1"})
    instant = hoodie.write(trips(["a"], 1), path, opts)
    extra = extra_of(path, instant)
    assert extra["checkpoint.kafka"] == "p0:17"
    assert "_x" not in extra
    # a key under the prefix is metadata, not a mistyped option; other hoodie.* typos still are
    with pytest.raises(ConfigError, match="hoodie.datasource.write.operation"):
        hoodie.write(trips(["a"], 2), path, {**opts, "hoodie.datasource.write.operatoin": "upsert"})


def test_write_client_carries_extra_metadata(tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    client = WriteClient(path, trip_options(), services=WRITER_SERVICES)
    instant = client.write(trips(["a"], 1), extra_metadata={"batch": "3"})
    assert extra_of(path, instant)["batch"] == "3"


@pytest.mark.parametrize(
    "extra, message",
    [({"schema": "{}"}, "'schema' is written by the commit itself"), ({"hoodie.storage.calls": "{}"}, "hoodie.storage.calls"), ({"n": 3}, "'n': 3")],
)
def test_bad_extra_metadata_is_refused_before_anything_is_written(tmp_path: Path, extra: dict, message: str) -> None:
    path = tmp_path / "t"
    with pytest.raises(ConfigError, match=message):
        hoodie.write(trips(["a"], 1), str(path), trip_options(), extra_metadata=extra)
    assert not path.exists(), "no table was created"


def test_latest_checkpoint_walks_back_past_commits_without_it(tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    opts = {**MOR_TRIPS, "hoodie.compact.inline": "true", "hoodie.compact.inline.max.delta.commits": "2"}
    first = hoodie.write(trips(["a"], 1), path, opts, extra_metadata={STREAMER_CHECKPOINT_KEY: "f1"})
    second = hoodie.write(trips(["a"], 2), path, opts, extra_metadata={STREAMER_CHECKPOINT_KEY: "f2"})  # a log file
    hoodie.write(trips(["a", "c"], 3), path, opts)  # another writer's commit: no checkpoint
    timeline = HoodieTable.open(path).timeline
    assert timeline.completed([Action.COMMIT]), "an inline compaction completed (a commit without checkpoint)"
    found = latest_checkpoint(timeline, STREAMER_CHECKPOINT_KEY)
    assert found is not None and (found.instant.timestamp, found.value) == (second, "f2")
    assert found.metadata.extra_metadata[STREAMER_CHECKPOINT_KEY] == "f2"
    assert latest_checkpoint(timeline, STREAMER_CHECKPOINT_KEY, limit=1) is None, "the walk stops at the limit"
    assert latest_checkpoint(timeline, "no.such.key") is None
    assert first < second


def test_sink_checkpoints_of_several_writers_are_kept_apart(tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    for n, (writer, batch) in enumerate([("q1", 0), ("q2", 0), ("q1", 1), ("q2", 5)]):
        hoodie.write(trips([f"k{n}"], n), path, trip_options(), extra_metadata={SINK_CHECKPOINT_KEY: sink_checkpoint_value(writer, batch)})
    timeline = HoodieTable.open(path).timeline
    latest = timeline.completed_writes()[-1]
    assert json.loads(timeline.commit_metadata(latest).extra_metadata[SINK_CHECKPOINT_KEY]) == {"q2": "5"}, "Hudi's layout"
    q1 = latest_checkpoint(timeline, SINK_CHECKPOINT_KEY, select=sink_batch_of("q1"))
    assert q1 is not None and q1.value == "1"
    assert latest_checkpoint(timeline, SINK_CHECKPOINT_KEY, select=sink_batch_of("q3")) is None


def test_a_damaged_sink_checkpoint_is_an_error_naming_it(tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    hoodie.write(trips(["a"], 1), path, trip_options(), extra_metadata={SINK_CHECKPOINT_KEY: "batch 3"})
    with pytest.raises(FormatError, match="batch 3"):
        latest_checkpoint(HoodieTable.open(path).timeline, SINK_CHECKPOINT_KEY, select=sink_batch_of("q1"))


def test_a_checkpoint_only_archived_commits_hold_is_not_found(tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    services = {"hoodie.cleaner.commits.retained": "1", "hoodie.keep.min.commits": "2", "hoodie.keep.max.commits": "3"}
    opts = trip_options(**services, **{"hoodie.metadata.enable": "false"})
    first = hoodie.write(trips(["a"], 1), path, opts, extra_metadata={STREAMER_CHECKPOINT_KEY: "f1"})
    for ts in range(2, 7):
        hoodie.write(trips(["a"], ts), path, opts)
    timeline = HoodieTable.open(path).timeline
    assert not timeline.contains(first), "the checkpointed commit was archived"
    assert latest_checkpoint(timeline, STREAMER_CHECKPOINT_KEY) is None
