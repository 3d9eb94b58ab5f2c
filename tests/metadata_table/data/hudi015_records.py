"""Makes this folder's Apache Hudi 0.15 samples (see ``tests/support/hudi015_samples.py``)
from the two tables Apache Hudi 0.15 wrote for them.

Usage: ``python hudi015_records.py COW_TABLE MOR_TABLE`` (the tables' folders are named
``hudi015_COPY_ON_WRITE`` and ``hudi015_MERGE_ON_READ``)."""
from __future__ import annotations

import base64
import gzip
import json
import sys
import tarfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "support"))
from hudi015_samples import DATA, metadata_records  # noqa: E402

from hoodie.table.table import HoodieTable  # noqa: E402


def instants(base: Path) -> list[dict]:
    table = HoodieTable.open(str(base))
    records = metadata_records(base)
    return [
        {
            "instant": i.timestamp,
            "action": i.action,
            "content": base64.b64encode(table.timeline.read_content(i)).decode("ascii"),
            "records": records.get(i.timestamp, {}),
        }
        for i in table.timeline.completed()
    ]


def pack(base: Path) -> None:
    def keep(info: tarfile.TarInfo) -> tarfile.TarInfo | None:
        return None if info.name.endswith(".crc") or "/.hoodie/metadata" in info.name else info

    def keep_all(info: tarfile.TarInfo) -> tarfile.TarInfo | None:
        return None if info.name.endswith(".crc") else info

    with tarfile.open(DATA / f"{base.name.lower()}.tgz", "w:gz") as tar:
        tar.add(base, arcname=base.name, filter=keep)
    # the whole table, metadata table included (tests/support/mdt_checks.copy_sample)
    with tarfile.open(DATA / f"{base.name.lower()}_with_metadata.tgz", "w:gz") as tar:
        tar.add(base, arcname=base.name, filter=keep_all)


if __name__ == "__main__":
    tables = [Path(p) for p in sys.argv[1:3]]
    out = {t.name.removeprefix("hudi015_"): instants(t) for t in tables}
    (DATA / "hudi015_records.json.gz").write_bytes(gzip.compress(json.dumps(out, indent=1, sort_keys=True).encode(), mtime=0))
    for t in tables:
        pack(t)
