"""``HoodieArchivedMetaEntry``: one archived timeline file, as Java's archiver writes it.

Every file of an archived instant (requested, inflight, completed) becomes one record:
``commitTime``, ``actionType``, ``actionState`` and the file's content in the field for its
action (``MetadataConversionUtils.createMetaWrapper``): commit and delta commit metadata
(JSON on a v6 timeline) converted to the Avro ``HoodieCommitMetadata``, replace commits to
``HoodieReplaceCommitMetadata`` (their inflight workload to ``HoodieInflightReplaceMetadata``,
their requested file to ``hoodieRequestedReplaceMetadata``), clean plans and metadata,
rollback metadata and compaction plans as they are.

The writer schema leaves out the deprecated ``hoodieCompactionMetadata`` and the
``hoodieIndexCommitMetadata`` fields (hoodie never writes those actions); a reader's
schema fills them with their null defaults.
"""
from __future__ import annotations

import io
from datetime import datetime, timezone
from functools import lru_cache
from typing import Any

import fastavro

from hoodie.layout import format_instant
from hoodie.services.timeline_files import TimelineFile
from hoodie.storage.base import Storage
from hoodie.timeline import avro_metadata as avro
from hoodie.timeline.commit_metadata import CommitMetadata, WriteStat
from hoodie.timeline.compaction_plan import COMPACTION_PLAN
from hoodie.timeline.instant import Action


def _opt(name: str, avro_type: Any) -> dict[str, Any]:
    return {"name": name, "type": ["null", avro_type], "default": None}


ARCHIVED_META_ENTRY = avro.define_once({
    "type": "record",
    "name": "HoodieArchivedMetaEntry",
    "namespace": "org.apache.hudi.avro.model",
    "fields": [
        _opt("hoodieCommitMetadata", avro.COMMIT_METADATA_AVRO),
        _opt("hoodieCleanMetadata", avro.CLEAN_METADATA),
        _opt("hoodieRollbackMetadata", avro.ROLLBACK_METADATA),
        _opt("hoodieSavePointMetadata", avro.SAVEPOINT_METADATA),
        _opt("commitTime", "string"),
        _opt("actionType", "string"),
        {"name": "version", "type": ["int", "null"], "default": 1},
        _opt("hoodieCompactionPlan", COMPACTION_PLAN),
        _opt("hoodieCleanerPlan", avro.CLEANER_PLAN),
        _opt("actionState", "string"),
        _opt("hoodieReplaceCommitMetadata", avro.REPLACE_COMMIT_METADATA_AVRO),
        _opt("hoodieRequestedReplaceMetadata", avro.REQUESTED_REPLACE_METADATA),
        _opt("HoodieInflightReplaceMetadata", avro.COMMIT_METADATA_AVRO),
        _opt("stateTransitionTime", "string"),
    ],
})


@lru_cache(maxsize=1)
def parsed_schema() -> Any:
    return fastavro.parse_schema(ARCHIVED_META_ENTRY)


def _write_stat(s: WriteStat) -> dict[str, Any]:
    rt = s.runtimeStats
    return {
        "fileId": s.fileId, "path": s.path, "prevCommit": s.prevCommit, "numWrites": s.numWrites,
        "numDeletes": s.numDeletes, "numUpdateWrites": s.numUpdateWrites, "totalWriteBytes": s.totalWriteBytes,
        "totalWriteErrors": s.totalWriteErrors, "partitionPath": s.partitionPath, "totalLogRecords": s.totalLogRecords,
        "totalLogFiles": len(s.logFiles) if s.logFiles is not None else None,
        "totalUpdatedRecordsCompacted": s.totalUpdatedRecordsCompacted, "numInserts": s.numInserts,
        "totalLogBlocks": s.totalLogBlocks, "totalCorruptLogBlock": s.totalCorruptLogBlock,
        "totalRollbackBlocks": s.totalRollbackBlocks, "fileSizeInBytes": s.fileSizeInBytes,
        "logVersion": s.logVersion, "logOffset": s.logOffset, "baseFile": s.baseFile,
        "logFiles": list(s.logFiles) if s.logFiles is not None else None,
        "cdcStats": dict(s.cdcStats) if s.cdcStats is not None else None,
        "minEventTime": s.minEventTime, "maxEventTime": s.maxEventTime,
        "runtimeStats": {"totalScanTime": rt.totalScanTime, "totalCreateTime": rt.totalCreateTime, "totalUpsertTime": rt.totalUpsertTime} if rt else None,
        "totalLogFilesCompacted": s.totalLogFilesCompacted, "totalLogSizeCompacted": s.totalLogSizeCompacted,
        "tempPath": s.tempPath,
    }


def commit_metadata_record(meta: CommitMetadata, replace: bool = False) -> dict[str, Any]:
    """The Avro form of commit metadata, field by field as Jackson converts it in Java."""
    out: dict[str, Any] = {
        "partitionToWriteStats": {p: [_write_stat(s) for s in stats] for p, stats in meta.partition_to_write_stats.items()},
        "extraMetadata": dict(meta.extra_metadata),
        "version": 1,
        "operationType": meta.operation_type,
    }
    if replace:
        out["partitionToReplaceFileIds"] = {p: list(ids) for p, ids in meta.replaced_file_ids().items()}
    else:
        out["compacted"] = meta.compacted
    return out


def _avro_content(content: bytes, what: str) -> dict[str, Any] | None:
    # the record as the file holds it, every field kept: the archive stores what Java wrote
    return avro.decode(content, what) if content.strip() else None


def entry_for(storage: Storage, f: TimelineFile) -> dict[str, Any]:
    """The archived record of one timeline file."""
    inst = f.instant
    content = storage.read_bytes(f.path) if f.size else b""
    what = f.path
    record: dict[str, Any] = {
        "commitTime": inst.timestamp,
        "actionType": inst.action,
        "actionState": inst.state.value,
        "version": 1,
        # when the file was written: Java keeps the state transition time of the instant
        "stateTransitionTime": format_instant(datetime.fromtimestamp(f.mtime_ms / 1000, timezone.utc)) if f.mtime_ms else None,
    }
    if not content.strip():
        return record  # empty requested/inflight files (and crash leftovers) carry no metadata
    a = inst.action
    if a in (Action.COMMIT, Action.DELTA_COMMIT):
        record["hoodieCommitMetadata"] = commit_metadata_record(CommitMetadata.decode(content, inst.timestamp))
    elif a == Action.REPLACE_COMMIT:
        if inst.is_completed:
            record["hoodieReplaceCommitMetadata"] = commit_metadata_record(CommitMetadata.decode(content, inst.timestamp), replace=True)
        elif inst.is_inflight:
            record["HoodieInflightReplaceMetadata"] = commit_metadata_record(CommitMetadata.decode(content, inst.timestamp))
        else:
            record["hoodieRequestedReplaceMetadata"] = _avro_content(content, what)
    elif a == Action.CLEAN:
        record["hoodieCleanMetadata" if inst.is_completed else "hoodieCleanerPlan"] = _avro_content(content, what)
    elif a == Action.ROLLBACK and inst.is_completed:
        record["hoodieRollbackMetadata"] = _avro_content(content, what)
    elif a in (Action.COMPACTION, Action.LOG_COMPACTION) and inst.is_requested:
        record["hoodieCompactionPlan"] = _avro_content(content, what)
    elif a == Action.SAVEPOINT and inst.is_completed:
        record["hoodieSavePointMetadata"] = _avro_content(content, what)
    return record


def encode_records(records: list[dict[str, Any]]) -> list[bytes]:
    """Each record in schemaless Avro binary (the items of an AVRO_DATA block)."""
    schema = parsed_schema()
    out = []
    for r in records:
        buf = io.BytesIO()
        fastavro.schemaless_writer(buf, schema, r)
        out.append(buf.getvalue())
    return out
