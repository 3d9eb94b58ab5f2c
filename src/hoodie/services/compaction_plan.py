"""Compaction plans: the Avro ``HoodieCompactionPlan`` saved as ``<t>.compaction.requested``,
and the operations it lists (one per file slice to compact)."""
from __future__ import annotations

from dataclasses import dataclass, field

from hoodie.storage.paths import check_name, check_partition_path
from hoodie.timeline import avro_metadata as avro

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
    def from_avro(cls, op: dict, source: str = "a compaction plan") -> "CompactionOperation":
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
    def decode(cls, data: bytes, instant: str = "?") -> "CompactionPlan":
        doc = avro.decode(data, f"compaction plan {instant}")
        source = f"the compaction plan of instant {instant}"
        return cls(tuple(CompactionOperation.from_avro(op, source) for op in doc.get("operations") or ()), dict(doc.get("extraMetadata") or {}))
