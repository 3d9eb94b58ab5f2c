"""Commit metadata: what a completed commit, delta commit or replace commit wrote.

Table v6 stores it as JSON (Jackson's ``HoodieCommitMetadata``); v8+ as an Avro container
file with the same field names. Both decode to :class:`CommitMetadata`; hoodie writes JSON.
"""
from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import MISSING, dataclass, field, fields, replace
from typing import Any

from hoodie.errors import FormatError
from hoodie.storage.paths import check_name, check_partition_path, check_relative
from hoodie.timeline import avro_metadata as avro
from hoodie.timeline.avro_metadata import mistyped, typed_field

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
    def from_json(cls, data: Mapping[str, Any], source: str = "a write stat") -> WriteStat:
        """The stat a JSON (or Avro) record describes; a field of the wrong type raises
        :class:`FormatError` naming ``source`` and the field (null means the default)."""
        if type(data) is not dict:
            raise mistyped(source, "a write stat", data, dict)
        # a set intersection, not a test per key: commits carry one stat per file written
        kwargs = {k: data[k] for k in _WRITE_STAT_NAMES.intersection(data) if data[k] is not None}
        wrong = [k for k, v in kwargs.items() if type(v) is not _STAT_TYPES[k]]
        if wrong:
            raise mistyped(source, wrong[0], kwargs[wrong[0]], _STAT_TYPES[wrong[0]])
        rs = kwargs.get("runtimeStats")  # hoodie and Hudi write one on every stat
        if rs is not None:
            kwargs["runtimeStats"] = _runtime_stats(rs, source)
        if "cdcStats" in kwargs or "logFiles" in kwargs:
            _check_entries(kwargs, source)
        kwargs.setdefault("fileId", "")
        kwargs.setdefault("path", "")
        kwargs.setdefault("partitionPath", "")
        kwargs.setdefault("prevCommit", NULL_COMMIT)
        # Filled in directly, as the frozen __init__ would (it has no __post_init__): its
        # object.__setattr__ per field was most of decoding a commit of many files.
        stat = object.__new__(cls)
        stat.__dict__.update(_WRITE_STAT_DEFAULTS)
        stat.__dict__.update(kwargs)
        return stat


_WRITE_STAT_FIELDS = tuple(f.name for f in fields(WriteStat))
_WRITE_STAT_NAMES = frozenset(_WRITE_STAT_FIELDS)
_WRITE_STAT_DEFAULTS = {f.name: f.default for f in fields(WriteStat) if f.default is not MISSING}
# The JSON (and decoded Avro) type of each field, from its annotation ("int | None" → int;
# a record such as RuntimeStats arrives as a dict). bool is no int here: type() is compared.
_JSON_TYPES: dict[str, type] = {"int": int, "str": str, "dict": dict, "list": list, "RuntimeStats": dict}
_STAT_TYPES = {f.name: _JSON_TYPES[re.split(r"[\[ |]", str(f.type))[0]] for f in fields(WriteStat)}
_RUNTIME_FIELDS = tuple(f.name for f in fields(RuntimeStats))


def _runtime_stats(rs: dict[str, Any], source: str) -> RuntimeStats:
    """The record of a stat's runtimeStats map (null times mean 0)."""
    times = {}
    for k in _RUNTIME_FIELDS:
        v = rs.get(k)
        if v is not None:
            if type(v) is not int:
                raise mistyped(source, f"runtimeStats.{k}", v, int)
            times[k] = v
    return RuntimeStats(**times)


def _check_entries(kwargs: dict[str, Any], source: str) -> None:
    """Check the entries of a stat's cdcStats and logFiles."""
    for name, element in (("cdcStats", int), ("logFiles", str)):
        values = kwargs.get(name)
        for v in (values.values() if isinstance(values, dict) else values or ()):
            if type(v) is not element:
                raise mistyped(source, f"an entry of {name}", v, element)


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
    def decode(cls, data: bytes, instant: str = "?", completed: bool = False) -> CommitMetadata:
        """Decode JSON (v6) or Avro container (v8+) commit metadata.

        Requested and inflight files may be empty (no content). A ``completed`` write
        instant always records what it wrote, so empty metadata, or metadata without
        ``partitionToWriteStats``, raises :class:`FormatError`: read as "wrote nothing",
        it would hide the files the commit wrote and serve the previous version."""
        source = f"commit metadata of instant {instant}"
        if not data.strip():
            if completed:
                raise FormatError(f"{source} is empty: a completed write instant records the files it wrote in partitionToWriteStats")
            return cls()
        try:
            doc = avro.decode(data, source) if data[:4] == b"Obj\x01" else json.loads(data.decode("utf-8"))
        except (ValueError, UnicodeDecodeError) as e:
            raise FormatError(f"{source} cannot be decoded: {e}") from e
        if not isinstance(doc, dict):
            raise FormatError(f"{source} is a {type(doc).__name__}, not a record")
        if completed and doc.get("partitionToWriteStats") is None:
            raise FormatError(f"{source} has no partitionToWriteStats: a completed write instant records the files it wrote there")
        return cls.from_dict(doc, source)

    @classmethod
    def from_dict(cls, doc: Mapping[str, Any], source: str = "commit metadata") -> CommitMetadata:
        """Decoded metadata; a field of the wrong type raises :class:`FormatError`, and
        every partition, file and file id it names is checked to be a path inside the
        table (else :class:`UnsafePathError`), both naming ``source``."""
        p2ws: dict[str, list[WriteStat]] = {}
        for partition, stats in typed_field(doc, "partitionToWriteStats", dict, source).items():
            where = f"partitionToWriteStats[{partition!r}]"
            if stats is not None and type(stats) is not list:
                raise mistyped(source, where, stats, list)
            p2ws[partition] = [WriteStat.from_json(s, f"{source}, {where}") for s in stats or ()]
        replaced = typed_field(doc, "partitionToReplaceFileIds", dict, source, None)
        for partition, ids in (replaced or {}).items():
            where = f"partitionToReplaceFileIds[{partition!r}]"
            if ids is not None and type(ids) is not list:
                raise mistyped(source, where, ids, list)
            for file_id in ids or ():
                if type(file_id) is not str:
                    raise mistyped(source, f"a file id of {where}", file_id, str)
        extra = typed_field(doc, "extraMetadata", dict, source)
        for key, value in extra.items():
            if value is not None and type(value) is not str:
                raise mistyped(source, f"extraMetadata[{key!r}]", value, str)
        _check_paths(p2ws, replaced or {}, source)
        return cls(
            partition_to_write_stats=p2ws,
            operation_type=typed_field(doc, "operationType", str, source, "UNKNOWN") or "UNKNOWN",
            extra_metadata={k: v for k, v in extra.items() if v is not None},
            compacted=typed_field(doc, "compacted", bool, source, False),
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
