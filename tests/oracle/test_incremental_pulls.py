"""Incremental pulls on merge-on-read whose range holds a compaction, hoodie against Apache
Hudi 0.15 and 1.2: an update with a smaller ordering value than the stored record (a
stale update) after a compaction in the range, one before it, a compaction of only some
file groups, and deletes in the range below and after a compaction. hoodie writes the
tables (inline compaction every two delta commits); Apache Hudi's pulls and hoodie's are
the same rows, meta columns included (docs/apache-hudi.md).
"""
from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hudi_oracle import HUDI_0_15, HUDI_1, HudiOracle
from oracle_reads import both_read
from sequences import Layout, batch, record

import hoodie
from hoodie.table.table import HoodieTable

#: compaction inline every two delta commits; no cleaning, so every range can be read
COMPACTION = {"hoodie.compact.inline": "true", "hoodie.compact.inline.max.delta.commits": "2", "hoodie.clean.automatic": "false"}


def _pull(begin: str, end: str | None = None) -> dict[str, str]:
    options = {"hoodie.datasource.query.type": "incremental", "hoodie.datasource.read.begin.instanttime": begin}
    return options if end is None else {**options, "hoodie.datasource.read.end.instanttime": end}


def _versions(read: list[dict[str, Any]]) -> list[tuple[str, int, str]]:
    return sorted((r["uuid"], r["ts"], r["_hoodie_commit_time"]) for r in read)


@pytest.mark.parametrize("version", [HUDI_0_15, HUDI_1])
def test_a_stale_update_after_a_compaction_in_the_pull(version: str, hudi_oracle: Callable[[str], HudiOracle], tmp_path: Path) -> None:
    oracle = hudi_oracle(version)
    path = tmp_path / "table"
    options = Layout("MERGE_ON_READ", "none").options("stale", **COMPACTION, **{"hoodie.datasource.write.operation": "upsert"})
    hoodie.write(batch([record(0, 5), record(1, 5)]), str(path), options)
    second = hoodie.write(batch([record(1, 6)]), str(path), options)  # a log; then the inline compaction
    assert any(i.action == "commit" for i in HoodieTable.open(str(path)).timeline.completed_writes())
    stale = hoodie.write(batch([record(0, 1)]), str(path), options)  # k000 stays at ts 5
    # the range holds the compaction and the stale update: both pull k000 as the stale
    # update wrote it; the compacted version of k000 was committed before the range
    pulled = both_read(oracle, path, _pull(second), "incremental pull over a compaction")
    assert pulled is not None and _versions(pulled) == [("k000", 1, stale)]


def _orderings(path: Path) -> dict[str, str]:
    """hoodie writes a table (partitions sf and la, compaction every two delta commits) with
    a delete below a compaction, a compaction of only some file groups, stale updates
    before and after compactions and a delete after one; the instants by name."""
    options = Layout("MERGE_ON_READ", "plain").options("orderings", **COMPACTION)

    def write(op: str, records: list[dict[str, Any]]) -> str:
        return hoodie.write(batch(records), str(path), {**options, "hoodie.datasource.write.operation": op})

    at = {"inserted": write("upsert", [record(0, 5), record(3, 5), record(6, 5)])}  # all in sf
    at["deleted"] = write("delete", [record(6, 9)])  # then a compaction of sf
    at["updated"] = write("upsert", [record(0, 6), record(1, 5)])  # a log in sf; la's first base file
    at["stale"] = write("upsert", [record(0, 1), record(3, 1)])  # then a compaction of sf only (la has no log)
    at["stale_la"] = write("upsert", [record(1, 1), record(0, 2)])
    at["deleted_after"] = write("delete", [record(3, 9)])  # then a compaction of both
    first, second, third = sorted(i.timestamp for i in HoodieTable.open(str(path)).timeline.completed_writes() if i.action == "commit")
    at.update(compacted=first, compacted_sf=second, compacted_both=third)
    return at


@pytest.mark.parametrize("version", [HUDI_0_15, HUDI_1])
def test_pulls_over_stale_updates_deletes_and_compactions(version: str, hudi_oracle: Callable[[str], HudiOracle], tmp_path: Path) -> None:
    """Stale updates before and after compactions, a compaction of only some file groups,
    deletes below and after a compaction: for ranges that end before or after each, Apache
    Hudi and hoodie pull the same rows, meta columns included."""
    oracle = hudi_oracle(version)
    path = tmp_path / "table"
    at = _orderings(path)
    ranges = [
        ("000", None), (at["inserted"], None),
        (at["inserted"], at["compacted"]),  # a delete below a compaction
        (at["updated"], at["stale"]),  # stale updates of sf, before its compaction
        (at["updated"], at["compacted_sf"]),  # ... and the compaction folding them away
        (at["compacted_sf"], at["stale_la"]),  # after a compaction of sf only: stale updates in both groups
        (at["stale"], at["deleted_after"]),  # ... and a delete of a compacted key
        (at["stale"], at["compacted_both"]),  # ... and the compaction folding them away
    ]
    pulled = {}
    for begin, end in ranges:
        read = both_read(oracle, path, _pull(begin, end), f"incremental pull over ({begin}, {end or 'latest'}]")
        assert read is not None
        pulled[(begin, end)] = _versions(read)
    stale, stale_la = at["stale"], at["stale_la"]
    # a stale update is pulled as written while the latest slice of the range's end holds
    # it in a log, whether a compaction came before it or not, and whichever file group
    assert pulled[(at["updated"], at["stale"])] == [("k000", 1, stale), ("k003", 1, stale)]
    assert pulled[(at["compacted_sf"], at["stale_la"])] == [("k000", 2, stale_la), ("k001", 1, stale_la)]
    assert pulled[(at["stale"], at["deleted_after"])] == [("k000", 2, stale_la), ("k001", 1, stale_la)]
    # a compaction in the range that folded it into a base file where the stored version
    # won leaves it out: the latest slice no longer holds it (Apache Hudi reads so too)
    assert pulled[(at["updated"], at["compacted_sf"])] == []
    assert pulled[(at["stale"], at["compacted_both"])] == []
    assert pulled[(at["inserted"], at["compacted"])] == []
