"""A table is created only in a folder that holds no other table or files: a Delta Lake
table, an Iceberg table and a folder of CSV files are each refused with an error naming
what was found, left byte for byte as they were, and accepted with the explicit option."""
from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pyarrow as pa
import pytest
from table_options import trip_options

import hoodie
from hoodie.errors import TableError

ALLOW = "hoodie.table.create.allow.foreign.files"


def batch() -> pa.Table:
    return pa.table({"uuid": ["a", "b"], "city": ["sf", "nyc"], "ts": [1, 2], "fare": [1.0, 2.0]})


def tree(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def delta_table(path: Path) -> None:
    import deltalake

    deltalake.write_deltalake(str(path), pa.table({"id": [1, 2, 3]}))


def iceberg_table(path: Path) -> None:
    from pyiceberg.catalog.sql import SqlCatalog

    catalog = SqlCatalog("local", uri=f"sqlite:///{path.parent / 'catalog.db'}", warehouse=path.parent.as_uri())
    catalog.create_namespace("db")
    table = catalog.create_table("db.events", schema=pa.schema([pa.field("id", pa.int64())]), location=path.as_uri())
    table.append(pa.table({"id": pa.array([1, 2, 3], pa.int64())}))


def csv_files(path: Path) -> None:
    path.mkdir()
    for n in range(5):
        (path / f"part-{n}.csv").write_text("id,name\n1,a\n")


CASES: dict[str, tuple[Callable[[Path], None], str]] = {
    "delta": (delta_table, r"holds a Delta Lake table \(_delta_log/\); no Hudi table was created there"),
    "iceberg": (iceberg_table, r"holds an Iceberg table \(metadata/[^)]*\.metadata\.json\)"),
    "csv": (csv_files, r"holds files that are not a Hudi table \(part-0\.csv, part-1\.csv, part-2\.csv and 2 more\)"),
}


@pytest.mark.parametrize("kind", CASES)
def test_a_folder_holding_something_else_is_refused_untouched_then_accepted_on_request(tmp_path: Path, kind: str) -> None:
    make, message = CASES[kind]
    home = tmp_path / "home"
    make(home)
    before = tree(home)
    with pytest.raises(TableError, match=message) as err:
        hoodie.write(batch(), str(home), trip_options())
    assert f"set {ALLOW}=true" in str(err.value)
    assert tree(home) == before
    assert not (home / ".hoodie").exists()

    hoodie.write(batch(), str(home), {**trip_options(), ALLOW: "true"})
    assert sorted(hoodie.read(str(home)).column("uuid").to_pylist()) == ["a", "b"]
    after = tree(home)
    assert {name: data for name, data in after.items() if name in before} == before
    if kind == "delta":
        import deltalake

        assert deltalake.DeltaTable(str(home)).to_pyarrow_table().num_rows == 3


def test_empty_folder_and_an_interrupted_create_are_a_home(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    hoodie.write(batch(), str(tmp_path / "empty"), trip_options())
    (tmp_path / "half" / ".hoodie" / ".aux").mkdir(parents=True)  # a create cut off before hoodie.properties
    hoodie.write(batch(), str(tmp_path / "half"), trip_options())
    assert hoodie.read(str(tmp_path / "half")).num_rows == 2


def test_an_existing_hudi_table_is_not_foreign(tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    hoodie.write(batch(), path, trip_options())
    hoodie.write(batch(), path, trip_options())  # its partition folders are its own
    assert hoodie.read(path).num_rows == 2
