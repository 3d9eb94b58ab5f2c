"""hoodie writes, Apache Hudi reads: after every write of a sequence (inserts, an upsert
with in-batch duplicates, a delete, another upsert) by ``hoodie.write``, Apache Hudi
0.15's snapshot, read-optimized, incremental and time-travel reads of the table return
exactly hoodie's reads, meta columns included, and the data equals the model's.
"""
from __future__ import annotations

from pathlib import Path

import pytest
from hudi_oracle import HudiOracle
from sequences import Layout, Model, batch, data, model_rows, rows, steps

import hoodie

LAYOUTS = [Layout("COPY_ON_WRITE", "hive"), Layout("MERGE_ON_READ", "plain"), Layout("MERGE_ON_READ", "none")]


def both_read(oracle: HudiOracle, path: Path, options: dict[str, str], what: str) -> list[dict]:
    """Apache Hudi's rows, checked equal to hoodie's."""
    ours = rows(hoodie.read(str(path), options))
    theirs = rows(oracle.read(path, options))
    assert theirs == ours, f"Apache Hudi {oracle.setup.hudi_version} and hoodie differ on the {what}"
    return ours


def check_reads(oracle: HudiOracle, path: Path, layout: Layout, model: Model, instants: list[str], step: str) -> None:
    snapshot = both_read(oracle, path, {}, f"snapshot after {step}")
    assert data(snapshot) == model_rows(model.rows.values()), f"snapshot after {step}"
    if layout.is_mor:  # (on copy-on-write it is the snapshot)
        both_read(oracle, path, {"hoodie.datasource.query.type": "read_optimized"}, f"read-optimized read after {step}")
    if len(instants) > 1:
        begin, end = instants[-2], instants[-1]
        pulled = both_read(oracle, path, {
            "hoodie.datasource.query.type": "incremental",
            "hoodie.datasource.read.begin.instanttime": begin,
            "hoodie.datasource.read.end.instanttime": end,
        }, f"incremental pull of {step}")
        assert {r["uuid"] for r in pulled} == model.changed[end], f"incremental pull of {step}"
        before = both_read(oracle, path, {"as.of.instant": begin}, f"time travel to before {step}")
        assert data(before) == model_rows(model.as_of[begin].values())


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
