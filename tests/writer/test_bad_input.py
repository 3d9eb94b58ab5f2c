"""Bad input raises a clear error naming the offending value, and leaves the table as it
was: same timeline, same files, same rows."""
from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest
from table_options import trip_options

import hoodie
from hoodie.errors import ConfigError, HoodieError, RecordError, SchemaError, TableError

OPTS = trip_options()


def good() -> pa.Table:
    return pa.table({"uuid": ["a", "b"], "city": ["sf", "nyc"], "ts": [1, 2], "fare": [1.0, 2.0]})


def state(path: str) -> tuple[list[str], list[str]]:
    root = Path(path)
    files = sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file() and ".temp" not in p.parts)
    return files, sorted(hoodie.read(path).column("uuid").to_pylist())


CASES = {
    "null key": (pa.table({"uuid": ["c", None], "city": ["sf", "sf"], "ts": [1, 1], "fare": [1.0, 1.0]}), {}, RecordError, r"'uuid' is null in row 1"),
    "empty key": (pa.table({"uuid": ["", "d"], "city": ["sf", "sf"], "ts": [1, 1], "fare": [1.0, 1.0]}), {}, RecordError, r"'uuid' is empty in row 0"),
    "missing key column": (pa.table({"id": ["c"], "city": ["sf"], "ts": [1], "fare": [1.0]}), {}, HoodieError, r"uuid"),
    "missing precombine column": (pa.table({"uuid": ["c"], "city": ["sf"], "fare": [1.0]}), {}, HoodieError, r"'ts'"),
    "missing partition column": (
        pa.table({"uuid": ["c"], "ts": [1], "fare": [1.0]}),
        {"hoodie.datasource.write.partitionpath.field": "city"},
        HoodieError,
        r"'city'",
    ),
    "dropped column": (pa.table({"uuid": ["c"], "city": ["sf"], "ts": [1]}), {}, SchemaError, r"missing column 'fare'"),
    "retyped column": (
        pa.table({"uuid": ["c"], "city": ["sf"], "ts": [1], "fare": ["cheap"]}),
        {},
        SchemaError,
        r"column 'fare' has type string in the batch but double",
    ),
    "different table name": (good(), {"hoodie.table.name": "other"}, TableError, r"holds table 'trips', not 'other'"),
    "different record key": (good(), {"hoodie.datasource.write.recordkey.field": "fare"}, TableError, r"recordkey.field='fare'"),
    "unknown option": (
        good(),
        {"hoodie.datasource.write.recordkey.feild": "uuid"},
        ConfigError,
        r"unknown option hoodie.datasource.write.recordkey.feild; did you mean hoodie.datasource.write.recordkey.field",
    ),
    "bad option value": (good(), {"hoodie.datasource.write.operation": "upsrt"}, ConfigError, r"'upsrt'"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_bad_input_is_rejected_and_table_unchanged(tmp_path: Path, case: str) -> None:
    path = str(tmp_path / "t")
    hoodie.write(good(), path, OPTS)
    before = state(path)
    batch, extra, error, message = CASES[case]
    with pytest.raises(error, match=message):
        hoodie.write(batch, path, {**OPTS, **extra})
    assert state(path) == before


def test_creating_without_table_name_or_key_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="hoodie.table.name"):
        hoodie.write(good(), str(tmp_path / "a"), {"hoodie.datasource.write.recordkey.field": "uuid"})
    with pytest.raises(ConfigError, match="hoodie.datasource.write.recordkey.field"):
        hoodie.write(good(), str(tmp_path / "b"), {"hoodie.table.name": "t"})
    assert not (tmp_path / "a" / ".hoodie").exists()


def test_reading_a_path_without_a_table(tmp_path: Path) -> None:
    with pytest.raises(TableError, match=str(tmp_path)):
        hoodie.read(str(tmp_path))


def test_column_widening_and_new_columns_are_allowed(tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    hoodie.write(pa.table({"uuid": ["a"], "city": ["sf"], "ts": pa.array([1], pa.int32()), "fare": [1.0]}), path, OPTS)
    hoodie.write(pa.table({"uuid": ["b"], "city": ["sf"], "ts": pa.array([2], pa.int64()), "fare": [2.0], "tip": [0.5]}), path, OPTS)
    out = hoodie.read(path).sort_by("uuid")
    assert out.schema.field("ts").type == pa.int64()
    assert out.column("tip").to_pylist() == [None, 0.5]
