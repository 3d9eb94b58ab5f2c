"""Test helper: a metadata table laid out on disk with the writer side of the codec (real
HFiles and HFILE_DATA log files, a version-6 timeline in both tables), for reader and
table-service tests that need exact control of its slices and instants."""
from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from hoodie.formats.hfile import encode_hfile
from hoodie.formats.log import HeaderKey, HFileDataBlock
from hoodie.layout import PARTITION_METAFILE_PREFIX, partition_metadata_content
from hoodie.metadata_table.records import FileInfo, MetadataRecord, encode_value
from hoodie.metadata_table.schema import METADATA_RECORD_SCHEMA_JSON as SCHEMA
from hoodie.table.table import HoodieTable

#: the metadata table's initialising instant (table version 6)
INIT = "00000000000000010"


def files_record(key: str, **entries: int) -> MetadataRecord:
    """A file-list record (type 1 for the partition list); ``a_parquet=5`` lists
    ``a.parquet`` with size 5, a negative size deletes it."""
    kind = 1 if key == "__all_partitions__" else 2
    return MetadataRecord(key, kind, {n.replace("_", "."): FileInfo(max(s, 0), s < 0) for n, s in entries.items()})


def hfile_block(instant: str, *records: MetadataRecord) -> HFileDataBlock:
    """An HFILE_DATA block of ``records`` written by ``instant``."""
    content = encode_hfile(sorted((r.key, encode_value(r)) for r in records), schema=SCHEMA)
    return HFileDataBlock(content, {HeaderKey.INSTANT_TIME: instant, HeaderKey.SCHEMA: SCHEMA})


def base_hfile(path: Path, *records: MetadataRecord) -> None:
    """A base HFile of ``records`` at ``path``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(encode_hfile(sorted((r.key, encode_value(r)) for r in records), schema=SCHEMA))


def delta_commits(timeline: Path, completed: Sequence[str], inflight: Sequence[str] = ()) -> None:
    """Delta commits in the timeline folder ``timeline``: ``completed`` ones (without
    write stats) and ``inflight`` ones."""
    timeline.mkdir(parents=True, exist_ok=True)
    for t in [*completed, *inflight]:
        (timeline / f"{t}.deltacommit.requested").write_bytes(b"")
        (timeline / f"{t}.deltacommit.inflight").write_bytes(b"")
    for t in completed:
        (timeline / f"{t}.deltacommit").write_text(json.dumps({"partitionToWriteStats": {}, "operationType": "UPSERT"}))


def create_tables(base: Path, partitions: str) -> Path:
    """A merge-on-read data table at ``base`` whose ``hoodie.table.metadata.partitions``
    are ``partitions``, and its metadata table with those partitions (empty); the
    metadata table's path."""
    HoodieTable.create(str(base), {
        "hoodie.table.name": "t", "hoodie.table.type": "MERGE_ON_READ", "hoodie.table.version": "6",
        "hoodie.table.metadata.partitions": partitions, "hoodie.table.timeline.timezone": "UTC",
    })
    mdt = base / ".hoodie" / "metadata"
    HoodieTable.create(str(mdt), {
        "hoodie.table.name": "t_metadata", "hoodie.table.type": "MERGE_ON_READ", "hoodie.table.version": "6",
        "hoodie.table.base.file.format": "HFILE", "hoodie.table.recordkey.fields": "key",
    })
    for partition in partitions.split(","):
        (mdt / partition).mkdir()
        (mdt / partition / PARTITION_METAFILE_PREFIX).write_bytes(partition_metadata_content(INIT, partition))
    return mdt
