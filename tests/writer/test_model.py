"""Model-based test: random inserts, updates and deletes applied to a table and to a plain
Python model; after every commit the snapshot equals the model and the incremental pull
of the commit equals exactly the records it changed."""
from __future__ import annotations

import os
import random
from pathlib import Path

import pyarrow as pa
import pytest
from modeling import CITIES, model_options, run_write_steps

import hoodie
from hoodie.table.table import HoodieTable

SEEDS = [int(s) for s in os.environ.get("HOODIE_MODEL_SEEDS", "20261122").split(",")]


# direct markers and local views; or the timeline server's markers and views, its views
# kept in each store (SPILLABLE_DISK with room for a few listings only, so that it spills)
SERVED = [("DIRECT", "MEMORY")] + [("TIMELINE_SERVER_BASED", store) for store in ("MEMORY", "SPILLABLE_DISK", "EMBEDDED_KV_STORE")]


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("index_type", ["BLOOM", "SIMPLE"])
@pytest.mark.parametrize(("markers", "view_store"), SERVED)
def test_random_writes_match_model(tmp_path: Path, index_type: str, seed: int, markers: str, view_store: str) -> None:
    rng = random.Random(seed + len(index_type))
    path = str(tmp_path / "model")

    def incremental(begin: str, end: str) -> pa.Table:
        return hoodie.read(path, {
            "hoodie.datasource.query.type": "incremental",
            "hoodie.datasource.read.begin.instanttime": begin,
            "hoodie.datasource.read.end.instanttime": end,
        })

    opts = {
        **model_options(index_type),
        "hoodie.write.markers.type": markers,
        "hoodie.filesystem.view.type": view_store,
        "hoodie.filesystem.view.spillable.mem": "600",
        "hoodie.filesystem.view.rocksdb.base.path": str(tmp_path / "rocksdb"),
    }
    run_write_steps(rng, 14, opts, lambda batch, opts: hoodie.write(batch, path, opts), lambda: hoodie.read(path), incremental)
    table = HoodieTable.open(path)
    groups = [g for p in table.view().all_partition_paths() for g in table.view().file_groups(p)]
    assert len(groups) > len(CITIES), "sizing should have split partitions into several file groups"
