"""Fixtures for write-path tests: table options and readers (hoodie and hudi-rs)."""
from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from readers import hudi_rs_table

import hoodie

META = ("_hoodie_commit_time", "_hoodie_commit_seqno", "_hoodie_record_key", "_hoodie_partition_path", "_hoodie_file_name")


def rows_by_key(table: pa.Table, key: str = "_hoodie_record_key", drop_meta: bool = False) -> dict[Any, dict[str, Any]]:
    out = {}
    for row in table.to_pylist():
        k = (row.get("_hoodie_partition_path"), row[key])
        if drop_meta:
            row = {c: v for c, v in row.items() if c not in META}
        out[k] = row
    return out


@pytest.fixture
def hudi_rs_read() -> Callable[..., pa.Table]:
    """Snapshot of a table through the independent hudi-rs reader (PyPI ``hudi``)."""
    return hudi_rs_table


@pytest.fixture
def table_path(tmp_path: Path) -> str:
    return str(tmp_path / "trips")


@pytest.fixture
def snapshot() -> Callable[[str], pa.Table]:
    return lambda path, **opts: hoodie.read(path, opts or None)
