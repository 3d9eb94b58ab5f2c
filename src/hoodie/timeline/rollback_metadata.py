"""Rollback and restore instants as typed records: the rollback plan saved as
``<t>.rollback.requested`` (``HoodieRollbackPlan``), the rollback metadata of ``<t>.rollback``
(``HoodieRollbackMetadata``), the restore plan of ``<t>.restore.requested``
(``HoodieRestorePlan``) and the restore metadata of ``<t>.restore``
(``HoodieRestoreMetadata``).

Each decodes from the record :func:`hoodie.timeline.avro_metadata.decode` read, checking
what it will be acted on: the instants a plan undoes (they become timeline and marker file
names) and the files it deletes (rebuilt under the table's base path; anything outside is
an :class:`~hoodie.errors.UnsafePathError`). Each encodes to the bytes Java writes.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from hoodie.errors import FormatError
from hoodie.storage.paths import check_name, check_partition_path, recorded_file_in
from hoodie.timeline import avro_metadata as avro
from hoodie.timeline.avro_metadata import mistyped, sizes, strings, typed_field
from hoodie.timeline.instant import Instant, State, recorded_instant

ROLLBACK_VERSION = 1
RESTORE_PLAN_VERSION = 2
RESTORE_METADATA_VERSION = 1


def _instant_info(instant: Instant) -> dict[str, str]:
    return {"commitTime": instant.timestamp, "action": instant.action}


def _recorded(info: object, state: State, source: str) -> Instant:
    """The instant a ``HoodieInstantInfo`` names (checked: see :func:`recorded_instant`)."""
    doc = info if isinstance(info, Mapping) else {}
    return recorded_instant(doc.get("commitTime"), doc.get("action"), state, source)


def _records(doc: Mapping[str, Any], name: str, source: str) -> list[Mapping[str, Any]]:
    values = typed_field(doc, name, list, source)
    for v in values:
        if not isinstance(v, Mapping):
            raise mistyped(source, f"an entry of {name}", v, dict)
    return values


# --- rollback --------------------------------------------------------------------------------


@dataclass(frozen=True)
class RollbackRequest:
    """What a rollback does in one partition: delete ``files_to_delete`` (storage paths),
    and, for the slice (``file_id``, ``latest_base_instant``), neutralise the log files of
    ``log_blocks_to_delete`` (storage path → size) with a rollback command block."""

    partition_path: str
    file_id: str | None = None
    latest_base_instant: str | None = None
    files_to_delete: tuple[str, ...] = ()
    log_blocks_to_delete: dict[str, int] = field(default_factory=dict)

    def to_avro(self) -> dict[str, Any]:
        return {
            "partitionPath": self.partition_path,
            "fileId": self.file_id,
            "latestBaseInstant": self.latest_base_instant,
            "filesToBeDeleted": list(self.files_to_delete),
            "logBlocksToBeDeleted": dict(self.log_blocks_to_delete),
        }

    @classmethod
    def from_avro(cls, req: Mapping[str, Any], base_path: str, source: str) -> RollbackRequest:
        partition = check_partition_path(typed_field(req, "partitionPath", str, source, ""), source)
        file_id = typed_field(req, "fileId", str, source, None) or None
        base = typed_field(req, "latestBaseInstant", str, source, None) or None
        if file_id:
            check_name(file_id, source, "file id")
        if base:
            check_name(base, source, "base instant")
        files = tuple(recorded_file_in(p, partition, base_path, source) for p in strings(req.get("filesToBeDeleted"), source, "filesToBeDeleted"))
        recorded_logs = sizes(req.get("logBlocksToBeDeleted"), source, "logBlocksToBeDeleted")
        logs = {recorded_file_in(p, partition, base_path, source): size for p, size in recorded_logs.items()}
        if logs and not (file_id and base):
            raise FormatError(f"{source} rolls back log files of partition {partition!r} without naming their file group")
        return cls(partition, file_id, base, files, logs)


@dataclass(frozen=True)
class RollbackPlan:
    """``HoodieRollbackPlan``: the instant a rollback undoes and what it does per partition."""

    instant_to_rollback: Instant  # inflight: what a pending rollback's target was
    requests: tuple[RollbackRequest, ...] = ()

    def encode(self) -> bytes:
        return avro.encode(avro.ROLLBACK_PLAN, {
            "instantToRollback": _instant_info(self.instant_to_rollback),
            "RollbackRequests": [r.to_avro() for r in self.requests],
            "version": ROLLBACK_VERSION,
        })

    @classmethod
    def target_of(cls, doc: Mapping[str, Any], rollback: str) -> Instant:
        """The instant the plan of rollback ``rollback`` undoes, without reading the rest."""
        return _recorded(doc.get("instantToRollback"), State.INFLIGHT, f"the plan of rollback {rollback}")

    @classmethod
    def from_avro(cls, doc: Mapping[str, Any], base_path: str, rollback: str) -> RollbackPlan:
        source = f"the plan of rollback {rollback}"
        target = cls.target_of(doc, rollback)
        requests = tuple(RollbackRequest.from_avro(r, base_path, source) for r in _records(doc, "RollbackRequests", source))
        return cls(target, requests)


@dataclass(frozen=True)
class RollbackPartitionMetadata:
    """What a rollback did in one partition (files as storage paths)."""

    partition_path: str
    success_delete_files: tuple[str, ...] = ()
    failed_delete_files: tuple[str, ...] = ()
    rollback_log_files: dict[str, int] = field(default_factory=dict)  # the command-block logs written
    log_files_from_failed_commit: dict[str, int] = field(default_factory=dict)

    def to_avro(self) -> dict[str, Any]:
        return {
            "partitionPath": self.partition_path,
            "successDeleteFiles": list(self.success_delete_files),
            "failedDeleteFiles": list(self.failed_delete_files),
            "rollbackLogFiles": dict(self.rollback_log_files),
            "logFilesFromFailedCommit": dict(self.log_files_from_failed_commit),
        }

    @classmethod
    def from_avro(cls, pm: Mapping[str, Any], partition: str, source: str) -> RollbackPartitionMetadata:
        where = f"{source}, partition {partition!r}"
        return cls(
            partition,
            strings(pm.get("successDeleteFiles"), where, "successDeleteFiles"),
            strings(pm.get("failedDeleteFiles"), where, "failedDeleteFiles"),
            sizes(pm.get("rollbackLogFiles"), where, "rollbackLogFiles"),
            sizes(pm.get("logFilesFromFailedCommit"), where, "logFilesFromFailedCommit"),
        )


@dataclass(frozen=True)
class RollbackMetadata:
    """``HoodieRollbackMetadata``: what a completed rollback (or one undo of a restore) did."""

    start_rollback_time: str
    commits_rollback: tuple[str, ...]
    partition_metadata: dict[str, RollbackPartitionMetadata] = field(default_factory=dict)
    time_taken_ms: int = 0
    total_files_deleted: int = 0
    instants_rollback: tuple[Instant, ...] = ()

    @classmethod
    def of(cls, rollback_time: str, undone: Instant, partitions: Mapping[str, RollbackPartitionMetadata], millis: int) -> RollbackMetadata:
        """The metadata of undoing ``undone`` under ``rollback_time``."""
        deleted = sum(len(pm.success_delete_files) for pm in partitions.values())
        return cls(rollback_time, (undone.timestamp,), dict(partitions), millis, deleted, (undone,))

    def deleted_files(self) -> list[str]:
        return [f for pm in self.partition_metadata.values() for f in pm.success_delete_files]

    def command_logs(self) -> list[str]:
        return [f for pm in self.partition_metadata.values() for f in pm.rollback_log_files]

    def to_avro(self) -> dict[str, Any]:
        return {
            "startRollbackTime": self.start_rollback_time,
            "timeTakenInMillis": self.time_taken_ms,
            "totalFilesDeleted": self.total_files_deleted,
            "commitsRollback": list(self.commits_rollback),
            "partitionMetadata": {p: pm.to_avro() for p, pm in self.partition_metadata.items()},
            "version": ROLLBACK_VERSION,
            "instantsRollback": [_instant_info(i) for i in self.instants_rollback],
        }

    def encode(self) -> bytes:
        return avro.encode(avro.ROLLBACK_METADATA, self.to_avro())

    @classmethod
    def from_avro(cls, doc: Mapping[str, Any], source: str) -> RollbackMetadata:
        partitions = typed_field(doc, "partitionMetadata", dict, source)
        for pm in partitions.values():
            if not isinstance(pm, Mapping):
                raise mistyped(source, "an entry of partitionMetadata", pm, dict)
        return cls(
            typed_field(doc, "startRollbackTime", str, source, ""),
            strings(doc.get("commitsRollback"), source, "commitsRollback"),
            {p: RollbackPartitionMetadata.from_avro(pm, p, source) for p, pm in partitions.items()},
            typed_field(doc, "timeTakenInMillis", int, source, 0),
            typed_field(doc, "totalFilesDeleted", int, source, 0),
            tuple(_recorded(i, State.COMPLETED, source) for i in _records(doc, "instantsRollback", source)),
        )


# --- restore ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class RestorePlan:
    """``HoodieRestorePlan`` (version 2): the savepoint a restore goes to and the instants
    it undoes, newest first."""

    savepoint: str
    instants_to_rollback: tuple[Instant, ...]

    def encode(self) -> bytes:
        return avro.encode(avro.RESTORE_PLAN, {
            "instantsToRollback": [_instant_info(i) for i in self.instants_to_rollback],
            "version": RESTORE_PLAN_VERSION,
            "savepointToRestoreTimestamp": self.savepoint,
        })

    @classmethod
    def from_avro(cls, doc: Mapping[str, Any], source: str) -> RestorePlan:
        undo = tuple(_recorded(i, State.COMPLETED, source) for i in _records(doc, "instantsToRollback", source))
        return cls(typed_field(doc, "savepointToRestoreTimestamp", str, source, ""), undo)


@dataclass(frozen=True)
class RestoreMetadata:
    """``HoodieRestoreMetadata``: the rollback metadata of every instant a restore undid."""

    start_restore_time: str
    undone: tuple[Instant, ...]
    rollbacks: dict[str, tuple[RollbackMetadata, ...]]  # instant time → its undo
    time_taken_ms: int = 0
    extra_metadata: dict[str, str] | None = None

    def encode(self) -> bytes:
        return avro.encode(avro.RESTORE_METADATA, {
            "startRestoreTime": self.start_restore_time,
            "timeTakenInMillis": self.time_taken_ms,
            "instantsToRollback": [i.timestamp for i in self.undone],
            "hoodieRestoreMetadata": {t: [m.to_avro() for m in ms] for t, ms in self.rollbacks.items()},
            "version": RESTORE_METADATA_VERSION,
            "restoreInstantInfo": [_instant_info(i) for i in self.undone],
            "extraMetadata": self.extra_metadata,
        })

    @classmethod
    def from_avro(cls, doc: Mapping[str, Any], source: str) -> RestoreMetadata:
        rollbacks: dict[str, tuple[RollbackMetadata, ...]] = {}
        for t, ms in typed_field(doc, "hoodieRestoreMetadata", dict, source).items():
            if type(ms) is not list:
                raise mistyped(source, f"hoodieRestoreMetadata[{t!r}]", ms, list)
            rollbacks[t] = tuple(RollbackMetadata.from_avro(m, source) for m in ms if m is not None)
        extra = typed_field(doc, "extraMetadata", dict, source, None)
        return cls(
            typed_field(doc, "startRestoreTime", str, source, ""),
            tuple(_recorded(i, State.COMPLETED, source) for i in _records(doc, "restoreInstantInfo", source)),
            rollbacks,
            typed_field(doc, "timeTakenInMillis", int, source, 0),
            extra,
        )
