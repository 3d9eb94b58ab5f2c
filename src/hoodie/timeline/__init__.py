"""The timeline: instants, their states and transitions, and the metadata they carry.

:mod:`instant` holds the value types; :mod:`active` reads the active timeline from
storage (layouts 1 and 2) and performs atomic state transitions; :mod:`commit_metadata`
and :mod:`avro_metadata` encode what completed instants say. Nothing here reads data files.
"""
from __future__ import annotations

from hoodie.timeline.active import ActiveTimeline
from hoodie.timeline.commit_metadata import CommitMetadata, WriteStat
from hoodie.timeline.compaction_plan import CompactionOperation, CompactionPlan
from hoodie.timeline.instant import Action, Instant, State

__all__ = ["Action", "ActiveTimeline", "CommitMetadata", "CompactionOperation", "CompactionPlan", "Instant", "State", "WriteStat"]
