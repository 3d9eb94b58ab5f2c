"""Compaction plans: the Avro ``HoodieCompactionPlan`` saved as ``<t>.compaction.requested``,
the operations it lists (one per file slice to compact), and the pending compactions of a
timeline with their plans (what writers, the cleaner and compaction itself must respect)."""
from __future__ import annotations

from dataclasses import dataclass, field

from hoodie.layout import InstantTime
from hoodie.storage.paths import check_name, check_partition_path
from hoodie.timeline import avro_metadata as avro
from hoodie.timeline.active import ActiveTimeline
from hoodie.timeline.instant import Action, Instant, State

_S = "string"

COMPACTION_PLAN = {
    "type": "record",
    "name": "HoodieCompactionPlan",
    "namespace": "org.apache.hudi.avro.model",
    "fields": [
        {"name": "operations", "type": ["null", {"type": "array", "items": {
            "type": "record",
            "name": "HoodieCompactionOperation",
            "fields": [
                {"name": "baseInstantTime", "type": ["null", _S]},
                {"name": "deltaFilePaths", "type": ["null", {"type": "array", "items": _S}], "default": None},
                {"name": "dataFilePath", "type": ["null", _S], "default": None},
                {"name": "fileId", "type": ["null", _S]},
                {"name": "partitionPath", "type": ["null", _S], "default": None},
                {"name": "metrics", "type": ["null", {"type": "map", "values": "double"}], "default": None},
                {"name": "bootstrapFilePath", "type": ["null", _S], "default": None},
            ],
        }}], "default": None},
        {"name": "extraMetadata", "type": ["null", {"type": "map", "values": _S}], "default": None},
        {"name": "version", "type": ["int", "null"], "default": 1},
        {"name": "preserveHoodieMetadata", "type": ["boolean", "null"], "default": False},
        {"name": "missingSchedulePartitions", "type": ["null", {"type": "array", "items": _S}], "default": None},
    ],
}

PLAN_VERSION = 2


@dataclass(frozen=True)
class CompactionOperation:
    """Compact one slice: its base file (name) and log files (names) into a new base file."""

    partition_path: str
    file_id: str
    base_instant: str
    base_file: str | None
    log_files: tuple[str, ...]
    metrics: dict[str, float] = field(default_factory=dict)

    @property
    def log_bytes(self) -> float:
        return self.metrics.get("TOTAL_LOG_FILES_SIZE", 0.0)

    def to_avro(self) -> dict:
        return {
            "baseInstantTime": self.base_instant,
            "deltaFilePaths": list(self.log_files),
            "dataFilePath": self.base_file,
            "fileId": self.file_id,
            "partitionPath": self.partition_path,
            "metrics": dict(self.metrics),
            "bootstrapFilePath": None,
        }

    @classmethod
    def from_avro(cls, op: dict, source: str = "a compaction plan") -> CompactionOperation:
        """The operation; its partition and file names are checked to be inside the table
        (else :class:`UnsafePathError` naming ``source``): compaction reads and writes them."""
        base_file = op.get("dataFilePath") or None
        return cls(
            partition_path=check_partition_path(op.get("partitionPath") or "", source),
            file_id=check_name(op["fileId"] or "", source, "file id"),
            base_instant=check_name(op["baseInstantTime"] or "", source, "base instant"),
            base_file=check_name(base_file, source) if base_file else None,
            log_files=tuple(check_name(name, source) for name in op.get("deltaFilePaths") or ()),
            metrics=dict(op.get("metrics") or {}),
        )


@dataclass(frozen=True)
class CompactionPlan:
    operations: tuple[CompactionOperation, ...]
    extra_metadata: dict[str, str] = field(default_factory=dict)

    def encode(self) -> bytes:
        return avro.encode(COMPACTION_PLAN, {
            "operations": [op.to_avro() for op in self.operations],
            "extraMetadata": dict(self.extra_metadata),
            "version": PLAN_VERSION,
            "preserveHoodieMetadata": False,
            "missingSchedulePartitions": [],
        })

    @classmethod
    def decode(cls, data: bytes, instant: str = "?") -> CompactionPlan:
        doc = avro.decode(data, f"compaction plan {instant}")
        source = f"the compaction plan of instant {instant}"
        return cls(tuple(CompactionOperation.from_avro(op, source) for op in doc.get("operations") or ()), dict(doc.get("extraMetadata") or {}))


def pending_plans(timeline: ActiveTimeline, actions: tuple[str, ...] = (Action.COMPACTION,)) -> list[tuple[Instant, CompactionPlan]]:
    """Requested or inflight compactions (``actions``: also log compactions), oldest first,
    with their plans."""
    return [
        (inst, CompactionPlan.decode(timeline.read_content(inst.with_state(State.REQUESTED)), inst.timestamp))
        for inst in timeline.pending(list(actions))
    ]


def file_groups_in_pending_compaction(timeline: ActiveTimeline) -> dict[tuple[str, str], str]:
    """(partition, file id) → instant of the pending compaction that rewrites it."""
    return {(op.partition_path, op.file_id): inst.timestamp for inst, plan in pending_plans(timeline) for op in plan.operations}


def pending_compaction_bases(timeline: ActiveTimeline) -> dict[tuple[str, str], str]:
    """(partition, file id) → base instant of the slice a pending compaction or log
    compaction reads (the oldest, when several do)."""
    out: dict[tuple[str, str], str] = {}
    for _, plan in pending_plans(timeline, (Action.COMPACTION, Action.LOG_COMPACTION)):
        for op in plan.operations:
            key = (op.partition_path, op.file_id)
            if key not in out or InstantTime(op.base_instant) < InstantTime(out[key]):
                out[key] = op.base_instant
    return out
