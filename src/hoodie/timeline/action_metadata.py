"""Clean, savepoint and requested-replace instants as typed records: the clean metadata of
``<t>.clean`` (``HoodieCleanMetadata``), the savepoint metadata of ``<t>.savepoint``
(``HoodieSavepointMetadata``) and the requested replace metadata of
``<t>.replacecommit.requested`` (``HoodieRequestedReplaceMetadata``).

Each decodes from the record :func:`hoodie.timeline.avro_metadata.decode` read, a field of
the wrong type being a :class:`~hoodie.errors.FormatError` naming it; what a savepoint pins
(the cleaner keeps those files) is checked to be inside the table. Each encodes to the
bytes Java writes. Cleaner plans are :class:`hoodie.services.clean_plan.CleanPlan`.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from hoodie.storage.paths import check_name, check_partition_path
from hoodie.timeline import avro_metadata as avro
from hoodie.timeline.avro_metadata import mistyped, strings, typed_field

CLEAN_METADATA_VERSION = 2
SAVEPOINT_METADATA_VERSION = 1
REQUESTED_REPLACE_VERSION = 1


def _string_map(doc: Mapping[str, Any], name: str, source: str) -> dict[str, str] | None:
    values = typed_field(doc, name, dict, source, None)
    for key, value in (values or {}).items():
        if value is not None and type(value) is not str:
            raise mistyped(source, f"{name}[{key!r}]", value, str)
    return None if values is None else {k: v for k, v in values.items() if v is not None}


def _records(doc: Mapping[str, Any], name: str, source: str) -> dict[str, Mapping[str, Any]]:
    values = typed_field(doc, name, dict, source)
    for key, value in values.items():
        if not isinstance(value, Mapping):
            raise mistyped(source, f"{name}[{key!r}]", value, dict)
    return values


# --- clean -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class CleanPartitionMetadata:
    """What a clean did in one partition (file names, as Java records them)."""

    partition_path: str
    policy: str
    delete_path_patterns: tuple[str, ...] = ()
    success_delete_files: tuple[str, ...] = ()
    failed_delete_files: tuple[str, ...] = ()

    def to_avro(self) -> dict[str, Any]:
        return {
            "partitionPath": self.partition_path,
            "policy": self.policy,
            "deletePathPatterns": list(self.delete_path_patterns),
            "successDeleteFiles": list(self.success_delete_files),
            "failedDeleteFiles": list(self.failed_delete_files),
            "isPartitionDeleted": False,
        }

    @classmethod
    def from_avro(cls, pm: Mapping[str, Any], partition: str, source: str) -> CleanPartitionMetadata:
        where = f"{source}, partition {partition!r}"
        return cls(
            partition,
            typed_field(pm, "policy", str, where, ""),
            strings(pm.get("deletePathPatterns"), where, "deletePathPatterns"),
            strings(pm.get("successDeleteFiles"), where, "successDeleteFiles"),
            strings(pm.get("failedDeleteFiles"), where, "failedDeleteFiles"),
        )


@dataclass(frozen=True)
class CleanMetadata:
    """``HoodieCleanMetadata``: what a completed clean deleted, and the boundary it kept."""

    start_clean_time: str
    earliest_commit_to_retain: str  # "" when the clean retained by file versions
    last_completed_commit: str
    partition_metadata: dict[str, CleanPartitionMetadata] = field(default_factory=dict)
    time_taken_ms: int = 0
    extra_metadata: dict[str, str] | None = None

    @property
    def total_files_deleted(self) -> int:
        return sum(len(pm.success_delete_files) for pm in self.partition_metadata.values())

    @property
    def extra(self) -> dict[str, str]:
        return self.extra_metadata or {}

    def encode(self) -> bytes:
        return avro.encode(avro.CLEAN_METADATA, {
            "startCleanTime": self.start_clean_time,
            "timeTakenInMillis": self.time_taken_ms,
            "totalFilesDeleted": self.total_files_deleted,
            "earliestCommitToRetain": self.earliest_commit_to_retain,
            "lastCompletedCommitTimestamp": self.last_completed_commit,
            "partitionMetadata": {p: pm.to_avro() for p, pm in self.partition_metadata.items()},
            "version": CLEAN_METADATA_VERSION,
            "bootstrapPartitionMetadata": {},
            "extraMetadata": self.extra_metadata,
        })

    @classmethod
    def from_avro(cls, doc: Mapping[str, Any], source: str) -> CleanMetadata:
        return cls(
            typed_field(doc, "startCleanTime", str, source, ""),
            typed_field(doc, "earliestCommitToRetain", str, source, ""),
            typed_field(doc, "lastCompletedCommitTimestamp", str, source, ""),
            {p: CleanPartitionMetadata.from_avro(pm, p, source) for p, pm in _records(doc, "partitionMetadata", source).items()},
            typed_field(doc, "timeTakenInMillis", int, source, 0),
            _string_map(doc, "extraMetadata", source),
        )


# --- savepoint -------------------------------------------------------------------------------


@dataclass(frozen=True)
class SavepointInfo:
    """One savepoint (``HoodieSavepointMetadata``): which commit it keeps, who made it, and
    the files it pins (partition → file names)."""

    instant: str
    savepointed_by: str
    savepointed_at_ms: int
    comments: str
    files: dict[str, tuple[str, ...]]

    def file_names(self) -> frozenset[str]:
        return frozenset(name for names in self.files.values() for name in names)

    def encode(self) -> bytes:
        return avro.encode(avro.SAVEPOINT_METADATA, {
            "savepointedBy": self.savepointed_by,
            "savepointedAt": self.savepointed_at_ms,
            "comments": self.comments,
            "partitionMetadata": {p: {"partitionPath": p, "savepointDataFile": list(names)} for p, names in self.files.items()},
            "version": SAVEPOINT_METADATA_VERSION,
        })

    @classmethod
    def from_avro(cls, doc: Mapping[str, Any], instant: str) -> SavepointInfo:
        """The savepoint of ``instant``; the partitions and files it pins are checked to be
        inside the table (else :class:`~hoodie.errors.UnsafePathError` naming it)."""
        source = f"savepoint {instant}"
        files = {
            check_partition_path(partition, source): tuple(check_name(n, source) for n in strings(meta.get("savepointDataFile"), source, "savepointDataFile"))
            for partition, meta in _records(doc, "partitionMetadata", source).items()
        }
        return cls(
            instant,
            typed_field(doc, "savepointedBy", str, source, ""),
            typed_field(doc, "savepointedAt", int, source, 0),
            typed_field(doc, "comments", str, source, ""),
            files,
        )


# --- requested replace -----------------------------------------------------------------------


@dataclass(frozen=True)
class RequestedReplaceMetadata:
    """``HoodieRequestedReplaceMetadata``: what a requested replace commit is for
    (``INSERT_OVERWRITE``, ``CLUSTER``, ...)."""

    operation_type: str | None

    @property
    def is_clustering(self) -> bool:
        return self.operation_type == "CLUSTER"

    def encode(self) -> bytes:
        return avro.encode(avro.REQUESTED_REPLACE_METADATA, {"operationType": self.operation_type, "extraMetadata": {}, "version": REQUESTED_REPLACE_VERSION})

    @classmethod
    def from_avro(cls, doc: Mapping[str, Any], source: str) -> RequestedReplaceMetadata:
        return cls(typed_field(doc, "operationType", str, source, None))
