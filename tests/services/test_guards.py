"""Services refuse tables hoodie cannot write (versions 8 and 9) before touching anything,
and bad service options are refused before a write commits."""
from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest

import hoodie
from hoodie.errors import ConfigError, UnsupportedTableError
from hoodie.services.archival import ArchiveSettings, archive
from hoodie.services.cleaning import clean
from hoodie.services.compaction import CompactionSettings, schedule_compaction
from hoodie.services.savepoint import create_savepoint
from hoodie.table.table import HoodieTable


def tree(path: Path) -> list[str]:
    return sorted(str(p.relative_to(path)) for p in path.rglob("*"))


def test_services_refuse_version_9_tables(conformance_table) -> None:
    path = conformance_table("sample_table/cow/v9_txns_simple_meta")
    before = tree(path)
    table = HoodieTable.open(str(path))
    for run in (
        lambda: archive(table, ArchiveSettings(min_commits=2, max_commits=3)),
        lambda: create_savepoint(table),
        lambda: clean(table),
        lambda: schedule_compaction(table, CompactionSettings(), require_threshold=False),
    ):
        with pytest.raises(UnsupportedTableError, match="version 9 table"):
            run()
    assert tree(path) == before


@pytest.mark.parametrize("option, value, message", [
    ("hoodie.keep.min.commits", "40", "must be greater than hoodie.keep.min.commits"),
    ("hoodie.cleaner.commits.retained", "0", "invalid value '0' for option hoodie.cleaner.commits.retained: expected an integer from 1"),
    ("hoodie.compact.inline.max.delta.commits", "0", "invalid value '0' for option hoodie.compact.inline.max.delta.commits: expected an integer from 1"),
])
def test_bad_service_options_are_refused_before_the_write(tmp_path: Path, option: str, value: str, message: str) -> None:
    path = str(tmp_path / "t")
    opts = {"hoodie.table.name": "t", "hoodie.datasource.write.recordkey.field": "k"}
    hoodie.write(pa.table({"k": ["a"]}), path, opts)
    with pytest.raises(ConfigError, match=message):
        hoodie.write(pa.table({"k": ["b"]}), path, {**opts, option: value})
    assert hoodie.read(path).column("k").to_pylist() == ["a"]
