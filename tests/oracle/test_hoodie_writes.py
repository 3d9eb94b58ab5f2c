"""hoodie writes, Apache Hudi reads: after every write of a sequence (inserts, an upsert
with in-batch duplicates, a delete, another upsert) by ``hoodie.write``, Apache Hudi
0.15's snapshot, read-optimized, incremental and time-travel reads of the table return
exactly hoodie's reads, meta columns included, and the data equals the model's.
"""
from __future__ import annotations

from pathlib import Path

import pytest
from hudi_oracle import HudiOracle
from oracle_reads import check_reads, log_files
from sequences import Layout, Model, batch, steps

import hoodie

LAYOUTS = [Layout("COPY_ON_WRITE", "hive"), Layout("MERGE_ON_READ", "plain"), Layout("MERGE_ON_READ", "none")]


@pytest.mark.parametrize("layout", LAYOUTS, ids=[layout.id for layout in LAYOUTS])
def test_apache_hudi_015_reads_what_hoodie_writes(layout: Layout, hudi015: HudiOracle, tmp_path: Path) -> None:
    path = tmp_path / "table"
    options = layout.options("hoodie_written")
    model, instants = Model(), []
    for n, (op, records) in enumerate(steps()):
        instant = hoodie.write(batch(records), str(path), {**options, "hoodie.datasource.write.operation": op})
        model.apply(instant, op, records)
        instants.append(instant)
        check_reads(hudi015, path, layout, model, instants, f"write {n} ({op})")
    # merge-on-read: the reads merged log files with base files
    assert bool(log_files(path)) == layout.is_mor
