"""Avro instant content: rollback plans and metadata, requested replace metadata.

Each is an Avro object container file (codec null) holding one record, as Java writes
them. The schemas declare Hudi's record names and field names
(``hudi-common/src/main/avro/*.avsc``); readers resolve fields by name, so a writer schema
that omits optional fields (as the requested-replace one does with the clustering plan)
still reads back through Java's reader schema with their defaults.
"""
from __future__ import annotations

import io
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


def encode(schema: dict[str, Any], record: dict[str, Any]) -> bytes:
    buf = io.BytesIO()
    fastavro.writer(buf, fastavro.parse_schema(schema), [record], codec="null")
    return buf.getvalue()


def decode(data: bytes, what: str = "instant") -> dict[str, Any]:
    try:
        records = list(fastavro.reader(io.BytesIO(data)))
    except Exception as e:  # fastavro raises several exception types for bad input
        raise FormatError(f"cannot decode Avro {what}: {e}") from e
    if not records:
        raise FormatError(f"Avro {what} holds no record")
    return records[0]
