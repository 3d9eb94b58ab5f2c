"""Apache Hudi writes, hoodie reads: Apache Hudi 0.15 (table version 6) and 1.x (table
version 9) write the oracle's sequence (a bulk insert, an upsert with in-batch
duplicates, a delete, an upsert with a stale update, an insert_overwrite) with their
metadata table on or off, either index, and compaction and cleaning inline or not, and
partitioned by the timestamp key generator; after every write hoodie's snapshot,
read-optimized, incremental and time-travel reads return exactly Apache Hudi's, meta
columns included, and the data equals the model's (commit-time merging for 0.15's
default payload, event-time for 1.x's). hoodie's key generator, given the same options,
makes the record keys and partition paths Apache Hudi wrote, also for timestamps in a
time zone and null ones, and hoodie's upserts find those records where they are.
"""
from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from hudi_oracle import HUDI_0_15, HUDI_1, Completed, HudiOracle
from oracle_reads import path_valued, run_sequence, table_version
from sequences import DATE_KEYS, SERVICES, Layout, Model, batch, record, steps

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


#: timestamp key generators on ``event`` (a string or epoch milliseconds) where Java's
#: choices show: a time zone, and a null value (the epoch's partition)
EVENTS = {
    "date-string-in-a-zone": ({
        "hoodie.keygen.timebased.timestamp.type": "DATE_STRING",
        "hoodie.keygen.timebased.input.dateformat": "yyyy-MM-dd HH:mm:ss",
        "hoodie.keygen.timebased.output.dateformat": "yyyy-MM-dd-HH",
        "hoodie.keygen.timebased.timezone": "America/Los_Angeles",
    }, pa.array(["2024-03-01 10:00:00", "2024-03-02 23:30:00", None])),
    "epoch-millis-hive": ({
        "hoodie.keygen.timebased.timestamp.type": "EPOCHMILLISECONDS",
        "hoodie.keygen.timebased.output.dateformat": "yyyy/MM/dd",
        "hoodie.datasource.write.hive_style_partitioning": "true",
    }, pa.array([1700000000000, 1709251200000, None], pa.int64())),
}


@pytest.mark.parametrize("events", sorted(EVENTS))
@pytest.mark.parametrize("version", [HUDI_0_15])
def test_hoodie_keys_timestamps_where_apache_hudi_put_them(
    version: str, events: str, hudi_oracle: Callable[[str], HudiOracle], tmp_path: Path
) -> None:
    """Apache Hudi inserts rows partitioned by the date of ``event``; hoodie's key
    generator makes the partition paths Apache Hudi wrote, and hoodie's upsert of the
    same keys updates them where they are (no key twice)."""
    oracle = hudi_oracle(version)
    path = tmp_path / "table"
    keygen, events_column = EVENTS[events]
    options = Layout("COPY_ON_WRITE", "plain").options("events", **NO_MDT_SIMPLE, **keygen, **{
        "hoodie.datasource.write.keygenerator.class": "org.apache.hudi.keygen.TimestampBasedKeyGenerator",
        "hoodie.datasource.write.partitionpath.field": "event",
    })
    def rows(ts: int) -> pa.Table:
        return batch([record(n, ts) for n in range(3)]).append_column("event", events_column)

    oracle.write(path, rows(1), {**options, "hoodie.datasource.write.operation": "insert"})
    written = hoodie.read(str(path))
    paths = KeyGenerator.from_config(HoodieConfig.of(options)).partition_paths(written)
    assert paths.to_pylist() == written.column("_hoodie_partition_path").to_pylist()
    placed = {r["uuid"]: r["_hoodie_partition_path"] for r in written.to_pylist()}
    hoodie.write(rows(2), str(path), {**options, "hoodie.datasource.write.operation": "upsert"})
    after = hoodie.read(str(path)).to_pylist()
    assert sorted((r["uuid"], r["ts"]) for r in after) == [(f"k00{n}", 2) for n in range(3)]
    assert {r["uuid"]: r["_hoodie_partition_path"] for r in after} == placed
