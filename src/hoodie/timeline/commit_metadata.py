"""Commit metadata: what a completed commit, delta commit or replace commit wrote.

Table v6 stores it as JSON (Jackson's ``HoodieCommitMetadata``); v8+ as an Avro container
file with the same field names. Both decode to :class:`CommitMetadata`; hoodie writes JSON.
"""
from __future__ import annotations

import io
import json
from collections.abc import Mapping
from dataclasses import MISSING, dataclass, field, fields, replace
from typing import Any

import fastavro

from hoodie.errors import FormatError
from hoodie.storage.paths import check_name, check_partition_path, check_relative

NULL_COMMIT = "null"
# extra metadata key: what a hoodie write cost in storage calls, JSON {"list": n, ...}
STORAGE_CALLS = "hoodie.storage.calls"


@dataclass(frozen=True)
class RuntimeStats:
    totalScanTime: int = 0
    totalUpsertTime: int = 0
    totalCreateTime: int = 0


@dataclass(frozen=True)
class WriteStat:
    """One file written by a commit (Java ``HoodieWriteStat`` / ``HoodieDeltaWriteStat``).

    Field names are Java's JSON keys, so that (de)serialisation is a plain mapping.
    """

    fileId: str
    path: str
    partitionPath: str
    prevCommit: str = NULL_COMMIT
    numWrites: int = 0
    numDeletes: int = 0
    numUpdateWrites: int = 0
    numInserts: int = 0
    totalWriteBytes: int = 0
    totalWriteErrors: int = 0
    fileSizeInBytes: int = 0
    cdcStats: dict[str, int] | None = None
    tempPath: str | None = None
    totalLogRecords: int = 0
    totalLogFilesCompacted: int = 0
    totalLogSizeCompacted: int = 0
    totalUpdatedRecordsCompacted: int = 0
    totalLogBlocks: int = 0
    totalCorruptLogBlock: int = 0
    totalRollbackBlocks: int = 0
    minEventTime: int | None = None
    maxEventTime: int | None = None
    runtimeStats: RuntimeStats | None = None
    # HoodieDeltaWriteStat (merge-on-read) fields; None for copy-on-write stats
    logVersion: int | None = None
    logOffset: int | None = None
    baseFile: str | None = None
    logFiles: list[str] | None = None

    @property
    def file_name(self) -> str:
        return self.path.rsplit("/", 1)[-1]

    def to_json(self) -> dict[str, Any]:
        # a shallow walk: dataclasses.asdict deep-copies every value, and commits carry one
        # stat per file written
        out = {name: getattr(self, name) for name in _WRITE_STAT_FIELDS}
        if self.runtimeStats is not None:
            out["runtimeStats"] = vars(self.runtimeStats).copy()
        if self.logVersion is None and self.baseFile is None and self.logFiles is None:
            for k in ("logVersion", "logOffset", "baseFile", "logFiles"):
                out.pop(k)
        else:
            out["recordsStats"] = {"val": None}
        return out

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> WriteStat:
        # a set intersection, not a test per key: commits carry one stat per file written
        kwargs = {k: data[k] for k in _WRITE_STAT_NAMES.intersection(data) if data[k] is not None}
        rs = data.get("runtimeStats")
        kwargs["runtimeStats"] = (
            RuntimeStats(**{k: int(v or 0) for k, v in rs.items() if k in RuntimeStats.__dataclass_fields__}) if isinstance(rs, Mapping) else None
        )
        kwargs.setdefault("fileId", "")
        kwargs.setdefault("path", "")
        kwargs.setdefault("partitionPath", "")
        if kwargs.get("prevCommit") is None:
            kwargs["prevCommit"] = NULL_COMMIT
        # Filled in directly, as the frozen __init__ would (it has no __post_init__): its
        # object.__setattr__ per field was most of decoding a commit of many files.
        stat = object.__new__(cls)
        stat.__dict__.update(_WRITE_STAT_DEFAULTS)
        stat.__dict__.update(kwargs)
        return stat


_WRITE_STAT_FIELDS = tuple(f.name for f in fields(WriteStat))
_WRITE_STAT_NAMES = frozenset(_WRITE_STAT_FIELDS)
_WRITE_STAT_DEFAULTS = {f.name: f.default for f in fields(WriteStat) if f.default is not MISSING}


@dataclass(frozen=True)
class CommitMetadata:
    """Decoded commit metadata; ``partition_to_replace_file_ids`` is set for replace commits."""

    partition_to_write_stats: dict[str, list[WriteStat]] = field(default_factory=dict)
    operation_type: str = "UNKNOWN"
    extra_metadata: dict[str, str] = field(default_factory=dict)
    compacted: bool = False
    partition_to_replace_file_ids: dict[str, list[str]] | None = None

    @property
    def schema(self) -> str | None:
        return self.extra_metadata.get("schema") or None

    def write_stats(self) -> list[WriteStat]:
        return [s for stats in self.partition_to_write_stats.values() for s in stats]

    def storage_calls(self) -> dict[str, int] | None:
        """The storage calls the write made up to its commit, by kind (list, read, write,
        exists, delete), when a hoodie write recorded them."""
        raw = self.extra_metadata.get(STORAGE_CALLS)
        if not raw:
            return None
        try:
            calls = json.loads(raw)
            return {str(k): int(v) for k, v in calls.items()}
        except (ValueError, AttributeError, TypeError):
            raise FormatError(f"extra metadata {STORAGE_CALLS} is not a JSON object of counts: {raw[:100]!r}") from None

    def replaced_file_ids(self) -> dict[str, list[str]]:
        return self.partition_to_replace_file_ids or {}

    def totals(self) -> dict[str, int]:
        """Records written, inserted, updated and deleted over all files."""
        ws = self.write_stats()
        return {
            "files": len(ws),
            "writes": sum(s.numWrites for s in ws),
            "inserts": sum(s.numInserts for s in ws),
            "updates": sum(s.numUpdateWrites for s in ws),
            "deletes": sum(s.numDeletes for s in ws),
            "bytes": sum(s.totalWriteBytes for s in ws),
        }

    def with_extra(self, **extra: str) -> CommitMetadata:
        return replace(self, extra_metadata={**self.extra_metadata, **extra})

    # --- encoding ---------------------------------------------------------------------------
    def to_json_bytes(self) -> bytes:
        doc: dict[str, Any] = {
            "partitionToWriteStats": {p: [s.to_json() for s in stats] for p, stats in self.partition_to_write_stats.items()},
            "compacted": self.compacted,
            "extraMetadata": dict(self.extra_metadata),
            "operationType": self.operation_type,
        }
        if self.partition_to_replace_file_ids is not None:
            doc["partitionToReplaceFileIds"] = self.partition_to_replace_file_ids
        # compact: the indenting encoder is pure Python, ~5× slower than the C one, and a
        # commit lists every file it wrote
        return json.dumps(doc, separators=(",", ":")).encode("utf-8")

    @classmethod
    def decode(cls, data: bytes, instant: str = "?") -> CommitMetadata:
        """Decode JSON (v6) or Avro container (v8+) commit metadata; empty means no content."""
        if not data.strip():
            return cls()
        try:
            if data[:4] == b"Obj\x01":
                records = list(fastavro.reader(io.BytesIO(data)))
                doc = records[0] if records else {}
            else:
                doc = json.loads(data.decode("utf-8"))
        except (ValueError, UnicodeDecodeError, IndexError, StopIteration) as e:
            raise FormatError(f"commit metadata of instant {instant} cannot be decoded: {e}") from e
        if not isinstance(doc, dict):
            raise FormatError(f"commit metadata of instant {instant} is a {type(doc).__name__}, not a record")
        return cls.from_dict(doc, f"commit metadata of instant {instant}")

    @classmethod
    def from_dict(cls, doc: Mapping[str, Any], source: str = "commit metadata") -> CommitMetadata:
        """Decoded metadata; every partition, file and file id it names is checked to be a
        path inside the table (else :class:`UnsafePathError` naming ``source``)."""
        p2ws = {p: [WriteStat.from_json(s) for s in (stats or [])] for p, stats in (doc.get("partitionToWriteStats") or {}).items()}
        replaced = doc.get("partitionToReplaceFileIds")
        _check_paths(p2ws, replaced or {}, source)
        return cls(
            partition_to_write_stats=p2ws,
            operation_type=str(doc.get("operationType") or "UNKNOWN"),
            extra_metadata={k: v for k, v in (doc.get("extraMetadata") or {}).items() if v is not None},
            compacted=bool(doc.get("compacted") or False),
            partition_to_replace_file_ids={p: list(ids or []) for p, ids in replaced.items()} if replaced is not None else None,
        )


def _check_paths(p2ws: Mapping[str, list[WriteStat]], replaced: Mapping[str, Any], source: str) -> None:
    """Refuse metadata that names a partition or file outside the table: readers and
    services build storage paths from these values."""
    for partition, stats in p2ws.items():
        check_partition_path(partition, source)
        for s in stats:
            if s.partitionPath != partition and s.partitionPath:
                check_partition_path(s.partitionPath, source)
            if s.path:
                check_relative(s.path, source)
            if s.fileId:
                check_name(s.fileId, source, "file id")
            if s.baseFile:
                check_name(s.baseFile, source)
            for name in s.logFiles or ():
                check_name(name, source)
    for partition, ids in replaced.items():
        check_partition_path(partition, source)
        for file_id in ids or ():
            check_name(file_id, source, "file id")
