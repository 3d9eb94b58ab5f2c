"""Test helper: what Apache Hudi 0.15.0 wrote into its metadata table for each data instant
of the oracle sequence (``tests/oracle/sequences.steps("insert")``, hive-style partitions,
all four metadata partitions on, ``hoodie.metadata.compact.max.delta.commits=3``;
merge-on-read with the inline services of ``sequences.SERVICES``, copy-on-write keeping 2
commits), kept in ``tests/metadata_table/data``: the data tables without their metadata
table (``hudi015_<type>.tgz``), the whole tables (``hudi015_<type>_with_metadata.tgz``)
and the records of each instant (``hudi015_records.json.gz``), made by ``tests/metadata_table/data/hudi015_records.py``.

Records are kept as their Avro values made JSON-plain (:func:`plain`): wrapper records as
``[name, fields]``, bytes as hex, decimals as text, and a bloom filter as the SHA-256 of
its text, so that records compare field by field, wrapper types included."""
from __future__ import annotations

import gzip
import hashlib
import io
import json
import tarfile
from decimal import Decimal
from pathlib import Path
from typing import Any

import fastavro

from hoodie.formats.hfile import HFileReader
from hoodie.formats.log import HeaderKey, HFileDataBlock
from hoodie.formats.log.blocks import DeleteBlock
from hoodie.formats.log.reader import LogFileReader
from hoodie.metadata_table.records import MetadataRecord, encode_value
from hoodie.metadata_table.schema import METADATA_RECORD_SCHEMA_JSON
from hoodie.storage.local import LocalStorage

DATA = Path(__file__).resolve().parents[1] / "metadata_table" / "data"
PARTITIONS = ("files", "column_stats", "bloom_filters", "record_index")
DELETED = "deleted"  # a record-index key in a delete block


def plain(value: Any) -> Any:
    """An Avro value as JSON-plain data (see the module docstring)."""
    if isinstance(value, dict):
        out = {k: plain(v) for k, v in value.items() if v is not None and k != "key"}
        if "bloomFilter" in out:
            out["bloomFilter"] = hashlib.sha256(bytes.fromhex(out["bloomFilter"])).hexdigest()
        return out
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if isinstance(value, (bytes, bytearray)):
        return bytes(value).hex()
    if isinstance(value, Decimal):
        return str(value)
    return value


def _raw(value: bytes, schema: str) -> Any:
    parsed = fastavro.parse_schema(json.loads(schema))
    return fastavro.schemaless_reader(io.BytesIO(value), parsed, None, return_record_name=True, return_record_name_override=True)


def plain_record(record: MetadataRecord) -> Any:
    """A record hoodie made, as :func:`plain` keeps Hudi's (a deletion: ``deleted``)."""
    if record.payload is None:
        return DELETED
    raw = _raw(encode_value(record, METADATA_RECORD_SCHEMA_JSON), METADATA_RECORD_SCHEMA_JSON)
    out = plain(raw)
    out.get("ColumnStatsMetadata", {}).pop("isTightBound", None)  # a Hudi 1.x field
    return {k: v for k, v in out.items() if not k.startswith("_hoodie")}


def metadata_records(base: Path) -> dict[str, dict[str, dict[str, Any]]]:
    """Data instant → metadata partition → key → plain record, from the log blocks of a
    metadata table Apache Hudi wrote."""
    out: dict[str, dict[str, dict[str, Any]]] = {}
    storage = LocalStorage()
    for partition in PARTITIONS:
        for path in sorted((base / ".hoodie" / "metadata" / partition).glob(".*.log.*")):
            if path.name.endswith(".crc"):
                continue
            with LogFileReader(storage, str(path)) as reader:
                for info in reader.scan():
                    block = reader.read_block(info)
                    mine = out.setdefault(block.header[HeaderKey.INSTANT_TIME], {}).setdefault(partition, {})
                    if isinstance(block, DeleteBlock):
                        mine.update((d.record_key, DELETED) for d in block.keys)
                    elif isinstance(block, HFileDataBlock):
                        hfile = HFileReader.from_bytes(block.content, path.name)
                        schema = hfile.schema or block.header[HeaderKey.SCHEMA]
                        for key, value in hfile.read_all():
                            record = plain(_raw(value, schema))
                            mine[key] = {k: v for k, v in record.items() if not k.startswith("_hoodie")}
    return out


def sample_records() -> dict[str, list[dict[str, Any]]]:
    """Table type → its data instants (time, action, base64 content, partition → records)."""
    return json.loads(gzip.decompress((DATA / "hudi015_records.json.gz").read_bytes()))


def sample_table(table_type: str, into: Path) -> Path:
    """The data table Apache Hudi wrote (without its metadata table), unpacked into ``into``."""
    with tarfile.open(DATA / f"hudi015_{table_type.lower()}.tgz") as tar:
        tar.extractall(into, filter="data")
    return into / f"hudi015_{table_type}"
