"""Apache Hudi writes, hoodie reads: Apache Hudi 0.15 (table version 6) and 1.x (table
version 9) write the oracle's sequence (a bulk insert, an upsert with in-batch
duplicates, a delete, an upsert with a stale update, an insert_overwrite) with their
metadata table on or off, either index, and compaction and cleaning inline or not, and
partitioned by the timestamp key generator; after every write hoodie's snapshot,
read-optimized, incremental and time-travel reads return exactly Apache Hudi's, meta
columns included, and the data equals the model's (commit-time merging for 0.15's
default payload, event-time for 1.x's). hoodie's key generator, given the same options,
makes the record keys and partition paths Apache Hudi wrote.
"""
from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hudi_oracle import HUDI_0_15, HUDI_1, Completed, HudiOracle
from oracle_reads import path_valued, run_sequence, table_version
from sequences import DATE_KEYS, SERVICES, Layout, Model, batch, steps

import hoodie
from hoodie.config.options import HoodieConfig
from hoodie.writer.keygen import KeyGenerator

#: the table version each Apache Hudi writes (by default, 0.15 merges in commit-time
#: order, OverwriteWithLatestAvroPayload, and 1.2 in event-time order: see Model)
WRITES_VERSION = {HUDI_0_15: 6, HUDI_1: 9}
MDT_BLOOM = {"hoodie.metadata.enable": "true", "hoodie.index.type": "BLOOM"}
NO_MDT_SIMPLE = {"hoodie.metadata.enable": "false", "hoodie.index.type": "SIMPLE"}
CASES = [
    (HUDI_0_15, Layout("COPY_ON_WRITE", "hive"), MDT_BLOOM),
    (HUDI_0_15, Layout("MERGE_ON_READ", "plain"), NO_MDT_SIMPLE),
    (HUDI_0_15, Layout("MERGE_ON_READ", "none"), MDT_BLOOM),
    (HUDI_1, Layout("COPY_ON_WRITE", "plain"), NO_MDT_SIMPLE),
    (HUDI_1, Layout("MERGE_ON_READ", "hive"), MDT_BLOOM),
    (HUDI_0_15, Layout("MERGE_ON_READ", "hive"), {**NO_MDT_SIMPLE, **SERVICES}),
    (HUDI_1, Layout("MERGE_ON_READ", "plain"), {**MDT_BLOOM, **SERVICES}),
    # partitioned by the date of a string column (the timestamp key generator)
    (HUDI_0_15, Layout("MERGE_ON_READ", "hive"), {**NO_MDT_SIMPLE, **DATE_KEYS}),
    (HUDI_1, Layout("COPY_ON_WRITE", "plain"), {**MDT_BLOOM, **DATE_KEYS}),
]


def _id(version: str, layout: Layout, extra: dict[str, str]) -> str:
    mdt = "mdt" if extra["hoodie.metadata.enable"] == "true" else "no-mdt"
    services = "-services" if "hoodie.compact.inline" in extra else ""
    dates = "-dates" if extra.get("hoodie.datasource.write.partitionpath.field") == "booked" else ""
    return f"hudi-{version}-{layout.id}-{mdt}-{extra['hoodie.index.type'].lower()}{services}{dates}"


@pytest.mark.parametrize(("version", "layout", "extra"), CASES, ids=[_id(*c) for c in CASES])
def test_hoodie_reads_what_apache_hudi_writes(
    version: str, layout: Layout, extra: dict[str, str], hudi_oracle: Callable[[str], HudiOracle], tmp_path: Path
) -> None:
    oracle = hudi_oracle(version)
    path = tmp_path / "table"
    options = layout.options("hudi_written", **extra)

    def write(op: str, records: list[dict[str, Any]]) -> Completed:
        completed = oracle.write(path, batch(records), {**options, "hoodie.datasource.write.operation": op})
        assert completed, f"Apache Hudi completed no instant for a write ({op})"
        return completed[0]  # (an inline compaction completes after it, with a later instant)

    # Apache Hudi 0.15's upsert loses the arrays of the records its bulk_insert wrote
    # (docs/apache-hudi.md): its tables start with an insert
    sequence = steps("insert" if version == HUDI_0_15 else "bulk_insert")
    model = Model.of(layout, commit_time=version == HUDI_0_15)
    run_sequence(oracle, path, layout, model, extra, sequence, write, f"Apache Hudi {version}", path_valued(version, options))
    assert table_version(path) == WRITES_VERSION[version]
    # hoodie's key generator, given Apache Hudi's options, keys each row as Apache Hudi did
    table = hoodie.read(str(path))
    keygen = KeyGenerator.from_config(HoodieConfig.of(options))
    assert keygen.record_keys(table).to_pylist() == table.column("_hoodie_record_key").to_pylist()
    assert keygen.partition_paths(table).to_pylist() == table.column("_hoodie_partition_path").to_pylist()
