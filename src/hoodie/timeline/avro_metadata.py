"""Avro instant content: rollback plans and metadata, requested replace metadata, cleaner
plans and clean metadata, savepoint metadata, restore plans and metadata, and the Avro form
of commit metadata (as the archived timeline stores it).

Each is an Avro object container file (codec null) holding one record, as Java writes
them. The schemas declare Hudi's record names and field names
(``hudi-common/src/main/avro/*.avsc``); readers resolve fields by name, so a writer schema
that omits optional fields (as the requested-replace one does with the clustering plan)
still reads back through Java's reader schema with their defaults.
"""
from __future__ import annotations

import io
from collections.abc import Mapping
from typing import Any

import fastavro

from hoodie.errors import FormatError

_S = "string"

INSTANT_INFO = {
    "type": "record",
    "name": "HoodieInstantInfo",
    "namespace": "org.apache.hudi.avro.model",
    "fields": [{"name": "commitTime", "type": _S}, {"name": "action", "type": _S}],
}

ROLLBACK_PLAN = {
    "type": "record",
    "name": "HoodieRollbackPlan",
    "namespace": "org.apache.hudi.avro.model",
    "fields": [
        {"name": "instantToRollback", "type": ["null", INSTANT_INFO], "default": None},
        {
            "name": "RollbackRequests",
            "type": ["null", {"type": "array", "items": {
                "type": "record",
                "name": "HoodieRollbackRequest",
                "fields": [
                    {"name": "partitionPath", "type": _S},
                    {"name": "fileId", "type": ["null", _S], "default": None},
                    {"name": "latestBaseInstant", "type": ["null", _S], "default": None},
                    {"name": "filesToBeDeleted", "type": {"type": "array", "items": _S}, "default": []},
                    {"name": "logBlocksToBeDeleted", "type": ["null", {"type": "map", "values": "long"}], "default": None},
                ],
            }}],
            "default": None,
        },
        {"name": "version", "type": ["int", "null"], "default": 1},
    ],
}

ROLLBACK_METADATA = {
    "type": "record",
    "name": "HoodieRollbackMetadata",
    "namespace": "org.apache.hudi.avro.model",
    "fields": [
        {"name": "startRollbackTime", "type": _S},
        {"name": "timeTakenInMillis", "type": "long"},
        {"name": "totalFilesDeleted", "type": "int"},
        {"name": "commitsRollback", "type": {"type": "array", "items": _S}},
        {"name": "partitionMetadata", "type": {"type": "map", "values": {
            "type": "record",
            "name": "HoodieRollbackPartitionMetadata",
            "fields": [
                {"name": "partitionPath", "type": _S},
                {"name": "successDeleteFiles", "type": {"type": "array", "items": _S}},
                {"name": "failedDeleteFiles", "type": {"type": "array", "items": _S}},
                {"name": "rollbackLogFiles", "type": ["null", {"type": "map", "values": "long"}], "default": None},
                {"name": "logFilesFromFailedCommit", "type": ["null", {"type": "map", "values": "long"}], "default": None},
            ],
        }}},
        {"name": "version", "type": ["int", "null"], "default": 1},
        {"name": "instantsRollback", "type": {"type": "array", "items": INSTANT_INFO}, "default": []},
    ],
}

REQUESTED_REPLACE_METADATA = {
    "type": "record",
    "name": "HoodieRequestedReplaceMetadata",
    "namespace": "org.apache.hudi.avro.model",
    "fields": [
        {"name": "operationType", "type": ["null", _S], "default": None},
        {"name": "extraMetadata", "type": ["null", {"type": "map", "values": _S}], "default": None},
        {"name": "version", "type": ["int", "null"], "default": 1},
    ],
}


# --- cleaning (HoodieCleanerPlan.avsc, HoodieCleanMetadata.avsc, HoodieCleanPartitionMetadata.avsc) --

ACTION_INSTANT = {
    "type": "record",
    "name": "HoodieActionInstant",
    "namespace": "org.apache.hudi.avro.model",
    "fields": [{"name": "timestamp", "type": _S}, {"name": "action", "type": _S}, {"name": "state", "type": _S}],
}

CLEAN_FILE_INFO = {
    "type": "record",
    "name": "HoodieCleanFileInfo",
    "namespace": "org.apache.hudi.avro.model",
    "fields": [
        {"name": "filePath", "type": ["null", _S], "default": None},
        {"name": "isBootstrapBaseFile", "type": ["null", "boolean"], "default": None},
    ],
}

CLEANER_PLAN = {
    "type": "record",
    "name": "HoodieCleanerPlan",
    "namespace": "org.apache.hudi.avro.model",
    "fields": [
        {"name": "earliestInstantToRetain", "type": ["null", ACTION_INSTANT], "default": None},
        {"name": "lastCompletedCommitTimestamp", "type": _S, "default": ""},
        {"name": "policy", "type": _S},
        # deprecated (plan version 1: file names); version 2 plans use filePathsToBeDeletedPerPartition
        {"name": "filesToBeDeletedPerPartition", "type": ["null", {"type": "map", "values": {"type": "array", "items": _S}}], "default": None},
        {"name": "version", "type": ["int", "null"], "default": 1},
        {"name": "filePathsToBeDeletedPerPartition", "type": ["null", {"type": "map", "values": {"type": "array", "items": CLEAN_FILE_INFO}}], "default": None},
        {"name": "partitionsToBeDeleted", "type": ["null", {"type": "array", "items": _S}], "default": None},
        {"name": "extraMetadata", "type": ["null", {"type": "map", "values": _S}], "default": None},
    ],
}

CLEAN_PARTITION_METADATA = {
    "type": "record",
    "name": "HoodieCleanPartitionMetadata",
    "namespace": "org.apache.hudi.avro.model",
    "fields": [
        {"name": "partitionPath", "type": _S},
        {"name": "policy", "type": _S},
        {"name": "deletePathPatterns", "type": {"type": "array", "items": _S}},
        {"name": "successDeleteFiles", "type": {"type": "array", "items": _S}},
        {"name": "failedDeleteFiles", "type": {"type": "array", "items": _S}},
        {"name": "isPartitionDeleted", "type": ["null", "boolean"], "default": None},
    ],
}

CLEAN_METADATA = {
    "type": "record",
    "name": "HoodieCleanMetadata",
    "namespace": "org.apache.hudi.avro.model",
    "fields": [
        {"name": "startCleanTime", "type": _S},
        {"name": "timeTakenInMillis", "type": "long"},
        {"name": "totalFilesDeleted", "type": "int"},
        {"name": "earliestCommitToRetain", "type": _S},
        {"name": "lastCompletedCommitTimestamp", "type": _S, "default": ""},
        {"name": "partitionMetadata", "type": {"type": "map", "values": CLEAN_PARTITION_METADATA}},
        {"name": "version", "type": ["int", "null"], "default": 1},
        {
            "name": "bootstrapPartitionMetadata",
            "type": ["null", {"type": "map", "values": "org.apache.hudi.avro.model.HoodieCleanPartitionMetadata"}],
            "default": None,
        },
        {"name": "extraMetadata", "type": ["null", {"type": "map", "values": _S}], "default": None},
    ],
}

# --- savepoints and restore (HoodieSavePointMetadata.avsc, HoodieRestorePlan.avsc, HoodieRestoreMetadata.avsc)

SAVEPOINT_METADATA = {
    "type": "record",
    "name": "HoodieSavepointMetadata",
    "namespace": "org.apache.hudi.avro.model",
    "fields": [
        {"name": "savepointedBy", "type": _S},
        {"name": "savepointedAt", "type": "long"},
        {"name": "comments", "type": _S},
        {"name": "partitionMetadata", "type": {"type": "map", "values": {
            "type": "record",
            "name": "HoodieSavepointPartitionMetadata",
            "fields": [
                {"name": "partitionPath", "type": _S},
                {"name": "savepointDataFile", "type": {"type": "array", "items": _S}},
            ],
        }}},
        {"name": "version", "type": ["int", "null"], "default": 1},
    ],
}

RESTORE_PLAN = {
    "type": "record",
    "name": "HoodieRestorePlan",
    "namespace": "org.apache.hudi.avro.model",
    "fields": [
        {"name": "instantsToRollback", "type": {"type": "array", "items": INSTANT_INFO}, "default": []},
        {"name": "version", "type": ["int", "null"], "default": 1},
        # Java declares ["string", "null"]; null first here so the null default is valid Avro.
        # Readers resolve union branches by type, so the order does not matter to them.
        {"name": "savepointToRestoreTimestamp", "type": ["null", _S], "default": None},
    ],
}

RESTORE_METADATA = {
    "type": "record",
    "name": "HoodieRestoreMetadata",
    "namespace": "org.apache.hudi.avro.model",
    "fields": [
        {"name": "startRestoreTime", "type": _S},
        {"name": "timeTakenInMillis", "type": "long"},
        {"name": "instantsToRollback", "type": {"type": "array", "items": _S}},
        {"name": "hoodieRestoreMetadata", "type": {"type": "map", "values": {"type": "array", "items": ["null", ROLLBACK_METADATA]}}},
        {"name": "version", "type": ["int", "null"], "default": 1},
        {"name": "restoreInstantInfo", "type": {"type": "array", "items": "org.apache.hudi.avro.model.HoodieInstantInfo"}, "default": []},
        {"name": "extraMetadata", "type": ["null", {"type": "map", "values": _S}], "default": None},
    ],
}


# --- commit metadata in Avro form (HoodieCommitMetadata.avsc, HoodieReplaceCommitMetadata.avsc) --
# v6 keeps commit metadata as JSON on the active timeline; the archived timeline stores it
# as these records (Java converts the JSON with Jackson, field by field).


def _opt_field(name: str, avro_type: Any) -> dict[str, Any]:
    return {"name": name, "type": ["null", avro_type], "default": None}


WRITE_STAT = {
    "type": "record",
    "name": "HoodieWriteStat",
    "namespace": "org.apache.hudi.avro.model",
    "fields": [
        _opt_field("fileId", _S),
        _opt_field("path", _S),
        _opt_field("prevCommit", _S),
        _opt_field("numWrites", "long"),
        _opt_field("numDeletes", "long"),
        _opt_field("numUpdateWrites", "long"),
        _opt_field("totalWriteBytes", "long"),
        _opt_field("totalWriteErrors", "long"),
        _opt_field("partitionPath", _S),
        _opt_field("totalLogRecords", "long"),
        _opt_field("totalLogFiles", "long"),
        _opt_field("totalUpdatedRecordsCompacted", "long"),
        _opt_field("numInserts", "long"),
        _opt_field("totalLogBlocks", "long"),
        _opt_field("totalCorruptLogBlock", "long"),
        _opt_field("totalRollbackBlocks", "long"),
        _opt_field("fileSizeInBytes", "long"),
        _opt_field("logVersion", "int"),
        _opt_field("logOffset", "long"),
        _opt_field("baseFile", _S),
        _opt_field("logFiles", {"type": "array", "items": _S}),
        _opt_field("cdcStats", {"type": "map", "values": "long"}),
        _opt_field("minEventTime", "long"),
        _opt_field("maxEventTime", "long"),
        _opt_field("runtimeStats", {
            "type": "record",
            "name": "HoodieRuntimeStats",
            "fields": [_opt_field("totalScanTime", "long"), _opt_field("totalCreateTime", "long"), _opt_field("totalUpsertTime", "long")],
        }),
        _opt_field("totalLogFilesCompacted", "long"),
        _opt_field("totalLogSizeCompacted", "long"),
        _opt_field("tempPath", _S),
    ],
}

COMMIT_METADATA_AVRO = {
    "type": "record",
    "name": "HoodieCommitMetadata",
    "namespace": "org.apache.hudi.avro.model",
    "fields": [
        _opt_field("partitionToWriteStats", {"type": "map", "values": {"type": "array", "items": WRITE_STAT}}),
        _opt_field("compacted", "boolean"),
        _opt_field("extraMetadata", {"type": "map", "values": _S}),
        {"name": "version", "type": ["int", "null"], "default": 1},
        _opt_field("operationType", _S),
    ],
}

REPLACE_COMMIT_METADATA_AVRO = {
    "type": "record",
    "name": "HoodieReplaceCommitMetadata",
    "namespace": "org.apache.hudi.avro.model",
    "fields": [
        _opt_field("partitionToWriteStats", {"type": "map", "values": {"type": "array", "items": WRITE_STAT}}),
        _opt_field("extraMetadata", {"type": "map", "values": _S}),
        {"name": "version", "type": ["int", "null"], "default": 1},
        _opt_field("operationType", _S),
        _opt_field("partitionToReplaceFileIds", {"type": "map", "values": {"type": "array", "items": _S}}),
    ],
}


def define_once(schema: Any) -> Any:
    """``schema`` with every named type defined at its first use and referenced by full
    name afterwards: Avro refuses a name defined twice, and the composite schemas here
    reuse records (``HoodieInstantInfo`` in both the rollback and restore metadata)."""
    seen: set[str] = set()

    def walk(node: Any, namespace: str | None) -> Any:
        if isinstance(node, list):
            return [walk(n, namespace) for n in node]
        if not isinstance(node, dict):
            return node
        kind = node.get("type")
        if kind in ("record", "enum", "fixed"):
            ns = node.get("namespace", namespace)
            full = node["name"] if "." in node["name"] or not ns else f"{ns}.{node['name']}"
            if full in seen:
                return full
            seen.add(full)
            out = dict(node)
            if kind == "record":
                out["fields"] = [{**f, "type": walk(f["type"], ns)} for f in node["fields"]]
            return out
        if kind == "array":
            return {**node, "items": walk(node["items"], namespace)}
        if kind == "map":
            return {**node, "values": walk(node["values"], namespace)}
        return node

    return walk(schema, None)


def encode(schema: dict[str, Any], record: dict[str, Any]) -> bytes:
    buf = io.BytesIO()
    fastavro.writer(buf, fastavro.parse_schema(schema), [record], codec="null")
    return buf.getvalue()


def decode(data: bytes, source: str) -> dict[str, Any]:
    """The one record of an Avro object container file: the one way instant files are
    decoded from Avro. Bytes that are no such container raise :class:`FormatError`
    naming ``source`` (the instant file)."""
    try:
        records = list(fastavro.reader(io.BytesIO(data)))
    except Exception as e:  # fastavro raises several exception types for bad input
        raise FormatError(f"{source} cannot be decoded as Avro: {e}") from e
    if not records:
        raise FormatError(f"{source} holds no Avro record")
    if not isinstance(records[0], dict):
        raise FormatError(f"{source} holds a {type(records[0]).__name__}, not a record")
    return records[0]


# --- typed fields of decoded records ------------------------------------------------------------

_NO_DEFAULT = object()  # "no default given" for typed_field
_TYPE_NAMES = {int: "an integer", str: "a string", dict: "a map", list: "a list", bool: "a boolean"}


def mistyped(source: str, what: str, value: object, expected: type) -> FormatError:
    """The error for a field ``what`` of ``source`` holding ``value``, not of type ``expected``."""
    shown = repr(value) if len(repr(value)) <= 100 else repr(value)[:100] + "..."
    return FormatError(f"{source}: {what} is {shown} ({_TYPE_NAMES.get(type(value), type(value).__name__)}), not {_TYPE_NAMES[expected]}")


def typed_field(doc: Mapping[str, Any], name: str, expected: type, source: str, default: Any = _NO_DEFAULT) -> Any:
    """``doc[name]`` when it is of the ``expected`` type; ``default`` when absent or null
    (an empty container when none is given); else a :class:`FormatError` naming it."""
    value = doc.get(name)
    if value is None:
        return expected() if default is _NO_DEFAULT else default
    if type(value) is not expected:
        raise mistyped(source, name, value, expected)
    return value


def strings(values: object, source: str, what: str) -> tuple[str, ...]:
    """A list of strings (null: none), else a :class:`FormatError` naming ``what``."""
    if values is None:
        return ()
    if type(values) is not list:
        raise mistyped(source, what, values, list)
    for v in values:
        if type(v) is not str:
            raise mistyped(source, f"an entry of {what}", v, str)
    return tuple(values)


def sizes(values: object, source: str, what: str) -> dict[str, int]:
    """A map of file → size (null: none), else a :class:`FormatError` naming ``what``."""
    if values is None:
        return {}
    if type(values) is not dict:
        raise mistyped(source, what, values, dict)
    for v in values.values():
        if type(v) is not int:
            raise mistyped(source, f"an entry of {what}", v, int)
    return dict(values)
