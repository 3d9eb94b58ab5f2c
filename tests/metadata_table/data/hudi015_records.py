"""Makes ``hudi015_files.json``: what Apache Hudi 0.15.0 wrote to the ``files`` partition
of its metadata table for each data instant of the oracle sequence
(``tests/oracle/sequences.steps("insert")``, hive-style partitions, all four metadata
partitions on, ``hoodie.metadata.compact.max.delta.commits=3``; merge-on-read with the
inline services of ``sequences.SERVICES``, copy-on-write retaining 2 commits), with the
completed content of each data instant, so that the conversion is compared with Hudi's
records without a JVM.

Usage: ``python hudi015_records.py COW_TABLE MOR_TABLE > hudi015_files.json`` on tables
Apache Hudi 0.15 wrote that way."""
from __future__ import annotations

import base64
import json
import sys
from pathlib import Path

from hoodie.formats.hfile import HFileReader
from hoodie.formats.log import HeaderKey, HFileDataBlock
from hoodie.formats.log.reader import LogFileReader
from hoodie.metadata_table.records import decode_value
from hoodie.storage.local import LocalStorage
from hoodie.table.table import HoodieTable


def blocks_by_instant(base: Path, partition: str) -> dict[str, dict[str, dict[str, list]]]:
    """Each HFILE_DATA block of a metadata-table partition, by instant: key → file map."""
    out: dict[str, dict[str, dict[str, list]]] = {}
    storage = LocalStorage()
    for path in sorted((base / ".hoodie" / "metadata" / partition).glob(".*.log.*")):
        if path.name.endswith(".crc"):
            continue
        with LogFileReader(storage, str(path)) as reader:
            for info in reader.scan():
                block = reader.read_block(info)
                if not isinstance(block, HFileDataBlock):
                    continue
                instant = block.header[HeaderKey.INSTANT_TIME]
                hfile = HFileReader.from_bytes(block.content, path.name)
                schema = hfile.schema or block.header[HeaderKey.SCHEMA]
                for key, value in hfile.read_all():
                    record = decode_value(key, value, schema, path.name)
                    out.setdefault(instant, {})[key] = {n: [i.size, i.is_deleted] for n, i in record.files.items()}
    return out


def instants(base: Path) -> list[dict]:
    table = HoodieTable.open(str(base))
    files = blocks_by_instant(base, "files")
    out = []
    for instant in table.timeline.completed():
        content = table.timeline.read_content(instant)
        out.append({
            "instant": instant.timestamp,
            "action": instant.action,
            "content": base64.b64encode(content).decode("ascii"),
            "files": files.get(instant.timestamp, {}),
        })
    return out


if __name__ == "__main__":
    cow, mor = (Path(p) for p in sys.argv[1:3])
    json.dump({"COPY_ON_WRITE": instants(cow), "MERGE_ON_READ": instants(mor)}, sys.stdout, indent=1, sort_keys=True)
