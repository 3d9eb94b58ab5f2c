"""Helpers of the CLI: instant parsing, sizes, JSON values and the progress engine."""
from __future__ import annotations

import datetime as dt
import decimal

import pytest
from rich.progress import Progress

from hoodie.cli.errors import UsageError
from hoodie.cli.instants import parse_instant
from hoodie.cli.output import ProgressEngine, human_size, json_default
from hoodie.engine import LocalEngine


@pytest.mark.parametrize(
    ("text", "instant"),
    [
        ("20240501134500123", "20240501134500123"),
        ("20240501134500", "20240501134500"),
        ("20240501", "20240501000000000"),
        ("2024050113", "20240501130000000"),
        ("2024-05-01", "20240501000000000"),
        ("2024-05-01 13:45", "20240501134500000"),
        ("2024-05-01T13:45:00", "20240501134500000"),
        (" 2024-05-01 13:45:00.25 ", "20240501134500250"),
    ],
)
def test_parse_instant(text, instant):
    assert parse_instant(text, "--as-of") == instant


@pytest.mark.parametrize("text", ["0", "000", "20240501"])
def test_zero_starts_an_incremental_pull(text):
    assert parse_instant(text, "--begin", allow_zero=True) == ("20240501000000000" if text == "20240501" else text)


@pytest.mark.parametrize("text", ["0", "", "yesterday", "2024", "2024-05", "20241301", "2024-05-01 25:00", "2024-05-01 13:45.250", "123456789012345678"])
def test_parse_instant_rejects(text):
    with pytest.raises(UsageError, match="for --as-of"):
        parse_instant(text, "--as-of")


@pytest.mark.parametrize(
    ("begin", "end"),
    [("20240501134500", "20240501134500998"), ("2024-05-02", "2024-05-01 23:59:59.999"), ("20240501134501", "20240501134500")],
)
def test_begin_after_end_is_refused(begin, end, tmp_path):
    """--begin is compared with --end as instants (a second-precision instant is the end
    of its second), not as strings."""
    from hoodie.cli.read import make_request

    with pytest.raises(UsageError, match="is after --end"):
        make_request(str(tmp_path), None, begin, end, 20, None, "table", False)


def test_human_size():
    assert human_size(0) == "0 B"
    assert human_size(1023) == "1023 B"
    assert human_size(1536) == "1.5 KiB"
    assert human_size(5 * 1024**3) == "5.0 GiB"
    assert human_size(None) == "-"


def test_json_default():
    assert json_default(dt.datetime(2024, 5, 1, 13, 45, tzinfo=dt.timezone.utc)) == "2024-05-01T13:45:00+00:00"
    assert json_default(dt.date(2024, 5, 1)) == "2024-05-01"
    assert json_default(decimal.Decimal("12.340")) == "12.340"
    assert json_default(b"hi") == "aGk="


def test_progress_engine_runs_every_task_in_order():
    with Progress(disable=True) as display:
        engine = ProgressEngine(display, LocalEngine(max_workers=4))
        assert engine.parallelism == 4
        assert engine.shares_memory  # its tasks run on the wrapped engine's threads
        assert engine.map(lambda item, ctx: (item * 2, ctx.partition_id), list(range(10)), "double") == [
            (i * 2, i) for i in range(10)
        ]
        assert len(display.tasks) == 0  # the batch's bar is gone when it is done


def test_progress_engine_passes_errors_through():
    def fail(item, ctx):
        raise ValueError(item)

    with Progress(disable=True) as display:
        with pytest.raises(ValueError):
            ProgressEngine(display, LocalEngine(max_workers=2)).map(fail, [1, 2], "fail")
        assert len(display.tasks) == 0
