"""The timeline: instants, their states and transitions, and the metadata they carry.

:mod:`instant` and :mod:`instant_time` hold the value types (instants, instant times
ordered as Hudi orders them, ranges of them, and the one parser of instant times users
give); :mod:`active` reads the active timeline from
storage (layouts 1 and 2) and performs atomic state transitions; :mod:`commit_metadata`
and :mod:`avro_metadata` encode what completed instants say. Nothing here reads data files.
"""
from __future__ import annotations

from hoodie.layout import InstantTime
from hoodie.timeline.active import ActiveTimeline
from hoodie.timeline.commit_metadata import CommitMetadata, WriteStat
from hoodie.timeline.compaction_plan import CompactionOperation, CompactionPlan
from hoodie.timeline.instant import Action, Instant, State
from hoodie.timeline.instant_time import InstantRange, InstantTimeSyntaxError, parse_instant_time

__all__ = [
    "Action", "ActiveTimeline", "CommitMetadata", "CompactionOperation", "CompactionPlan", "Instant", "InstantRange", "InstantTime",
    "InstantTimeSyntaxError", "State", "WriteStat", "parse_instant_time",
]
