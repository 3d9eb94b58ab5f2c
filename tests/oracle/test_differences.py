"""Known differences between hoodie and Apache Hudi (docs/apache-hudi.md), each a strict
expected failure: the day hoodie reads as Apache Hudi does, the test passes and says so."""
from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from hudi_oracle import HUDI_0_15, HudiOracle
from oracle_reads import both_read, completed_actions
from sequences import SERVICES, Layout, batch, record

import hoodie


@pytest.mark.xfail(strict=True, reason="incremental pull over a compaction: hoodie merges as hudi-rs does (docs/apache-hudi.md)")
@pytest.mark.parametrize("version", [HUDI_0_15])
def test_a_stale_update_after_a_compaction_in_the_pull(version: str, hudi_oracle: Callable[[str], HudiOracle], tmp_path: Path) -> None:
    oracle = hudi_oracle(version)
    path = tmp_path / "table"
    options = Layout("MERGE_ON_READ", "none").options("stale", **SERVICES, **{"hoodie.datasource.write.operation": "upsert"})
    hoodie.write(batch([record(0, 5), record(1, 5)]), str(path), options)
    second = hoodie.write(batch([record(1, 6)]), str(path), options)  # a log; then the inline compaction
    assert "commit" in completed_actions(path)
    hoodie.write(batch([record(0, 1)]), str(path), options)  # stale: k000 stays at ts 5
    pull = {"hoodie.datasource.query.type": "incremental", "hoodie.datasource.read.begin.instanttime": second}
    # the range holds the compaction and the stale update: Apache Hudi pulls k000 as the
    # stale update wrote it (ts 1); hoodie merges it with the compacted base file, whose
    # version wins and is older than the range, so it pulls nothing
    both_read(oracle, path, pull, "incremental pull over a compaction")
