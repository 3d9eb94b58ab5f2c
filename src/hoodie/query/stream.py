"""Where a streaming read of a table stands: offsets that are instants, and the commits
it reads next.

A streaming read pulls the table's changes incrementally, one range ``(start, end]`` of
commits at a time (:func:`~hoodie.query.planner.plan_incremental`); its offsets are the
range's ends, on the time basis of the range: instant times on layout-1 (v6) tables,
completion times on layout-2 (v8+) tables. :data:`EARLIEST` (Apache Hudi's
``INIT_INSTANT_TS``) is before every commit.

On a layout-1 table a write requested earlier than a completed one can still be pending
(a concurrent writer, a slow commit); its instant time is older than the completed one,
so an offset past it would skip it when it completes. As Apache Hudi's streaming source
does by default (``BLOCK``), the commits read next stop before the oldest pending write
(pending compactions do not hold a stream back: they keep their records' commit times).
A failed write left pending holds the stream back until the next writer rolls it back.
On layout-2 tables completion times only grow, so nothing is held back. Nothing here
reads data files or writes.
"""
from __future__ import annotations

from collections.abc import Sequence

from hoodie.config.options import STREAMING_START_OFFSET
from hoodie.errors import ConfigError
from hoodie.layout import InstantTime
from hoodie.query.planner import as_instant
from hoodie.timeline.active import ActiveTimeline
from hoodie.timeline.instant import Action

EARLIEST = "00000000000000"


def commit_offsets(timeline: ActiveTimeline) -> list[str]:
    """The offsets of the completed commits a streaming read may reach, oldest first
    (range keys: instant times, or completion times on layout 2), stopping before the
    oldest pending write of a layout-1 table (module docstring)."""
    keys = sorted((timeline.completion_time(i) for i in timeline.completed_writes()), key=InstantTime)
    if timeline.layout_version >= 2:
        return keys
    pending = [InstantTime(i.timestamp) for i in timeline.pending(Action.WRITE_ACTIONS)]
    if not pending:
        return keys
    oldest = min(pending)
    return [k for k in keys if InstantTime(k) < oldest]


def next_offset(offsets: Sequence[str], start: str, upto: str | None = None, max_commits: int = 0) -> str:
    """Where the range after ``start`` ends: the latest of ``offsets`` after ``start``
    (none after ``upto``), or the ``max_commits``-th one when that is positive; ``start``
    when there is none."""
    after = [o for o in offsets if InstantTime(o) > InstantTime(start) and (upto is None or InstantTime(o) <= InstantTime(upto))]
    if not after:
        return start
    return after[min(len(after), max_commits) - 1] if max_commits > 0 else after[-1]


def parse_start(value: str) -> str:
    """``hoodie.datasource.streaming.startOffset``: ``earliest``, ``latest`` or an instant
    time (``yyyyMMddHHmmss[SSS]`` or a timestamp), normalized."""
    key = value.strip().lower()
    if key in ("earliest", "latest"):
        return key
    try:
        return as_instant(value)
    except ValueError:
        raise ConfigError(
            f"invalid value {value!r} for option {STREAMING_START_OFFSET.key}: expected earliest, latest or an "
            "instant time (yyyyMMddHHmmssSSS)"
        ) from None


def start_offset(timeline: ActiveTimeline, start: str) -> str:
    """The first offset of a new streaming read (``start`` as :func:`parse_start` reads
    it): before every commit (``earliest``), the latest commit it may reach (``latest``:
    only later commits are read), or the instant time given (commits after it)."""
    start = parse_start(start)
    if start == "earliest":
        return EARLIEST
    if start == "latest":
        offsets = commit_offsets(timeline)
        return offsets[-1] if offsets else EARLIEST
    return start
