"""Model-based test: random inserts, updates and deletes applied to a table and to a plain
Python model; after every commit the snapshot equals the model and the incremental pull
of the commit equals exactly the records it changed."""
from __future__ import annotations

import os
import random
from pathlib import Path

import pytest
from modeling import CITIES, Model, model_options, random_batch, table_rows, to_arrow

import hoodie
from hoodie.table.table import HoodieTable

SEEDS = [int(s) for s in os.environ.get("HOODIE_MODEL_SEEDS", "20261122").split(",")]


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("index_type", ["BLOOM", "SIMPLE"])
def test_random_writes_match_model(tmp_path: Path, index_type: str, seed: int) -> None:
    rng = random.Random(seed + len(index_type))
    path = str(tmp_path / "model")
    opts = model_options(index_type)
    model = Model()
    next_id = [0]
    previous: str | None = None
    for step in range(14):
        op, rows = random_batch(rng, model, next_id)
        if op == "delete":
            model.delete(rows)
            changed: set[tuple[str, str]] = set()
        else:
            changed = model.upsert(rows)
        instant = hoodie.write(to_arrow(rows), path, {**opts, "hoodie.datasource.write.operation": op})
        snap = hoodie.read(path)
        assert table_rows(snap) == model.rows, f"snapshot differs from the model after step {step} ({op})"
        assert snap.num_rows == len(model.rows), "duplicate keys in the snapshot"
        if previous is not None:
            incr = hoodie.read(path, {
                "hoodie.datasource.query.type": "incremental",
                "hoodie.datasource.read.begin.instanttime": previous,
                "hoodie.datasource.read.end.instanttime": instant,
            })
            assert set(table_rows(incr)) == changed, f"incremental pull of step {step} ({op})"
            assert set(incr.column("_hoodie_commit_time").to_pylist()) <= {instant}
        previous = instant
    table = HoodieTable.open(path)
    groups = [g for p in table.view().all_partition_paths() for g in table.view().file_groups(p)]
    assert len(groups) > len(CITIES), "sizing should have split partitions into several file groups"
