"""Instant times order as Hudi orders them (a second-precision time is the end of its
second), ranges select by that order, and one parser reads the instant times users give:
leniently in read options, strictly on the command line."""
from __future__ import annotations

import pickle
import random

import pyarrow as pa
import pytest

from hoodie.cli.errors import UsageError
from hoodie.cli.instants import parse_instant as cli_instant
from hoodie.errors import ConfigError
from hoodie.layout import InstantTime, LogFileName
from hoodie.query.options import ReadRequest
from hoodie.query.reader import COMMIT_TIME_COLUMN
from hoodie.table.slice_reader.instants import CommitTimes
from hoodie.timeline import Action, Instant, InstantRange, InstantTimeSyntaxError, State, parse_instant_time

SECOND = "20240501134500"


def test_a_second_precision_time_is_the_end_of_its_second() -> None:
    assert InstantTime(SECOND) > InstantTime(SECOND + "998")
    assert InstantTime(SECOND) == InstantTime(SECOND + "999") and hash(InstantTime(SECOND)) == hash(InstantTime(SECOND + "999"))
    assert InstantTime(SECOND) < InstantTime("20240501134501000")
    assert InstantTime("0") < InstantTime(SECOND + "000")
    assert InstantTime(SECOND).key == SECOND + "999" and str(InstantTime(SECOND)) == SECOND
    assert pickle.loads(pickle.dumps(InstantTime(SECOND))) == InstantTime(SECOND)
    times = ["20240501134459", SECOND + "000", SECOND + "500", SECOND, "20240501134501000"]
    assert sorted(random.Random(7).sample(times, len(times)), key=InstantTime) == times
    assert max(times[:-1], key=InstantTime) == SECOND
    assert Instant(SECOND, Action.COMMIT, State.COMPLETED).time > Instant(SECOND + "998", Action.COMMIT, State.COMPLETED).time


def test_log_files_order_by_instant_time() -> None:
    """A log named after a second-precision base instant sorts after one of a millisecond
    instant within that second (a string comparison puts it first)."""
    older = LogFileName("f1-0", SECOND + "500", 1, "1-0-1")
    newer = LogFileName("f1-0", SECOND, 1, "1-0-1")
    assert sorted([newer, older], key=LogFileName.sort_key) == [older, newer]


def test_ranges() -> None:
    incremental = InstantRange(after=SECOND + "000", upto=SECOND)
    assert SECOND + "500" in incremental and SECOND + "999" in incremental and SECOND in incremental
    assert SECOND + "000" not in incremental and "20240501134501000" not in incremental
    as_of = InstantRange(upto=SECOND)
    assert SECOND + "999" in as_of and "20240501134501" not in as_of
    window = InstantRange(from_=SECOND + "000", before=SECOND)
    assert SECOND + "000" in window and SECOND + "998" in window and SECOND not in window and SECOND + "999" not in window
    assert "0" in InstantRange()


def test_incremental_rows_compare_commit_times_as_instants() -> None:
    """Rows of a second-precision commit time are the end of their second: in a range
    ending at a later millisecond of that second they are out, after an earlier one in."""
    rows = pa.table({COMMIT_TIME_COLUMN: [SECOND, SECOND + "100", "20240501134459"]})
    assert CommitTimes(after=SECOND + "000", upto=SECOND + "500").filter(rows).column(0).to_pylist() == [SECOND + "100"]
    assert CommitTimes(after=SECOND + "500", upto="20240501134501000").filter(rows).column(0).to_pylist() == [SECOND]


@pytest.mark.parametrize(
    ("text", "lenient", "strict"),
    [
        ("20240501134500123", "20240501134500123", "20240501134500123"),
        (SECOND, SECOND, SECOND),
        ("20240501", "20240501", "20240501000000000"),
        ("0", "0", None),
        ("000", "000", None),
        ("2024-05-01", "20240501000000000", "20240501000000000"),
        ("2024-05-01 13:45", "20240501134500000", "20240501134500000"),
        (" 2024-05-01T13:45:00.25 ", "20240501134500250", "20240501134500250"),
        ("2024-04-18 17:35:50.988", "20240418173550988", "20240418173550988"),
    ],
)
def test_one_parser_lenient_for_read_options_strict_for_the_command_line(text: str, lenient: str, strict: str | None) -> None:
    assert parse_instant_time(text) == lenient
    if strict is None:
        with pytest.raises(InstantTimeSyntaxError, match="expected yyyyMMddHHmmss"):
            parse_instant_time(text, strict=True)
        assert parse_instant_time(text, strict=True, allow_zero=True) == text
    else:
        assert parse_instant_time(text, strict=True) == strict
        assert cli_instant(text, "--as-of") == strict


@pytest.mark.parametrize("text", ["2024-13-01", "2024-05-01 25:00", "2024-02-30"])
def test_dates_that_do_not_exist_are_refused_everywhere(text: str) -> None:
    with pytest.raises(InstantTimeSyntaxError, match="not a valid date and time"):
        parse_instant_time(text)
    with pytest.raises(UsageError, match=f"invalid instant '{text}' for --as-of: not a valid date and time"):
        cli_instant(text, "--as-of")
    with pytest.raises(ConfigError, match="as.of.instant"):
        ReadRequest.of({"as.of.instant": text})


@pytest.mark.parametrize("text", ["yesterday", "2024-05-01 13:45.250", "2024/05/01", "20240501 1345"])
def test_what_is_no_instant_is_refused(text: str) -> None:
    with pytest.raises(InstantTimeSyntaxError, match="not an instant time"):
        parse_instant_time(text)
    with pytest.raises(UsageError, match=f"invalid instant '{text}' for --end: expected yyyyMMddHHmmss"):
        cli_instant(text, "--end")
