"""Which write instants a read sees: the filters applied to log blocks and base rows.

A merge-on-read read replays only log blocks written by instants the query may see: a
picklable :class:`InstantFilter`, built on the driver from the timeline and sent with
every slice task. An incremental read also keeps rows by their commit time
(:class:`CommitTimes`): base-file rows before they are merged, and every row it returns.
Nothing here reads data files.
"""
from __future__ import annotations

from dataclasses import dataclass

import pyarrow as pa
import pyarrow.compute as pc

from hoodie.formats.meta_columns import COMMIT_TIME
from hoodie.layout import InstantTime
from hoodie.timeline.active import ActiveTimeline

__all__ = ["CommitTimes", "InstantFilter"]


@dataclass(frozen=True)
class InstantFilter:
    """Instants whose data a query sees.

    An instant is seen when it is a completed write (``completed``) — or older than the
    active timeline (``timeline_start``), hence archived and committed, and not undone by
    a rollback on the timeline (``rolled_back``) — and lies in
    ``(after, upto]`` (either bound optional). ``only``, when set, replaces all of that
    with an explicit set (layout-2 incremental ranges, which are defined on completion
    times). Pending, failed and rolled-back instants are never seen.
    """

    completed: frozenset[str]
    timeline_start: str | None = None
    after: str | None = None
    upto: str | None = None
    only: frozenset[str] | None = None
    rolled_back: frozenset[str] = frozenset()  # instants rollbacks on the timeline undid: never seen

    @classmethod
    def of_timeline(cls, timeline: ActiveTimeline, after: str | None = None, upto: str | None = None) -> InstantFilter:
        completed = frozenset(i.timestamp for i in timeline.completed_writes())
        return cls(completed, timeline.commits_start(), after, upto, rolled_back=timeline.rolled_back())

    @classmethod
    def exactly(cls, instants: frozenset[str]) -> InstantFilter:
        return cls(frozenset(instants), None, None, None, frozenset(instants))

    def __call__(self, instant: str) -> bool:
        if self.only is not None:
            return instant in self.only
        key = InstantTime(instant)
        if self.upto is not None and key > InstantTime(self.upto):
            return False
        if self.after is not None and key <= InstantTime(self.after):
            return False
        if instant in self.completed:
            return True
        return self.timeline_start is not None and key < InstantTime(self.timeline_start) and (
            instant not in self.rolled_back
        )


@dataclass(frozen=True)
class CommitTimes:
    """Rows by their ``_hoodie_commit_time``: those in ``only`` when it is set, else those
    in ``(after, upto]`` (instant times, ordered as :class:`~hoodie.layout.InstantTime`
    orders them; either bound optional). Picklable, for slice tasks."""

    after: str | None = None
    upto: str | None = None
    only: frozenset[str] | None = None

    def filter(self, data: pa.Table) -> pa.Table:
        """The rows of ``data`` (which must hold the commit-time column) kept; a row
        without a commit time is in no range."""
        column = data.column(COMMIT_TIME)
        if self.only is not None:
            return data.filter(pc.fill_null(pc.is_in(column, value_set=pa.array(sorted(self.only), pa.string())), False))
        # the InstantTime key of every row: a second-precision time is the end of its second
        keys = pc.if_else(pc.equal(pc.utf8_length(column), 14), pc.binary_join_element_wise(column, "999", ""), column)
        mask = pc.is_valid(keys)
        if self.after is not None:
            mask = pc.and_(mask, pc.greater(keys, InstantTime(self.after).key))
        if self.upto is not None:
            mask = pc.and_(mask, pc.less_equal(keys, InstantTime(self.upto).key))
        return data.filter(pc.fill_null(mask, False))
