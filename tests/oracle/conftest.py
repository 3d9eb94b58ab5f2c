"""The Apache Hudi oracle tests: every test here carries the ``oracle`` mark, and they run
one Hudi version after the other (a test names its version in a ``version`` parameter:
``HUDI_0_15`` or ``HUDI_1``, see ``hudi_oracle.py``), so that each JVM starts once.

Their fixtures ``hudi_setup`` and ``hudi_oracle`` are the plugin
``tests/support/oracle_fixtures.py`` (tests elsewhere, such as the end-to-end pipeline,
take them too).
"""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

# the harness and the sequences are plain modules beside this file
sys.path.insert(0, str(Path(__file__).resolve().parent))


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
