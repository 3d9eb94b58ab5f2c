"""The reads every oracle test compares after each write: snapshot, read-optimized (on
merge-on-read), the incremental pull of the last write and time travel to before it,
each by Apache Hudi and by hoodie (meta columns included), and against the model."""
from __future__ import annotations

from pathlib import Path
from typing import Any

from hudi_oracle import Completed, HudiOracle
from sequences import Layout, Model, data, differences, model_rows, rows

import hoodie
from hoodie.config.properties import parse_properties


def log_files(path: Path) -> list[Path]:
    """The log files under a table's partitions (not its metadata table's)."""
    return [p for p in path.rglob(".*.log.*") if ".hoodie" not in p.relative_to(path).parts and not p.name.endswith(".crc")]


def table_version(path: Path) -> int:
    """``hoodie.table.version`` of the table at ``path``."""
    return int(parse_properties((path / ".hoodie" / "hoodie.properties").read_text())["hoodie.table.version"])


def both_read(oracle: HudiOracle, path: Path, options: dict[str, str], what: str) -> list[dict[str, Any]]:
    """hoodie's rows, checked equal to Apache Hudi's."""
    ours = rows(hoodie.read(str(path), options))
    theirs = rows(oracle.read(path, options))
    assert theirs == ours, f"Apache Hudi {oracle.setup.hudi_version} (left) and hoodie differ on the {what}:\n{differences(theirs, ours)}"
    return ours


def check_reads(oracle: HudiOracle, path: Path, layout: Layout, model: Model, writes: list[Completed], step: str) -> None:
    """After ``step``, the last of ``writes``: every read agrees. The incremental pull
    names the range by completion times (the instant times on table version 6)."""
    snapshot = both_read(oracle, path, {}, f"snapshot after {step}")
    expected = model_rows(model.rows.values())
    assert data(snapshot) == expected, f"snapshot after {step} (left) differs from the model:\n{differences(data(snapshot), expected)}"
    if layout.is_mor:  # (on copy-on-write it is the snapshot)
        both_read(oracle, path, {"hoodie.datasource.query.type": "read_optimized"}, f"read-optimized read after {step}")
    if len(writes) > 1:
        previous, last = writes[-2], writes[-1]
        pulled = both_read(oracle, path, {
            "hoodie.datasource.query.type": "incremental",
            "hoodie.datasource.read.begin.instanttime": previous.completion,
            "hoodie.datasource.read.end.instanttime": last.completion,
        }, f"incremental pull of {step}")
        pulled_keys = {r["uuid"] for r in pulled}
        assert pulled_keys == model.changed[last.instant], (
            f"incremental pull of {step}: only pulled {sorted(pulled_keys - model.changed[last.instant])}, "
            f"only in the model {sorted(model.changed[last.instant] - pulled_keys)}"
        )
        before = both_read(oracle, path, {"as.of.instant": previous.instant}, f"time travel to before {step}")
        expected = model_rows(model.as_of[previous.instant].values())
        assert data(before) == expected, f"time travel to before {step} (left) differs from the model:\n{differences(data(before), expected)}"
