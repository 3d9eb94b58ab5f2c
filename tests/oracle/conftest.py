"""Fixtures of the Apache Hudi oracle tests (every test here carries the ``oracle`` mark).

``hudi_setup(version)`` (session): the fetched bundle and interpreter of that Hudi version
(for a JVM of one's own, e.g. Apache Hudi's timeline server). ``hudi_oracle(version)``
(session): the running :class:`HudiOracle` of that Hudi version,
started once per test run (tests run one version after the other, and one version's
process stops when the next one starts) and stopped at its end; fetched on first use by
``scripts/oracle_setup.sh``. Without Maven Central or PyPI every test that needs it is
skipped with the reason (one line in pytest's summary). A test names its version in a
``version`` parameter: ``HUDI_0_15`` or ``HUDI_1`` (see ``hudi_oracle.py``).
"""
from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

# the harness and the sequences are plain modules beside this file
sys.path.insert(0, str(Path(__file__).resolve().parent))

from hudi_oracle import HudiOracle, OracleSetup, OracleUnavailable, set_up  # noqa: E402


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    here = Path(__file__).parent
    slots = [i for i, item in enumerate(items) if here in Path(item.path).parents]
    for i in slots:
        items[i].add_marker(pytest.mark.oracle)
    # one Hudi version after the other (in their own slots), so that each JVM starts once
    ordered = sorted((items[i] for i in slots), key=_version_of)
    for i, item in zip(slots, ordered):
        items[i] = item


def _version_of(item: pytest.Item) -> str:
    callspec = getattr(item, "callspec", None)
    return str(callspec.params.get("version", "")) if callspec else ""


@pytest.fixture(scope="session")
def hudi_setup() -> Callable[[str], OracleSetup]:
    """The fetched bundle and interpreter of a Hudi version (the test skips without them)."""
    setups: dict[str, OracleSetup | str] = {}  # a set-up, or why there is none

    def get(version: str) -> OracleSetup:
        if version not in setups:
            try:
                setups[version] = set_up(version)
            except OracleUnavailable as exc:
                setups[version] = f"Apache Hudi {version} not available: {exc}"
        setup = setups[version]
        if isinstance(setup, str):
            pytest.skip(setup)
        return setup

    return get


@pytest.fixture(scope="session")
def hudi_oracle(tmp_path_factory: pytest.TempPathFactory, hudi_setup: Callable[[str], OracleSetup]) -> Iterator[Callable[[str], HudiOracle]]:
    started: dict[str, HudiOracle] = {}

    def get(version: str) -> HudiOracle:
        setup = hudi_setup(version)
        if version not in started or not started[version].running:
            # one JVM at a time on a small machine: the other version's stops
            for other in list(started):
                started.pop(other).close()
            # (again after a request timed out and killed it: the next test gets a new one)
            started[version] = HudiOracle(setup, tmp_path_factory.mktemp(f"hudi-{version}"))
        return started[version]

    yield get
    for oracle in started.values():
        oracle.close()

