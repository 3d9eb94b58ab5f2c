"""Which write instants a read sees: the filter applied to log blocks and base rows.

A merge-on-read read replays only log blocks written by instants the query may see: a
picklable :class:`InstantFilter`, built on the driver from the timeline and sent with
every slice task. Nothing here reads data files.
"""
from __future__ import annotations

from dataclasses import dataclass

from hoodie.layout import InstantTime
from hoodie.timeline.active import ActiveTimeline

__all__ = ["InstantFilter"]


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
