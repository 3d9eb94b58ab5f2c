"""Clean, savepoint and requested-replace instants as typed records: the cleaner plan of
``<t>.clean.requested`` (``HoodieCleanerPlan``), the clean metadata of ``<t>.clean``
(``HoodieCleanMetadata``), the savepoint metadata of ``<t>.savepoint``
(``HoodieSavepointMetadata``) and the requested replace metadata of
``<t>.replacecommit.requested`` (``HoodieRequestedReplaceMetadata``).

Each decodes from the record :func:`hoodie.timeline.avro_metadata.decode` read, a field of
the wrong type being a :class:`~hoodie.errors.FormatError` naming it; what a cleaner plan
deletes and a savepoint pins is checked to be inside the table (full paths recorded in a
plan are rebuilt under the base path). Each encodes to the bytes Java writes.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from hoodie.errors import FormatError
from hoodie.storage.paths import check_name, check_partition_path, recorded_file_in, under
from hoodie.timeline import avro_metadata as avro
from hoodie.timeline.avro_metadata import mistyped, strings, typed_field
from hoodie.timeline.instant import Instant, State, recorded_instant

CLEAN_PLAN_VERSION = 2
CLEAN_METADATA_VERSION = 2
SAVEPOINT_METADATA_VERSION = 1
REQUESTED_REPLACE_VERSION = 1


def _string_map(doc: Mapping[str, Any], name: str, source: str) -> dict[str, str] | None:
    values = typed_field(doc, name, dict, source, None)
    for key, value in (values or {}).items():
        if value is not None and type(value) is not str:
            raise mistyped(source, f"{name}[{key!r}]", value, str)
    return None if values is None else {k: v for k, v in values.items() if v is not None}


def _lists(doc: Mapping[str, Any], name: str, source: str) -> dict[str, list[Any]]:
    values = typed_field(doc, name, dict, source, {})
    for key, value in values.items():
        if value is not None and type(value) is not list:
            raise mistyped(source, f"{name}[{key!r}]", value, list)
    return {k: v or [] for k, v in values.items()}


def _records(doc: Mapping[str, Any], name: str, source: str) -> dict[str, Mapping[str, Any]]:
    values = typed_field(doc, name, dict, source)
    for key, value in values.items():
        if not isinstance(value, Mapping):
            raise mistyped(source, f"{name}[{key!r}]", value, dict)
    return values


# --- clean -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class CleanerPlan:
    """``HoodieCleanerPlan`` (version 2; version 1, which lists file names, is read too):
    the files a clean deletes (partition → storage paths) and the boundary it keeps."""

    policy: str
    earliest_instant_to_retain: Instant | None
    last_completed_commit: str
    files_to_delete: dict[str, tuple[str, ...]]
    extra_metadata: dict[str, str] = field(default_factory=dict)

    def to_avro(self) -> dict[str, Any]:
        e = self.earliest_instant_to_retain
        return {
            "earliestInstantToRetain": {"timestamp": e.timestamp, "action": e.action, "state": e.state.value} if e else None,
            "lastCompletedCommitTimestamp": self.last_completed_commit,
            "policy": self.policy,
            "filesToBeDeletedPerPartition": {},
            "version": CLEAN_PLAN_VERSION,
            "filePathsToBeDeletedPerPartition": {
                p: [{"filePath": path, "isBootstrapBaseFile": False} for path in paths] for p, paths in sorted(self.files_to_delete.items()) if paths
            },
            "partitionsToBeDeleted": [],
            "extraMetadata": dict(self.extra_metadata),
        }

    def encode(self) -> bytes:
        return avro.encode(avro.CLEANER_PLAN, self.to_avro())

    @classmethod
    def from_avro(cls, doc: Mapping[str, Any], base_path: str, clean: str) -> CleanerPlan:
        """The plan of clean ``clean``; every file it names is checked to lie in its
        partition under ``base_path`` (else :class:`~hoodie.errors.UnsafePathError`)."""
        source = f"the plan of clean {clean}"
        e = typed_field(doc, "earliestInstantToRetain", dict, source, None)
        earliest = None
        if e is not None:
            state = typed_field(e, "state", str, source, State.COMPLETED.value)
            if state not in State.__members__:
                raise FormatError(f"{source}: earliestInstantToRetain has the state {state!r}, which is no instant state")
            earliest = recorded_instant(e.get("timestamp"), e.get("action"), State(state), source)
        files: dict[str, tuple[str, ...]] = {}
        for p, infos in _lists(doc, "filePathsToBeDeletedPerPartition", source).items():
            check_partition_path(p, source)
            for info in infos:
                if not isinstance(info, Mapping):
                    raise mistyped(source, f"an entry of filePathsToBeDeletedPerPartition[{p!r}]", info, dict)
            paths = [typed_field(info, "filePath", str, source, "") for info in infos]
            files[p] = tuple(recorded_file_in(path, p, base_path, source) for path in paths if path)
        for p, names in _lists(doc, "filesToBeDeletedPerPartition", source).items():
            check_partition_path(p, source)
            if p not in files:
                files[p] = tuple(under(base_path, p, check_name(n, source)) for n in strings(names, source, f"filesToBeDeletedPerPartition[{p!r}]"))
        return cls(
            typed_field(doc, "policy", str, source, ""),
            earliest,
            typed_field(doc, "lastCompletedCommitTimestamp", str, source, ""),
            files,
            _string_map(doc, "extraMetadata", source) or {},
        )


@dataclass(frozen=True)
class CleanPartitionMetadata:
    """What a clean did in one partition (file names, as Java records them)."""

    partition_path: str
    policy: str
    delete_path_patterns: tuple[str, ...] = ()
    success_delete_files: tuple[str, ...] = ()
    failed_delete_files: tuple[str, ...] = ()
    is_partition_deleted: bool = False  # the clean deleted the partition itself (its file groups all replaced)

    def to_avro(self) -> dict[str, Any]:
        return {
            "partitionPath": self.partition_path,
            "policy": self.policy,
            "deletePathPatterns": list(self.delete_path_patterns),
            "successDeleteFiles": list(self.success_delete_files),
            "failedDeleteFiles": list(self.failed_delete_files),
            "isPartitionDeleted": self.is_partition_deleted,
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
            bool(typed_field(pm, "isPartitionDeleted", bool, where, False)),
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
