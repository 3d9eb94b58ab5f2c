"""Test plugin: the ONE local SparkSession of a test run (``spark``, session-scoped).

Every Spark test takes this fixture (``hoodie.spark.local_session``, 2 cores), so the JVM
starts once, whichever folder the test lives in.
"""
from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest


@pytest.fixture(scope="session")
def spark() -> Iterator[Any]:
    from hoodie.spark import local_session

    session = local_session("hoodie-tests")
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()
