"""TimestampBasedKeyGenerator end to end: tables written in process with an insert, an
upsert (an update, a stale update, inserts into an old and a new date) and a delete are
laid out in partitions named by the formatted dates, and read back to the expected rows by
hoodie and by hudi-rs (the independent Apache Hudi reader). The later writes pass only the
base options: the key generator's settings come from ``hoodie.properties``."""
from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest
from timestamp_keygen import BASE, DELETE, INSERT, KEYGEN, SCENARIOS, UPSERT, batch, expected_rows, partitions_on_disk

import hoodie
from hoodie.config.properties import parse_properties

COLUMNS = ["uuid", "event", "ts", "fare"]


def data_rows(t: pa.Table) -> list[tuple]:
    return sorted(tuple(r[c] for c in COLUMNS) for r in t.select(COLUMNS).to_pylist())


def partition_metadata_dirs(path: str) -> set[str]:
    """The data partitions (the metadata table's, under .hoodie, are not)."""
    root = Path(path)
    found = (p.parent.relative_to(root) for p in root.rglob(".hoodie_partition_metadata"))
    return {p.as_posix() for p in found if p.parts[0] != ".hoodie"}


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
@pytest.mark.parametrize("scenario", sorted(SCENARIOS))
def test_timestamp_keygen_table_reads_back_in_date_partitions(tmp_path: Path, scenario: str, table_type: str, hudi_rs_read) -> None:
    keygen_opts, event_type, event_value, expected_partitions = SCENARIOS[scenario]
    path = str(tmp_path / scenario)
    first = {**BASE, **keygen_opts, "hoodie.datasource.write.keygenerator.class": KEYGEN, "hoodie.datasource.write.table.type": table_type}
    hoodie.write(batch(INSERT, event_type, event_value), path, {**first, "hoodie.datasource.write.operation": "insert"})
    hoodie.write(batch(UPSERT, event_type, event_value), path, {**BASE, "hoodie.datasource.write.operation": "upsert"})
    hoodie.write(batch(DELETE, event_type, event_value, with_fare=False), path, {**BASE, "hoodie.datasource.write.operation": "delete"})

    props = parse_properties((Path(path) / ".hoodie" / "hoodie.properties").read_text())
    assert props["hoodie.table.keygenerator.class"] == KEYGEN
    assert props["hoodie.keygen.timebased.timestamp.type"] == keygen_opts["hoodie.keygen.timebased.timestamp.type"]
    assert props["hoodie.keygen.timebased.output.dateformat"] == keygen_opts["hoodie.keygen.timebased.output.dateformat"]

    # every partition ever written, b's included (it was deleted, its date stays)
    all_partitions = set(expected_partitions.values())
    assert partitions_on_disk(path) == all_partitions
    assert partition_metadata_dirs(path) == all_partitions

    want = expected_rows(event_value)
    assert [r[0] for r in want] == ["a", "c", "d", "e", "f"]
    ours = hoodie.read(path)
    assert data_rows(ours) == want
    assert {r["uuid"]: r["_hoodie_partition_path"] for r in ours.to_pylist()} == expected_partitions
    assert {r["uuid"]: r["_hoodie_record_key"] for r in ours.to_pylist()} == {k: k for k in expected_partitions}
    assert ours.schema.field("event").type == event_type, "the event column keeps its stored values and type"

    theirs = hudi_rs_read(path)
    assert data_rows(theirs) == want
    assert {r["uuid"]: r["_hoodie_partition_path"] for r in theirs.to_pylist()} == expected_partitions


def test_scalar_time_unit_is_kept_for_later_writes(tmp_path: Path, hudi_rs_read) -> None:
    path = str(tmp_path / "scalar_days")
    days = {"a": 19723, "b": 19724}  # 2024-01-01, 2024-01-02
    first = {
        **BASE,
        "hoodie.datasource.write.keygenerator.class": KEYGEN,
        "hoodie.keygen.timebased.timestamp.type": "SCALAR",
        "hoodie.keygen.timebased.timestamp.scalar.time.unit": "DAYS",
    }

    def write(keys: list[str], ts: int, options: dict[str, str]) -> None:
        hoodie.write(pa.table({
            "uuid": keys, "event": pa.array([days[k] for k in keys], pa.int64()), "ts": pa.array([ts] * len(keys), pa.int64()), "fare": [float(ts)] * len(keys),
        }), path, options)

    write(["a", "b"], 1, first)
    assert {r["uuid"]: r["_hoodie_partition_path"] for r in hoodie.read(path).to_pylist()} == {"a": "2024-01-01", "b": "2024-01-02"}
    write(["a"], 2, BASE)  # an update of a, options from hoodie.properties
    want = [("a", 19723, 2, 2.0), ("b", 19724, 1, 1.0)]
    assert data_rows(hoodie.read(path)) == want
    assert partitions_on_disk(path) == {"2024-01-01", "2024-01-02"}
    props = parse_properties((Path(path) / ".hoodie" / "hoodie.properties").read_text())
    assert props.get("hoodie.keygen.timebased.timestamp.scalar.time.unit") == "DAYS"
    assert data_rows(hudi_rs_read(path)) == want
