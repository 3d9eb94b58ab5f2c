"""Apache Hudi writes, hoodie reads: Apache Hudi 0.15 writes the oracle's sequence
(inserts, an upsert with in-batch duplicates, a delete, another upsert) with its metadata
table on or off and either index; after every write hoodie's snapshot, read-optimized,
incremental and time-travel reads return exactly Apache Hudi's, meta columns included,
and the data equals the model's.
"""
from __future__ import annotations

from pathlib import Path

import pytest
from hudi_oracle import HudiOracle
from oracle_reads import check_reads, log_files
from sequences import Layout, Model, batch, steps

CASES = [
    (Layout("COPY_ON_WRITE", "hive"), {"hoodie.metadata.enable": "true", "hoodie.index.type": "BLOOM"}),
    (Layout("MERGE_ON_READ", "plain"), {"hoodie.metadata.enable": "false", "hoodie.index.type": "SIMPLE"}),
    (Layout("MERGE_ON_READ", "none"), {"hoodie.metadata.enable": "true", "hoodie.index.type": "BLOOM"}),
]


def _id(case: tuple[Layout, dict[str, str]]) -> str:
    layout, extra = case
    mdt = "mdt" if extra["hoodie.metadata.enable"] == "true" else "no-mdt"
    return f"{layout.id}-{mdt}-{extra['hoodie.index.type'].lower()}"


@pytest.mark.parametrize("case", CASES, ids=[_id(c) for c in CASES])
def test_hoodie_reads_what_apache_hudi_015_writes(case: tuple[Layout, dict[str, str]], hudi015: HudiOracle, tmp_path: Path) -> None:
    layout, extra = case
    path = tmp_path / "table"
    options = layout.options("hudi_written", **extra)
    model, instants = Model(), []
    for n, (op, records) in enumerate(steps()):
        completed = hudi015.write(path, batch(records), {**options, "hoodie.datasource.write.operation": op})
        assert completed, f"Apache Hudi completed no instant for write {n} ({op})"
        instant = completed[-1][0]
        model.apply(instant, op, records)
        instants.append(instant)
        check_reads(hudi015, path, layout, model, instants, f"write {n} ({op}) by Apache Hudi")
    # merge-on-read: the reads merged log files with base files
    assert bool(log_files(path)) == layout.is_mor
