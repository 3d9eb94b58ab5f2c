"""hoodie writes, Apache Hudi reads: after every write of the oracle's sequence (a bulk
insert, an upsert with in-batch duplicates, a delete, an upsert with a stale update, an
insert_overwrite) by ``hoodie.write``, the snapshot, read-optimized, incremental and
time-travel reads of Apache Hudi 0.15 and 1.x return exactly hoodie's reads, meta columns
included, and the data equals the model's.
"""
from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from hudi_oracle import HUDI_0_15, HUDI_1, Completed, HudiOracle
from oracle_reads import check_reads, log_files
from sequences import Layout, Model, batch, steps

import hoodie

COW_HIVE, MOR_PLAIN, MOR_NONE = Layout("COPY_ON_WRITE", "hive"), Layout("MERGE_ON_READ", "plain"), Layout("MERGE_ON_READ", "none")
CASES = [(HUDI_0_15, COW_HIVE), (HUDI_0_15, MOR_PLAIN), (HUDI_0_15, MOR_NONE), (HUDI_1, COW_HIVE), (HUDI_1, MOR_PLAIN)]


@pytest.mark.parametrize(("version", "layout"), CASES, ids=[f"hudi-{v}-{layout.id}" for v, layout in CASES])
def test_apache_hudi_reads_what_hoodie_writes(
    version: str, layout: Layout, hudi_oracle: Callable[[str], HudiOracle], tmp_path: Path
) -> None:
    oracle = hudi_oracle(version)
    path = tmp_path / "table"
    options = layout.options("hoodie_written")
    model, writes = Model.of(layout), []
    for n, (op, records) in enumerate(steps()):
        instant = hoodie.write(batch(records), str(path), {**options, "hoodie.datasource.write.operation": op})
        model.apply(instant, op, records)
        writes.append(Completed(instant, "", instant))  # (table version 6: completion is the instant)
        check_reads(oracle, path, layout, model, writes, f"write {n} ({op})")
    # merge-on-read: the reads merged log files with base files
    assert bool(log_files(path)) == layout.is_mor
