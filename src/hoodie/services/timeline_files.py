"""The raw files of the active timeline, grouped by instant time.

:class:`~hoodie.timeline.active.ActiveTimeline` keeps one state per instant; archival and
restore need every file an instant has (requested, inflight and completed, and for a
compaction the ``.compaction.*`` files next to its ``.commit``), so they list the
timeline folder once through this module. Nothing here writes.
"""
from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from hoodie.storage.paths import under
from hoodie.table.table import HoodieTable
from hoodie.timeline.instant import STATE_ORDER, Instant, completed_action, parse_timeline_file_name


@dataclass(frozen=True)
class TimelineFile:
    """One file of the timeline: the instant (as its name says) and where it is."""

    instant: Instant
    path: str
    size: int
    mtime_ms: int


def timeline_files(table: HoodieTable) -> dict[str, list[TimelineFile]]:
    """Every timeline file by instant time, each list ordered requested → completed."""
    timeline = table.timeline
    out: dict[str, list[TimelineFile]] = defaultdict(list)
    for info in table.storage.list_dir(timeline.timeline_dir):
        if info.is_dir:
            continue
        inst = parse_timeline_file_name(info.name)
        if inst is None:
            continue
        out[inst.timestamp].append(TimelineFile(inst, under(timeline.timeline_dir, info.name), info.size, info.mtime_ms))
    for files in out.values():
        files.sort(key=lambda f: (STATE_ORDER[f.instant.state], f.instant.action))
    return dict(out)


def files_of(files: dict[str, list[TimelineFile]], timestamp: str, action: str) -> list[TimelineFile]:
    """The files of one logical instant: same time, same action once completed. A savepoint
    shares its commit's time, so it is told apart by its action."""
    want = completed_action(action)
    return [f for f in files.get(timestamp, []) if completed_action(f.instant.action) == want]
