"""Shared test helpers: the conformance tables (real Apache Hudi tables shipped as zips).

The shared folder is ``<repo>/../shared`` unless ``HOODIE_SHARED_DIR`` names another one.
Each ``tables/**/X.zip`` holds a table directory ``X/`` (``__MACOSX`` entries are skipped);
a table is named by its zip's path under ``tables/`` without ``.zip``, for example
``sample_table/cow/v6_nonpartitioned``.

* ``conformance_dir`` (session): the ``conformance`` folder; skips when it is missing.
* ``conformance_table(name)``: unzips a table once per session and returns its base path;
  ``name`` is a table name, a :class:`ConformanceTable`, or a bare zip stem when unique.
* ``conformance_case``: a test taking this argument runs once per table, as a
  :class:`ConformanceTable`; ``@pytest.mark.conformance(table_type=..., versions=...)``
  narrows the tables (both optional).
* ``conformance_catalog`` (session) / :func:`list_conformance_tables`: every zip with its
  version and type, read from ``hoodie.properties`` inside the zip (no unzipping).
"""
from __future__ import annotations

import sys
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from hoodie.config.properties import parse_properties

TABLE_MARKER = "conformance"

# Shared test helpers (the model of a table, ...) are plain modules in tests/support.
sys.path.insert(0, str(Path(__file__).resolve().parent / "support"))
# ... and those that hold fixtures are plugins, so every test can take them
pytest_plugins = ["hostile_paths", "spark_session", "oracle_fixtures"]

from shared import cases_or_skip, shared_dir  # noqa: E402  (found through the path above)


@dataclass(frozen=True)
class ConformanceTable:
    """One conformance zip: ``name`` (path under ``tables/`` without ``.zip``) and the
    table's identity from its ``hoodie.properties``."""

    name: str
    zip_path: Path
    table_version: int
    table_type: str
    properties: tuple[tuple[str, str], ...]

    @property
    def stem(self) -> str:
        return self.zip_path.stem

    @property
    def props(self) -> dict[str, str]:
        return dict(self.properties)

    @property
    def is_cow(self) -> bool:
        return self.table_type == "COPY_ON_WRITE"

    def __str__(self) -> str:
        return self.name


def _members(zf: zipfile.ZipFile) -> list[str]:
    return [n for n in zf.namelist() if not n.startswith("__MACOSX/") and "/__MACOSX/" not in n]


def list_conformance_tables(root: Path | None = None) -> list[ConformanceTable]:
    """Every table zip under ``<shared>/conformance/tables``, sorted by name."""
    tables_dir = (root or shared_dir() / "conformance") / "tables"
    if not tables_dir.is_dir():
        return []
    out = []
    for z in sorted(tables_dir.rglob("*.zip")):
        with zipfile.ZipFile(z) as zf:
            props_name = f"{z.stem}/.hoodie/hoodie.properties"
            props = parse_properties(zf.read(props_name).decode("utf-8")) if props_name in _members(zf) else {}
        out.append(
            ConformanceTable(
                name=z.relative_to(tables_dir).with_suffix("").as_posix(),
                zip_path=z,
                table_version=int(props.get("hoodie.table.version", "0")),
                table_type=props.get("hoodie.table.type", "COPY_ON_WRITE"),
                properties=tuple(sorted(props.items())),
            )
        )
    return out


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        f"{TABLE_MARKER}(table_type=None, versions=None): run a test taking `conformance_case` "
        "once per conformance table of that type and those table versions",
    )


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "conformance_case" not in metafunc.fixturenames:
        return
    marker = metafunc.definition.get_closest_marker(TABLE_MARKER)
    table_type = marker.kwargs.get("table_type") if marker else None
    versions = marker.kwargs.get("versions") if marker else None
    cases = [
        t for t in list_conformance_tables()
        if (table_type is None or t.table_type == table_type) and (versions is None or t.table_version in versions)
    ]
    narrowed = ", ".join(f"{k}={v}" for k, v in (("table_type", table_type), ("versions", versions)) if v is not None)
    what = f"tables ({narrowed})" if narrowed else "tables"
    metafunc.parametrize("conformance_case", cases_or_skip(cases, [t.name for t in cases], what))


@pytest.fixture(scope="session")
def conformance_dir() -> Path:
    """``<shared>/conformance``; the test is skipped when it is not there."""
    path = shared_dir() / "conformance"
    if not path.is_dir():
        pytest.skip(f"conformance data not found at {path} (set HOODIE_SHARED_DIR)")
    return path


@pytest.fixture(scope="session")
def conformance_catalog(conformance_dir: Path) -> list[ConformanceTable]:
    """Every conformance table zip with its version and type."""
    return list_conformance_tables(conformance_dir)


@pytest.fixture(scope="session")
def conformance_table(
    conformance_dir: Path, tmp_path_factory: pytest.TempPathFactory
) -> Callable[[str | ConformanceTable], Path]:
    """Factory: base path of an unzipped conformance table (each zip unzipped once)."""
    tables = {t.name: t for t in list_conformance_tables(conformance_dir)}
    root = tmp_path_factory.mktemp("conformance")
    unpacked: dict[str, Path] = {}

    def resolve(name: str | ConformanceTable) -> ConformanceTable:
        if isinstance(name, ConformanceTable):
            return name
        if name in tables:
            return tables[name]
        matches = [t for t in tables.values() if t.stem == name]
        if len(matches) == 1:
            return matches[0]
        hint = f"ambiguous, one of {[t.name for t in matches]}" if matches else "no such table"
        raise KeyError(f"conformance table {name!r}: {hint}")

    def get(name: str | ConformanceTable) -> Path:
        table = resolve(name)
        if table.name not in unpacked:
            dest = root / table.name
            dest.mkdir(parents=True, exist_ok=True)
            with zipfile.ZipFile(table.zip_path) as zf:
                for member in _members(zf):
                    zf.extract(member, dest)
            unpacked[table.name] = dest / table.stem
        return unpacked[table.name]

    return get
