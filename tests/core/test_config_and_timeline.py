"""hoodie.properties round trips with Java's checksum; the timeline parses both layouts and
transitions instants write-once."""
from __future__ import annotations

from pathlib import Path

import pytest

from hoodie.cli.errors import UsageError
from hoodie.cli.instants import parse_instant as cli_instant
from hoodie.config.options import HoodieConfig
from hoodie.config.properties import parse_properties, render_properties
from hoodie.config.table_config import TableConfig, table_checksum
from hoodie.errors import ConfigError, TimelineError
from hoodie.layout import (
    is_instant_time,
    parse_base_file_name,
    parse_instant,
    parse_log_file_name,
    parse_marker_name,
)
from hoodie.markers.timeline_based import markers_file_index
from hoodie.query.planner import as_instant
from hoodie.storage.local import LocalStorage
from hoodie.table.properties_file import load_table_config, store_table_config
from hoodie.timeline.active import ActiveTimeline
from hoodie.timeline.instant import Action, Instant, State, parse_timeline_file_name
from hoodie.timeline.instant_time import parse_instant_time


def test_checksum_matches_java() -> None:
    # value from the spec: zlib.crc32(b"default.v6_nonpartitioned") as Java computes it
    assert table_checksum("default", "v6_nonpartitioned") == 1363530505


def test_properties_round_trip_with_escapes() -> None:
    props = {"hoodie.table.name": "t", "hoodie.table.create.schema": '{"a":"b:c"}', "k": "é"}
    text = render_properties(props, last_key="hoodie.table.name").decode("ascii")
    assert text.splitlines()[-1] == "hoodie.table.name=t"
    assert "\\u00e9" in text and "\\:" in text
    assert parse_properties(text) == props


def test_table_config_backup_fallback(tmp_path: Path) -> None:
    storage = LocalStorage()
    meta = str(tmp_path / ".hoodie")
    store_table_config(TableConfig({"hoodie.table.name": "t", "hoodie.table.type": "COPY_ON_WRITE"}), storage, meta, create=True)
    (tmp_path / ".hoodie" / "hoodie.properties.backup").write_bytes((tmp_path / ".hoodie" / "hoodie.properties").read_bytes())
    (tmp_path / ".hoodie" / "hoodie.properties").write_text("hoodie.table.name=t\nhoodie.table.checksum=1\n")
    assert load_table_config(storage, meta).name == "t"  # bad checksum: the backup is used


def test_unknown_and_conflicting_options() -> None:
    with pytest.raises(ConfigError, match="did you mean hoodie.index.type"):
        HoodieConfig.of({"hoodie.index.typ": "BLOOM"})
    with pytest.raises(ConfigError, match="conflicts"):
        HoodieConfig.of({"hoodie.datasource.write.table.name": "a", "hoodie.table.name": "b"})
    assert HoodieConfig.of({"path": "/x", "spark.foo": "1"}).raw == {"path": "/x", "spark.foo": "1"}


@pytest.mark.parametrize(
    ("typed", "suggested"),
    [
        ("hoodie.datasource.write.recordkey.fields", "hoodie.datasource.write.recordkey.field"),
        ("hoodie.cleaner.commit.retained", "hoodie.cleaner.commits.retained"),
        ("hoodie.clean.commits.retained", "hoodie.cleaner.commits.retained"),
        ("hoodie.parquet.compresion.codec", "hoodie.parquet.compression.codec"),
        ("hoodie.write.operation", "hoodie.datasource.write.operation"),
        ("hoodie.metadata.enabled", "hoodie.metadata.enable"),
        ("hoodie.bloom.index.fpp", "hoodie.index.bloom.fpp"),
        ("hoodie.upsert.parallelism", "hoodie.upsert.shuffle.parallelism"),
    ],
)
def test_unknown_option_suggests_the_name_closest_by_segments(typed: str, suggested: str) -> None:
    with pytest.raises(ConfigError) as err:
        HoodieConfig.of({typed: "x"})
    assert str(err.value) == f"unknown option {typed}; did you mean {suggested}?"


@pytest.mark.parametrize("typed", ["hoodie.datasource.hive_sync.jdbcurl", "hoodie.write.lock.provider", "hoodie.datasource.write.foo.bar", "hoodie.foo"])
def test_unknown_option_with_nothing_close_suggests_nothing(typed: str) -> None:
    with pytest.raises(ConfigError) as err:
        HoodieConfig.of({typed: "x"})
    assert str(err.value) == f"unknown option {typed}"


def test_timeline_file_names() -> None:
    assert parse_timeline_file_name("20240418173550988.inflight") == Instant("20240418173550988", "commit", State.INFLIGHT)
    assert parse_timeline_file_name("20240418173550988.commit.requested").state is State.REQUESTED
    done = parse_timeline_file_name("20250713010535797_20250713010536200.commit")
    assert done == Instant("20250713010535797", "commit", State.COMPLETED, "20250713010536200")
    assert parse_timeline_file_name("hoodie.properties") is None
    assert parse_timeline_file_name(".20240418173550988.commit.abc.tmp") is None
    assert Instant("1", Action.COMPACTION, State.COMPLETED).file_name() == "1.commit"


def test_transitions_are_write_once_and_ordered(tmp_path: Path) -> None:
    storage = LocalStorage()
    (tmp_path / ".hoodie").mkdir()
    tl = ActiveTimeline.load(storage, str(tmp_path))
    t = tl.new_instant_time()
    inst = tl.create_requested(Instant(t, Action.COMMIT, State.REQUESTED))
    with pytest.raises(TimelineError, match="not inflight"):
        tl.transition_to_completed(inst, b"{}")
    tl.transition_to_inflight(inst)
    tl.transition_to_completed(inst, b"{}")
    with pytest.raises(TimelineError, match="already exists"):
        tl.transition_to_completed(inst, b"{}")
    tl = tl.reload()
    assert [i.state for i in tl.instants] == [State.COMPLETED]
    assert tl.new_instant_time() > t


def test_file_name_grammar() -> None:
    b = parse_base_file_name("a079bdb3-731c-4894-b855-abfcd6921007-0_0-182-253_20240418173550988.parquet")
    assert (b.file_id, b.write_token, b.instant) == ("a079bdb3-731c-4894-b855-abfcd6921007-0", "0-182-253", "20240418173550988")
    lf = parse_log_file_name(".0712b9f9-d2d5-4cae-bcf4-8fd7146af503-0_20250126040823628.log.2_1-0-1")
    assert (lf.version, lf.write_token, lf.instant) == (2, "1-0-1", "20250126040823628")
    assert parse_marker_name("p=1/f_0-1-2_3.parquet.marker.MERGE") == ("p=1", "f_0-1-2_3.parquet", "MERGE")
    assert parse_instant_time("2024-04-18 17:35:50.988") == "20240418173550988"
    with pytest.raises(ValueError, match="yesterday"):
        parse_instant_time("yesterday")


FULLWIDTH = "２０２４０４１８１７３５５０９８８"  # 20240418173550988 in fullwidth digits
SUPERSCRIPT = "2024041817355098²"  # str.isdigit() says yes, int() says no


@pytest.mark.parametrize("odd", [FULLWIDTH, SUPERSCRIPT, "٢٠٢٤٠٤١٨١٧٣٥٥٠٩٨٨"])
def test_instants_are_ascii_digits_only(odd: str) -> None:
    """Python's str.isdigit() and regex \\d take any Unicode digit; an instant, wherever
    it is parsed, takes ASCII digits only."""
    assert not is_instant_time(odd)
    with pytest.raises(ValueError, match="not an instant time"):
        parse_instant_time(odd)
    with pytest.raises(ValueError, match="not an instant time"):
        parse_instant_time(odd, strict=True)
    with pytest.raises(ValueError, match="not an instant time"):
        parse_instant(odd)
    with pytest.raises(ValueError):
        as_instant(odd)
    with pytest.raises(UsageError, match="--as-of"):
        cli_instant(odd, "--as-of")
    with pytest.raises(UsageError, match="--as-of"):
        cli_instant(f"{odd[-4:]}-04-18", "--as-of")
    with pytest.raises(TimelineError, match="ASCII digits"):
        parse_timeline_file_name(f"{odd}.commit")
    with pytest.raises(TimelineError, match="ASCII digits"):
        parse_timeline_file_name(f"20240418173550988_{odd}.commit")
    assert parse_base_file_name(f"f1-0_0-1-0_{odd}.parquet") is None
    assert parse_log_file_name(f".f1-0_{odd}.log.1_0-1-0") is None
    assert parse_log_file_name(".f1-0_20240418173550988.log.１_0-1-0") is None
    assert markers_file_index("MARKERS²") is None and markers_file_index("MARKERS１") is None
    assert is_instant_time("20240418173550988") and as_instant(" 20240418173550988 ") == "20240418173550988"


def test_two_actions_at_one_instant(tmp_path: Path) -> None:
    """Two writers that took the same millisecond leave two requested files for a moment
    (the later steps to another time): a reader loads the timeline meanwhile. Two completed
    actions at one instant are a damaged timeline."""
    timeline_dir = tmp_path / ".hoodie"
    timeline_dir.mkdir()
    for name in ("20260101000000000.commit.requested", "20260101000000000.rollback.requested"):
        (timeline_dir / name).write_bytes(b"")
    [only] = ActiveTimeline.load(LocalStorage(), str(tmp_path)).instants
    assert only.timestamp == "20260101000000000" and only.state is State.REQUESTED
    for name in ("20260101000000000.commit", "20260101000000000.deltacommit"):
        (timeline_dir / name).write_bytes(b"{}")
    with pytest.raises(TimelineError, match="two actions at instant 20260101000000000"):
        ActiveTimeline.load(LocalStorage(), str(tmp_path))


def test_a_new_instant_steps_past_another_action_at_the_same_time(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / ".hoodie").mkdir()
    timeline = ActiveTimeline.load(LocalStorage(), str(tmp_path))
    taken = "20260101000000000"
    (tmp_path / ".hoodie" / f"{taken}.rollback.requested").write_bytes(b"")
    times = iter([taken, "20260101000000001"])
    monkeypatch.setattr(ActiveTimeline, "new_instant_time", lambda self, after="": next(times))
    created = timeline.request_new(Action.COMMIT)
    assert created.timestamp == "20260101000000001"
    assert sorted(p.name for p in (tmp_path / ".hoodie").iterdir()) == [f"{taken}.rollback.requested", "20260101000000001.commit.requested"]
