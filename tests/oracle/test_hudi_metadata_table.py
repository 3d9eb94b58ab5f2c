"""Apache Hudi writes its metadata table, hoodie reads it: Apache Hudi 0.15 (table
version 6) and 1.2 (version 9) write a partitioned merge-on-read table with the metadata
table's files, column stats, bloom filters and record index on, inline compaction and
cleaning, and a metadata table that compacts itself every three delta commits; after
every write hoodie's metadata-table reader answers what the data says: partitions and
files equal the committed files on storage, column statistics the Parquet footers, bloom
filters the footers' filters, and the record index the file group each live key is read
from (deleted keys are gone)."""
from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from hudi_oracle import HUDI_0_15, HUDI_1, HudiOracle
from mdt_checks import check_bloom_filters, check_column_stats, check_files, check_record_index
from oracle_reads import completed_actions
from sequences import ALL_METADATA, SERVICES, Layout, Model, batch, steps

from hoodie.metadata_table import MetadataTableReader
from hoodie.table.table import HoodieTable
from hoodie.timeline.instant import Action

# (the metadata table compacts itself often, so that its base HFiles are read too)
METADATA = {**ALL_METADATA, "hoodie.index.type": "BLOOM"}
MDT_PARTITIONS = {"files", "column_stats", "bloom_filters", "record_index"}


@pytest.mark.parametrize("version", [HUDI_0_15, HUDI_1])
def test_hoodie_reads_the_metadata_table_apache_hudi_writes(
    version: str, hudi_oracle: Callable[[str], HudiOracle], tmp_path: Path
) -> None:
    oracle = hudi_oracle(version)
    path = tmp_path / "table"
    layout = Layout("MERGE_ON_READ", "hive")
    options = layout.options("hudi_mdt", **METADATA, **SERVICES)
    model = Model.of(layout, commit_time=version == HUDI_0_15)
    deleted: set[str] = set()
    seen: dict[str, int] = {}
    # (Apache Hudi 0.15's upsert loses the arrays of the records its bulk_insert wrote:
    # its sequence starts with an insert, as in test_hudi_writes.py)
    for op, records in steps("insert" if version == HUDI_0_15 else "bulk_insert"):
        completed = oracle.write(path, batch(records), {**options, "hoodie.datasource.write.operation": op})
        assert completed, f"Apache Hudi {version} completed no instant for a write ({op})"
        model.apply(completed[0].instant, op, records)
        if op == "delete":
            deleted |= {r["uuid"] for r in records} - set(model.rows)
        deleted -= set(model.rows)
        table = HoodieTable.open(str(path))
        reader = MetadataTableReader(table)
        assert reader.partitions >= MDT_PARTITIONS, f"after {op}: {sorted(reader.partitions)}"
        _check(reader, table, str(path), sorted(deleted), seen, f"Apache Hudi {version}, after {op}")
    # what the sequence went through: the data table compacted and cleaned, the metadata
    # table compacted itself (base HFiles and logs on top of them were read)
    actions = completed_actions(path)
    assert {"commit", "clean"} <= actions, sorted(actions)
    mdt = MetadataTableReader(HoodieTable.open(str(path))).table.timeline
    assert any(i.action == Action.COMMIT and i.is_completed for i in mdt.instants), "the metadata table never compacted"
    assert seen["bloom"] and seen["stats"] and seen["keys"]


def _check(reader: MetadataTableReader, table: HoodieTable, base: str, deleted: list[str], seen: dict[str, int], what: str) -> None:
    try:
        check_files(reader, table)
        seen["stats"] = seen.get("stats", 0) + check_column_stats(reader, table)
        seen["bloom"] = seen.get("bloom", 0) + check_bloom_filters(reader, table)
        located = check_record_index(reader, base, gone=deleted)
        seen["keys"] = seen.get("keys", 0) + len(located)
    except AssertionError as exc:
        raise AssertionError(f"{what}: {exc}") from exc
