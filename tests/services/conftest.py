"""Helpers for table-service tests: small COW/MOR tables written with hoodie, read back
with hoodie (snapshot and time travel) and hudi-rs, and a storage that records listings."""
from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from readers import hudi_rs_table, sorted_tuples

import hoodie
from hoodie.storage.base import FileInfo
from hoodie.storage.local import LocalStorage
from hoodie.table.table import HoodieTable

COLUMNS = ["key", "part", "ts", "val"]


@dataclass
class TableKit:
    """A test table: write batches, read rows, list data files."""

    path: str
    table_type: str
    extra: dict[str, str] = field(default_factory=dict)

    @property
    def opts(self) -> dict[str, str]:
        return {
            "hoodie.table.name": "svc",
            "hoodie.datasource.write.recordkey.field": "key",
            "hoodie.datasource.write.partitionpath.field": "part",
            "hoodie.datasource.write.precombine.field": "ts",
            "hoodie.datasource.write.table.type": self.table_type,
            "hoodie.index.bloom.num_entries": "1000",
            # the services' work on the data table, run here through the library on tables
            # opened plainly; keeping a metadata table through them is tested where it is
            # (tests/metadata_table, tests/cli/test_services_keep_the_metadata_table.py)
            "hoodie.metadata.enable": "false",
            **self.extra,
        }

    def write(self, keys: list[str], parts: list[str] | str, ts: int, operation: str | None = None, **opts: str) -> str:
        parts = [parts] * len(keys) if isinstance(parts, str) else parts
        data: dict[str, Any] = {"key": keys, "part": parts, "ts": [ts] * len(keys)}
        if operation != "delete":
            data["val"] = [float(ts)] * len(keys)
        options = {**self.opts, **opts}
        if operation:
            options["hoodie.datasource.write.operation"] = operation
        return hoodie.write(pa.table(data), self.path, options)

    def open(self) -> HoodieTable:
        return HoodieTable.open(self.path)

    def rows(self, as_of: str | None = None) -> list[tuple]:
        return sorted_tuples(hoodie.read(self.path, {"as.of.instant": as_of} if as_of else None), COLUMNS)

    def rs_rows(self) -> list[tuple]:
        return sorted_tuples(hudi_rs_table(self.path), COLUMNS)

    def data_files(self) -> set[str]:
        """Base and log files (relative paths), outside ``.hoodie``."""
        out = set()
        for d, dirs, files in os.walk(self.path):
            dirs[:] = [x for x in dirs if x != ".hoodie"]
            for f in files:
                if f.endswith(".parquet") or ".log." in f:
                    out.add(os.path.relpath(os.path.join(d, f), self.path))
        return out

    def timeline_files(self) -> list[str]:
        return sorted(f for f in os.listdir(os.path.join(self.path, ".hoodie")) if f[0].isdigit())


@pytest.fixture
def cow(tmp_path: Path) -> TableKit:
    return TableKit(str(tmp_path / "cow"), "COPY_ON_WRITE")


@pytest.fixture
def mor(tmp_path: Path) -> TableKit:
    return TableKit(str(tmp_path / "mor"), "MERGE_ON_READ")


class RecordingStorage(LocalStorage):
    """Local storage that remembers every directory it listed."""

    def __init__(self) -> None:
        super().__init__()
        self.listed: list[str] = []

    def list_dir(self, path: str) -> list[FileInfo]:
        self.listed.append(path)
        return super().list_dir(path)


@pytest.fixture
def recording_storage() -> Iterator[RecordingStorage]:
    yield RecordingStorage()
