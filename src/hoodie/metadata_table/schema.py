"""The Avro schema of the metadata table's records (``HoodieMetadataRecord``, as Apache
Hudi 1.x writes it into every HFile's file info and every HFILE_DATA block's header).

Reads never use it: a record is decoded with the schema its writer stored (Hudi 0.15's
lacks the 1.x fields, and may differ in more). hoodie encodes records with this one: a
superset of 0.15's, which Apache Hudi's readers resolve against their own.
"""
from __future__ import annotations

import json
from typing import Any

__all__ = ["METADATA_RECORD_SCHEMA", "METADATA_RECORD_SCHEMA_JSON"]

_STRING = {"type": "string", "avro.java.string": "String"}


def _optional(name: str, kind: Any, default: Any = None) -> dict[str, Any]:
    return {"name": name, "type": ["null", kind], "default": default}


def _record(name: str, *fields: dict[str, Any]) -> dict[str, Any]:
    return {"type": "record", "name": name, "fields": list(fields)}


def _field(name: str, kind: Any, **extra: Any) -> dict[str, Any]:
    return {"name": name, "type": kind, **extra}


# the wrapper records of column-stats values, each holding one ``value``
_WRAPPED = {
    "BooleanWrapper": "boolean", "IntWrapper": "int", "LongWrapper": "long", "FloatWrapper": "float",
    "DoubleWrapper": "double", "BytesWrapper": "bytes", "StringWrapper": _STRING, "DateWrapper": "int",
    "DecimalWrapper": {"type": "bytes", "logicalType": "decimal", "precision": 30, "scale": 15},
    "TimeMicrosWrapper": {"type": "long", "logicalType": "time-micros"},
    "TimestampMicrosWrapper": "long", "LocalDateWrapper": "int",
}
_WRAPPERS = [_record(name, _field("value", kind)) for name, kind in _WRAPPED.items()]
_ARRAY_WRAPPER = _record("ArrayWrapper", _optional("wrappedValues", {"type": "array", "items": ["null", *_WRAPPED]}))

METADATA_RECORD_SCHEMA: dict[str, Any] = {
    "type": "record",
    "name": "HoodieMetadataRecord",
    "namespace": "org.apache.hudi.avro.model",
    "fields": [
        *(_optional(meta, "string") for meta in (
            "_hoodie_commit_time", "_hoodie_commit_seqno", "_hoodie_record_key", "_hoodie_partition_path", "_hoodie_file_name",
        )),
        _field("key", _STRING),
        _field("type", "int"),
        {"name": "filesystemMetadata", "type": ["null", {
            "type": "map",
            "values": _record("HoodieMetadataFileInfo", _field("size", "long"), _field("isDeleted", "boolean")),
            "avro.java.string": "String",
        }]},
        _optional("BloomFilterMetadata", _record(
            "HoodieMetadataBloomFilter",
            _field("type", _STRING), _field("timestamp", _STRING), _field("bloomFilter", "bytes"), _field("isDeleted", "boolean"),
        )),
        _optional("ColumnStatsMetadata", _record(
            "HoodieMetadataColumnStats",
            _optional("fileName", _STRING),
            _optional("columnName", _STRING),
            {"name": "minValue", "type": ["null", *_WRAPPERS, _ARRAY_WRAPPER], "default": None},
            {"name": "maxValue", "type": ["null", *_WRAPPED, "ArrayWrapper"], "default": None},
            *(_optional(count, "long") for count in ("valueCount", "nullCount", "totalSize", "totalUncompressedSize")),
            _field("isDeleted", "boolean"),
            _field("isTightBound", "boolean", default=False),
            _optional("valueType", _record("HoodieValueTypeInfo", _field("typeOrdinal", "int"), _optional("additionalInfo", _STRING))),
        )),
        _optional("recordIndexMetadata", _record(
            "HoodieRecordIndexInfo",
            _optional("partitionName", _STRING),
            _optional("fileIdHighBits", "long"),
            _optional("fileIdLowBits", "long"),
            _optional("fileIndex", "int"),
            _optional("fileId", _STRING),
            _optional("instantTime", "long"),
            _field("fileIdEncoding", "int", default=0),
            _optional("position", "long"),
        )),
        _optional("SecondaryIndexMetadata", _record("HoodieSecondaryIndexInfo", _field("isDeleted", "boolean"))),
    ],
}

METADATA_RECORD_SCHEMA_JSON = json.dumps(METADATA_RECORD_SCHEMA, separators=(",", ":"))
