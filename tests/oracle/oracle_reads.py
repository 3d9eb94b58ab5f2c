"""The reads every oracle test compares after each write: snapshot, read-optimized (on
merge-on-read), the incremental pull of the last write and time travel to before it,
each by Apache Hudi and by hoodie (meta columns included), and against the model."""
from __future__ import annotations

from pathlib import Path
from typing import Any

from hudi_oracle import HudiOracle
from sequences import Layout, Model, data, model_rows, rows

import hoodie


def log_files(path: Path) -> list[Path]:
    """The log files under a table's partitions (not its metadata table's)."""
    return [p for p in path.rglob(".*.log.*") if ".hoodie" not in p.relative_to(path).parts and not p.name.endswith(".crc")]


def both_read(oracle: HudiOracle, path: Path, options: dict[str, str], what: str) -> list[dict[str, Any]]:
    """hoodie's rows, checked equal to Apache Hudi's."""
    ours = rows(hoodie.read(str(path), options))
    theirs = rows(oracle.read(path, options))
    assert theirs == ours, f"Apache Hudi {oracle.setup.hudi_version} and hoodie differ on the {what}"
    return ours


def check_reads(oracle: HudiOracle, path: Path, layout: Layout, model: Model, instants: list[str], step: str) -> None:
    """After ``step``, whose instant ends ``instants``: every read agrees."""
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
        assert data(before) == model_rows(model.as_of[begin].values()), f"time travel to before {step}"
