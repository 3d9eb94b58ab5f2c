"""Fixtures over the conformance tables (real Apache Hudi tables shipped as zips).

The shared folder is ``<repo>/../shared`` unless ``HOODIE_SHARED_DIR`` says otherwise. A zip
``X.zip`` unpacks to ``X/X/``; ``__MACOSX`` entries are skipped.

Tests can ask for:

* ``conformance_tables`` (session): ``{"sample_table/cow/v6_nonpartitioned": Path, ...}``,
  each path being the unpacked table's base directory;
* ``conformance_base_file``: parametrized over every base parquet file of every zip, as a
  ``(table key, path relative to the table)`` pair (known without unzipping, so each file
  is its own test case);
* ``conformance_table_key``: parametrized over every table key.
"""
from __future__ import annotations

import zipfile
from pathlib import Path

import pytest
from shared import cases_or_skip, no_conformance_reason, shared_dir


def _tables_dir() -> Path:
    return shared_dir() / "conformance" / "tables"


def _zips() -> list[Path]:
    root = _tables_dir()
    return sorted(root.rglob("*.zip")) if root.is_dir() else []


def _table_key(zip_path: Path) -> str:
    return zip_path.relative_to(_tables_dir()).with_suffix("").as_posix()


def _useful_members(zf: zipfile.ZipFile) -> list[str]:
    return [n for n in zf.namelist() if not n.startswith("__MACOSX/") and "/__MACOSX/" not in n]


def _base_parquet_members() -> list[tuple[str, str]]:
    """(table key, path inside the table) of every base parquet file (metadata table excluded)."""
    out = []
    for z in _zips():
        stem = z.stem
        prefix = f"{stem}/"
        with zipfile.ZipFile(z) as zf:
            for name in _useful_members(zf):
                if not name.endswith(".parquet") or not name.startswith(prefix):
                    continue
                rel = name[len(prefix) :]
                if rel.startswith(".hoodie/") or "/.hoodie/" in rel:
                    continue
                out.append((_table_key(z), rel))
    return out


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "conformance_base_file" in metafunc.fixturenames:
        members = _base_parquet_members()
        ids = [f"{k}:{Path(r).name[:13]}" for k, r in members]
        metafunc.parametrize("conformance_base_file", cases_or_skip(members, ids, "base files"))
    if "conformance_table_key" in metafunc.fixturenames:
        keys = [_table_key(z) for z in _zips()]
        metafunc.parametrize("conformance_table_key", cases_or_skip(keys, keys))


@pytest.fixture(scope="session")
def conformance_tables(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Unpack every conformance zip once per session; maps table key → table base path."""
    zips = _zips()
    if not zips:
        pytest.skip(no_conformance_reason())
    root = tmp_path_factory.mktemp("conformance")
    tables: dict[str, Path] = {}
    for z in zips:
        key = _table_key(z)
        dest = root / key
        dest.mkdir(parents=True)
        with zipfile.ZipFile(z) as zf:
            for name in _useful_members(zf):
                zf.extract(name, dest)
        tables[key] = dest / z.stem
    return tables
