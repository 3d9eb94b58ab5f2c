"""Test helper: partition values that must never become paths outside a table, the trips
batches and options that carry them, a neighbouring table to threaten (the ``neighbourhood`` fixture), a byte-level
picture of a folder tree to prove that nothing around a table changed, and a pending
clean whose plan names a file outside its table (which every clean refuses)."""
from __future__ import annotations

import hashlib
from collections.abc import Callable
from pathlib import Path

import pyarrow as pa
import pytest
from table_options import trip_options

import hoodie
from hoodie.errors import PartitionPathError
from hoodie.table.table import HoodieTable
from hoodie.timeline import avro_metadata as avro

#: Partition values refused whatever the options (encoding cannot make them safe).
ALWAYS_REFUSED = {
    "dot-dot": "..",
    "dot": ".",
    "nul": "a\x00b",
    "too-long": "x" * 300,
    "metadata-folder": ".hoodie",
}

#: Partition values refused unless hoodie.datasource.write.partitionpath.urlencode=true,
#: which turns them into one safe folder name.
REFUSED_UNLESS_ENCODED = {
    "neighbour": "../b/y",
    "absolute": "/abs",
    "climb-out": "x/../..",
    "two-up": "../../escape",
    "empty-segment": "a//b",
    "trailing-slash": "a/",
    "newline": "a\nb",
}

HOSTILE = {**ALWAYS_REFUSED, **REFUSED_UNLESS_ENCODED}


def tree_state(root: Path) -> dict[str, tuple[int, str]]:
    """Every file under ``root`` with its size and content digest, and every folder."""
    out: dict[str, tuple[int, str]] = {}
    for p in sorted(root.rglob("*")):
        rel = str(p.relative_to(root))
        if p.is_dir():
            out[rel + "/"] = (0, "")
        else:
            data = p.read_bytes()
            out[rel] = (len(data), hashlib.sha256(data).hexdigest())
    return out


TABLE_TYPES = {"cow": "COPY_ON_WRITE", "mor": "MERGE_ON_READ"}


def hostile_options(table_type: str, hive: bool, **extra: str) -> dict[str, str]:
    """Trips options for ``table_type`` ("cow" or "mor"), hive-style partitioning on or off."""
    return trip_options(**{
        "hoodie.datasource.write.table.type": TABLE_TYPES[table_type],
        "hoodie.datasource.write.hive_style_partitioning": str(hive).lower(),
        "hoodie.index.bloom.num_entries": "1000",
        **extra,
    })


def trips(cities: list[str], ts: int = 1) -> pa.Table:
    """One trip per city, keyed ``k0``, ``k1``, ..."""
    n = len(cities)
    return pa.table({"uuid": [f"k{i}" for i in range(n)], "city": cities, "ts": [ts] * n, "fare": [float(i) for i in range(n)]})


@pytest.fixture
def neighbourhood(tmp_path: Path) -> Path:
    """``work``, holding ``b``: a table with two rows in partition ``y`` (where ``../b/y``
    points from a table ``work/a``)."""
    work = tmp_path / "work"
    hoodie.write(
        pa.table({"uuid": ["b1", "b2"], "city": ["y", "y"], "ts": [1, 1], "fare": [1.0, 2.0]}), str(work / "b"), trip_options(**{"hoodie.table.name": "b"})
    )
    return work


def expect_refused(value: str, call: Callable[[], object]) -> None:
    """``call`` raises a :class:`PartitionPathError` naming ``value``, the field ``city``
    and the record key ``k1``."""
    with pytest.raises(PartitionPathError) as info:
        call()
    message = str(info.value)
    assert repr(value)[:60].rstrip("'") in message and "'city'" in message and "record key 'k1'" in message, message


def forge_clean_outside(table_path: Path, victim: Path) -> str:
    """Leave a requested clean in the table at ``table_path`` whose plan deletes
    ``victim``, a file outside the table: every clean refuses it with an
    :class:`~hoodie.errors.UnsafePathError` naming the clean and the file. Returns the
    clean's instant."""
    timeline = HoodieTable.open(str(table_path)).timeline
    instant = timeline.new_instant_time()
    plan = {
        "earliestInstantToRetain": None, "lastCompletedCommitTimestamp": timeline.completed_writes()[-1].timestamp,
        "policy": "KEEP_LATEST_COMMITS", "filesToBeDeletedPerPartition": None, "version": 2, "partitionsToBeDeleted": [],
        "extraMetadata": {}, "filePathsToBeDeletedPerPartition": {"": [{"filePath": str(victim), "isBootstrapBaseFile": False}]},
    }
    (table_path / ".hoodie" / f"{instant}.clean.requested").write_bytes(avro.encode(avro.CLEANER_PLAN, plan))
    return instant
