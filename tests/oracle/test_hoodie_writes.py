"""hoodie writes, Apache Hudi reads: after every write of the oracle's sequence (a bulk
insert, an upsert with in-batch duplicates, a delete, an upsert with a stale update, an
insert_overwrite) by ``hoodie.write``, some with compaction and cleaning inline, the snapshot, read-optimized, incremental and
time-travel reads of Apache Hudi 0.15 and 1.x return exactly hoodie's reads, meta columns
included, and the data equals the model's.
"""
from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hudi_oracle import HUDI_0_15, HUDI_1, Completed, HudiOracle
from oracle_reads import run_sequence
from sequences import SERVICES, Layout, Model, batch, steps

import hoodie

COW_HIVE, MOR_PLAIN, MOR_NONE = Layout("COPY_ON_WRITE", "hive"), Layout("MERGE_ON_READ", "plain"), Layout("MERGE_ON_READ", "none")
CASES = [
    (HUDI_0_15, COW_HIVE, {}),
    (HUDI_0_15, MOR_PLAIN, {}),
    (HUDI_0_15, MOR_NONE, SERVICES),
    (HUDI_1, COW_HIVE, SERVICES),
    (HUDI_1, MOR_PLAIN, {}),
    (HUDI_1, MOR_NONE, SERVICES),
]


def _id(version: str, layout: Layout, extra: dict[str, str]) -> str:
    return f"hudi-{version}-{layout.id}" + ("-services" if extra else "")


@pytest.mark.parametrize(("version", "layout", "extra"), CASES, ids=[_id(*c) for c in CASES])
def test_apache_hudi_reads_what_hoodie_writes(
    version: str, layout: Layout, extra: dict[str, str], hudi_oracle: Callable[[str], HudiOracle], tmp_path: Path
) -> None:
    oracle = hudi_oracle(version)
    path = tmp_path / "table"
    options = layout.options("hoodie_written", **extra)

    def write(op: str, records: list[dict[str, Any]]) -> Completed:
        instant = hoodie.write(batch(records), str(path), {**options, "hoodie.datasource.write.operation": op})
        return Completed(instant, "", instant)  # (table version 6: completion is the instant; action unused)

    # (a stale update meeting an inline compaction is a known difference: test_differences.py)
    run_sequence(oracle, path, layout, Model.of(layout), extra, steps(stale=not extra), write, "hoodie")
