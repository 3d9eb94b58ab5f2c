"""Test plugin: Apache Hudi as an oracle, for any test that takes these fixtures.

``hudi_setup(version)`` (session): the fetched bundle and interpreter of that Hudi version
(for a JVM of one's own, e.g. Apache Hudi's timeline server). ``hudi_oracle(version)``
(session): the running :class:`HudiOracle` of that Hudi version, started once per test
run (one version's process stops when the next one starts) and stopped at its end;
fetched on first use by ``scripts/oracle_setup.sh``. Without Maven Central or PyPI every
test that needs it is skipped with the reason (one line in pytest's summary). The harness
is ``tests/oracle/hudi_oracle.py``; tests taking these fixtures carry the ``oracle`` mark.
"""
from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

# the harness lives with the oracle tests
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "oracle"))

from hudi_oracle import HudiOracle, OracleSetup, OracleUnavailable, set_up  # noqa: E402


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

