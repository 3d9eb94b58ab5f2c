"""Fixtures of the Apache Hudi oracle tests (every test here carries the ``oracle`` mark).

``hudi_oracle(version)`` (session): the running :class:`HudiOracle` of that Hudi version,
started once per test run and stopped at its end; fetched on first use by
``scripts/oracle_setup.sh``. Without Maven Central or PyPI every test that needs it is
skipped with the reason (one line in pytest's summary). ``hudi015`` and ``hudi1`` are
the two versions the tests use: 0.15.0 (table version 6, as hoodie writes) and 1.2.0
(table version 9).
"""
from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

# the harness and the sequences are plain modules beside this file
sys.path.insert(0, str(Path(__file__).resolve().parent))

from hudi_oracle import HUDI_0_15, HUDI_1, HudiOracle, OracleSetup, OracleUnavailable, set_up  # noqa: E402


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    here = Path(__file__).parent
    for item in items:
        if here in Path(item.path).parents:
            item.add_marker(pytest.mark.oracle)


@pytest.fixture(scope="session")
def hudi_oracle(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Callable[[str], HudiOracle]]:
    setups: dict[str, OracleSetup | str] = {}  # a set-up, or why there is none
    started: dict[str, HudiOracle] = {}

    def get(version: str) -> HudiOracle:
        if version not in setups:
            try:
                setups[version] = set_up(version)
            except OracleUnavailable as exc:
                setups[version] = f"Apache Hudi {version} not available: {exc}"
        setup = setups[version]
        if isinstance(setup, str):
            pytest.skip(setup)
        if version not in started or not started[version].running:
            # (again after a request timed out and killed it: the next test gets a new one)
            started[version] = HudiOracle(setup, tmp_path_factory.mktemp(f"hudi-{version}"))
        return started[version]

    yield get
    for oracle in started.values():
        oracle.close()


@pytest.fixture
def hudi015(hudi_oracle: Callable[[str], HudiOracle]) -> HudiOracle:
    return hudi_oracle(HUDI_0_15)


@pytest.fixture
def hudi1(hudi_oracle: Callable[[str], HudiOracle]) -> HudiOracle:
    return hudi_oracle(HUDI_1)
