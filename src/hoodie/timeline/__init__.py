"""The timeline: instants, their states and transitions, and the metadata they carry.

:mod:`instant` and :mod:`instant_time` hold the value types (instants, instant times
ordered as Hudi orders them, ranges of them, and the one parser of instant times users
give); :mod:`active` reads the active timeline from
storage (layouts 1 and 2), performs atomic state transitions and decodes what instants
say: :mod:`commit_metadata`, :mod:`compaction_plan`, :mod:`rollback_metadata` and
:mod:`action_metadata` are the typed records, :mod:`avro_metadata` their Avro schemas and
the one Avro decoding path. Nothing here reads data files.
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
