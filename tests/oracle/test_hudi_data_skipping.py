"""Data skipping on the column statistics Apache Hudi writes: Apache Hudi 0.15 and 1.2
write a partitioned copy-on-write table with the metadata table's column stats on, in
several commits (inserts into new file groups, then an upsert that rewrites some), and
hoodie reads it with range filters: the rows equal the unfiltered read filtered, and the
files read are exactly those whose Parquet footer ranges overlap the filter."""
from __future__ import annotations

from collections.abc import Callable
from decimal import Decimal
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from hudi_oracle import HUDI_0_15, HUDI_1, HudiOracle
from mdt_checks import footer_stats
from sequences import Layout, batch, record

import hoodie
from hoodie.query import snapshot
from hoodie.query.skipping import RowFilter
from hoodie.table.file_group import FileSlice
from hoodie.table.table import HoodieTable

OPTIONS = {
    "hoodie.metadata.enable": "true",
    "hoodie.metadata.index.column.stats.enable": "true",
    # every insert makes new file groups, so files hold distinct ranges
    "hoodie.parquet.small.file.limit": "0",
}

# (filters, column, low, high): the inclusive range a file's footer must overlap
RANGES: list[tuple[list[Any], str, Any, Any]] = [
    ([("ts", ">=", 3), ("ts", "<=", 3)], "ts", 3, 3),
    ([("ts", ">", 3)], "ts", 4, 10**9),
    ([("fare", ">=", Decimal("500.00")), ("fare", "<", Decimal("520.00"))], "fare", Decimal("500.00"), Decimal("519.99")),
]


@pytest.mark.parametrize("version", [HUDI_0_15, HUDI_1])
def test_hoodie_skips_files_by_the_column_stats_apache_hudi_writes(
    version: str, hudi_oracle: Callable[[str], HudiOracle], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    oracle = hudi_oracle(version)
    path = tmp_path / "table"
    options = Layout("COPY_ON_WRITE", "hive").options("hudi_skipping", **OPTIONS)
    # four inserts, each of its own ts, then an upsert of some keys of the first at ts 9
    for i in range(4):
        op = "bulk_insert" if i == 0 else "insert"
        assert oracle.write(path, batch(record(n, i + 1) for n in range(i * 12, i * 12 + 12)), {**options, "hoodie.datasource.write.operation": op})
    assert oracle.write(path, batch(record(n, 9) for n in range(0, 12, 4)), {**options, "hoodie.datasource.write.operation": "upsert"})

    table = HoodieTable.open(str(path))
    assert "column_stats" in table.config.metadata_partitions, table.config.metadata_partitions
    latest = table.local_view().latest_slices_all()
    everything = hoodie.read(str(path))
    read: list[FileSlice] = []
    original = snapshot.read_file_slices

    def spy(t: HoodieTable, slices: list[FileSlice], *args: Any, **kwargs: Any) -> pa.Table:
        read.extend(slices)
        return original(t, slices, *args, **kwargs)

    monkeypatch.setattr(snapshot, "read_file_slices", spy)
    skipped_some = False
    for filters, column, lo, hi in RANGES:
        read.clear()
        got = hoodie.read(str(path), filters=filters)
        expected = everything.filter(RowFilter.of(filters).expression())  # type: ignore[union-attr]
        assert got.sort_by("_hoodie_record_key").equals(expected.sort_by("_hoodie_record_key")), filters
        overlapping = set()
        for s in latest:
            assert s.base_file is not None
            footer = footer_stats(Path(s.base_file.path))
            if column not in footer or (footer[column][1] >= lo and footer[column][0] <= hi):
                overlapping.add(s.file_id)
        assert {s.file_id for s in read} == overlapping, (version, filters)
        skipped_some |= len(overlapping) < len(latest)
    assert skipped_some
