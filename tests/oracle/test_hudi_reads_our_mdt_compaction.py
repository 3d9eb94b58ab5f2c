"""hoodie compacts the metadata table Apache Hudi 0.15 wrote, Apache Hudi goes on with it:
Apache Hudi writes a partitioned merge-on-read table with the metadata table's files,
column stats, bloom filters and record index (never compacting the metadata table
itself); hoodie's metadata-table services compact it into new base HFiles, after which
hoodie's reader answers exactly as before and as the data says; Apache Hudi then reads
the table with ``hoodie.metadata.enable=true`` (its listing comes from the metadata table:
the base files hoodie wrote) and gets the model's rows, writes the rest of the sequence,
compacting the metadata table itself over hoodie's base files, and hoodie still reads its
metadata table right."""
from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hudi_oracle import HUDI_0_15, HudiOracle
from mdt_checks import check_bloom_filters, check_column_stats, check_files, check_record_index
from sequences import SERVICES, Layout, Model, batch, data, differences, model_rows, rows, steps

from hoodie.config.options import HoodieConfig
from hoodie.layout import InstantTime
from hoodie.metadata_table import MetadataTableReader
from hoodie.metadata_table.services import MetadataServiceSettings, run_table_services
from hoodie.services.for_metadata import METADATA_SERVICES
from hoodie.table.table import HoodieTable
from hoodie.timeline.instant import Action

METADATA = {
    "hoodie.metadata.enable": "true",
    "hoodie.metadata.index.column.stats.enable": "true",
    "hoodie.metadata.index.bloom.filter.enable": "true",
    "hoodie.metadata.record.index.enable": "true",
    "hoodie.index.type": "BLOOM",
}


def _answers(path: Path) -> dict[str, Any]:
    reader = MetadataTableReader(HoodieTable.open(str(path)))
    out: dict[str, Any] = {p: {r.key: r for r in reader.records(p) if not r.is_deleted} for p in sorted(reader.partitions)}
    out["partitions"] = reader.all_partition_paths()
    return out


def _check(path: Path, deleted: list[str], what: str) -> None:
    table = HoodieTable.open(str(path))
    reader = MetadataTableReader(table)
    try:
        check_files(reader, table)
        assert check_column_stats(reader, table) and check_bloom_filters(reader, table)
        check_record_index(reader, str(path), gone=deleted)
    except AssertionError as exc:
        raise AssertionError(f"{what}: {exc}") from exc


def _compactions(path: Path) -> list[str]:
    mdt = MetadataTableReader(HoodieTable.open(str(path))).table
    return [i.timestamp for i in mdt.timeline.completed([Action.COMMIT])]


@pytest.mark.parametrize("version", [HUDI_0_15])
def test_apache_hudi_reads_and_writes_on_after_hoodie_compacts_its_metadata_table(
    version: str, hudi_oracle: Callable[[str], HudiOracle], tmp_path: Path
) -> None:
    oracle = hudi_oracle(version)
    path = tmp_path / "table"
    layout = Layout("MERGE_ON_READ", "hive")
    model = Model.of(layout, commit_time=True)
    sequence = steps("insert")

    def hudi_writes(op: str, records: list[dict[str, Any]], compact_every: int) -> None:
        options = layout.options("hudi_mdt", **METADATA, **SERVICES, **{"hoodie.metadata.compact.max.delta.commits": str(compact_every)})
        completed = oracle.write(path, batch(records), {**options, "hoodie.datasource.write.operation": op})
        assert completed, f"Apache Hudi completed no instant for a write ({op})"
        model.apply(completed[0].instant, op, records)

    # Apache Hudi writes, its metadata table never compacting (its initialisation's four
    # delta commits and one a write stay in logs)
    for op, records in sequence[:2]:
        hudi_writes(op, records, compact_every=100)
    assert _compactions(path) == []
    before = _answers(path)

    settings = MetadataServiceSettings.of(HoodieConfig.of({"hoodie.metadata.compact.max.delta.commits": "3"}))
    report = run_table_services(HoodieTable.open(str(path)), settings, METADATA_SERVICES)
    assert len(report.compactions) == 1, report
    ours = report.compactions[0]
    assert _answers(path) == before, "hoodie's compaction changed what its reader answers"
    _check(path, [], "after hoodie's compaction")
    reader = MetadataTableReader(HoodieTable.open(str(path)))
    for partition in sorted(reader.partitions):
        assert all(s.base_instant == ours and not s.log_files for s in reader.file_slices(partition)), partition

    # Apache Hudi lists the table through the metadata table, whose every slice is now a
    # base file hoodie wrote
    theirs = rows(oracle.read(path, {"hoodie.metadata.enable": "true"}))
    expected = model_rows(model.rows.values())
    assert data(theirs) == expected, f"Apache Hudi's read over hoodie's compaction (left) differs from the model:\n{differences(data(theirs), expected)}"

    # Apache Hudi writes on: its delta commits go on top of hoodie's base files, and it
    # compacts the metadata table again, merging them
    deleted: set[str] = set()
    for op, records in sequence[2:]:
        hudi_writes(op, records, compact_every=3)
        if op == "delete":
            deleted |= {r["uuid"] for r in records} - set(model.rows)
        deleted -= set(model.rows)
        _check(path, sorted(deleted), f"after Apache Hudi's {op}")
    later = [t for t in _compactions(path) if InstantTime(t) > InstantTime(ours)]
    assert later, f"Apache Hudi never compacted the metadata table after hoodie's compaction {ours}: {_compactions(path)}"
    theirs = rows(oracle.read(path, {"hoodie.metadata.enable": "true"}))
    expected = model_rows(model.rows.values())
    assert data(theirs) == expected, f"Apache Hudi's last read (left) differs from the model:\n{differences(data(theirs), expected)}"
