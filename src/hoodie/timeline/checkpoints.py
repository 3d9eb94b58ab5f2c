"""Checkpoints kept in commit metadata: where a streaming writer stopped.

A streaming writer records its progress in the extra metadata of each commit it makes
(Apache Hudi's streamer under ``deltastreamer.checkpoint.key``, its Structured Streaming
sink under ``_hudi_streaming_sink_checkpoint``). Reading it back is a walk from the newest
completed commit, delta commit or replace commit of the active timeline towards the
oldest, decoding each one's metadata only until one holds the key (as Hudi's
``CommitUtils.getValidCheckpointForCurrentWriter`` does). Instants that carry no
checkpoint (compactions, clustering, another writer's commits) are passed over.

The walk ends at the start of the active timeline: a checkpoint only archived commits
hold is not found (``None``), as in Apache Hudi, whose readers do not open the archived
timeline for it either. A writer that commits at least once every
``hoodie.keep.min.commits`` instants always finds its own; a caller that must not start
over may pass ``limit`` to bound the walk and treat ``None`` as it sees fit.

The sink's value is a JSON object mapping a writer's identifier
(``hoodie.datasource.write.streaming.checkpoint.identifier``) to its last batch id, so
that several writers of one table keep apart checkpoints: :func:`sink_checkpoint_value`
makes it, :func:`sink_batch_of` reads one writer's batch id out of it.
"""
from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass

from hoodie.errors import FormatError
from hoodie.timeline.active import ActiveTimeline
from hoodie.timeline.commit_metadata import CommitMetadata
from hoodie.timeline.instant import Action, Instant

# Apache Hudi's extra-metadata keys
STREAMER_CHECKPOINT_KEY = "deltastreamer.checkpoint.key"
SINK_CHECKPOINT_KEY = "_hudi_streaming_sink_checkpoint"


@dataclass(frozen=True)
class Checkpoint:
    """The checkpoint found: the instant whose commit holds it, and its value."""

    instant: Instant
    value: str
    metadata: CommitMetadata


def latest_checkpoint(
    timeline: ActiveTimeline,
    key: str,
    *,
    select: Callable[[str], str | None] | None = None,
    limit: int | None = None,
) -> Checkpoint | None:
    """The latest completed write instant whose extra metadata holds a non-empty ``key``,
    and the value; ``None`` when no instant of the active timeline holds it.

    ``select`` turns a raw value into the value wanted, or ``None`` to pass the instant
    over (a sink's checkpoint of another writer); ``limit`` bounds the walk to that many
    newest completed write instants. Damaged metadata of an instant walked over raises
    :class:`~hoodie.errors.FormatError` naming it: skipping it could resume from an older
    checkpoint and apply a batch twice."""
    writes = timeline.completed(Action.WRITE_ACTIONS)
    newest_first = writes[::-1] if limit is None else writes[: -limit - 1 : -1] if limit > 0 else []
    for instant in newest_first:
        metadata = timeline.commit_metadata(instant)
        raw = metadata.extra_metadata.get(key)
        if not raw:
            continue
        value = select(raw) if select is not None else raw
        if value is not None:
            return Checkpoint(instant, value, metadata)
    return None


def sink_checkpoint_value(identifier: str, batch_id: int) -> str:
    """The value of :data:`SINK_CHECKPOINT_KEY` for one writer's batch (Hudi's layout:
    ``{"<identifier>": "<batch id>"}``)."""
    return json.dumps({identifier: str(batch_id)})


def sink_batch_of(identifier: str) -> Callable[[str], str | None]:
    """A ``select`` for :func:`latest_checkpoint`: the batch id the sink checkpoint
    records for ``identifier``, ``None`` for another writer's."""

    def select(raw: str) -> str | None:
        try:
            doc = json.loads(raw)
        except ValueError:
            doc = None
        if not isinstance(doc, dict):
            raise FormatError(f"extra metadata {SINK_CHECKPOINT_KEY} is not a JSON object of writer identifiers to batch ids: {raw[:100]!r}")
        value = doc.get(identifier)
        return None if value is None else str(value)

    return select
