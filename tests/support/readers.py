"""Test helper: a table read by the independent hudi-rs reader (PyPI ``hudi``) and rows in
a canonical order, so that tests compare hoodie's reads with it and with each other."""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import pyarrow as pa


def hudi_rs_table(path: str | Path, options: Mapping[str, str] | None = None) -> pa.Table:
    """Snapshot of the table at ``path`` through hudi-rs (``options``: its Hudi options)."""
    from hudi import HudiTableBuilder

    builder = HudiTableBuilder.from_base_uri(str(path))
    for key, value in (options or {}).items():
        builder = builder.with_hudi_option(key, value)
    batches = builder.build().read()
    return pa.Table.from_batches(batches) if batches else pa.table({})


def sorted_tuples(table: pa.Table, columns: Sequence[str]) -> list[tuple]:
    """The ``columns`` of every row as a tuple, sorted."""
    return sorted(tuple(r[c] for c in columns) for r in table.select(list(columns)).to_pylist())
