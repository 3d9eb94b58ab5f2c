"""hoodie writes, Apache Hudi reads: after every write of the oracle's sequence (a bulk
insert, an upsert with in-batch duplicates, a delete, an upsert with a stale update, an
insert_overwrite) by ``hoodie.write``, some with compaction and cleaning inline, the snapshot, read-optimized, incremental and
time-travel reads of Apache Hudi 0.15 and 1.x return exactly hoodie's reads, meta columns
included, and the data equals the model's.

The same sequence with the other key generators (two partition levels and two record key
fields with the complex key generator; the timestamp key generator), which Apache Hudi
learns from ``hoodie.properties`` alone; and a table's life cycle: a write killed before
completing (left pending, then rolled back by the next write), a savepoint, cleaning that
keeps file versions, and a restore to the savepoint.
"""
from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hudi_oracle import HUDI_0_15, HUDI_1, Completed, HudiOracle
from oracle_reads import both_read, check_reads, completed_actions, path_valued, run_sequence
from sequences import CITIES, DATE_KEYS, SERVICES, Layout, Model, batch, data, model_rows, record, steps

import hoodie
from hoodie.services import RestoreResult, create_savepoint, open_for_services, restore_to
from hoodie.table.table import HoodieTable
from hoodie.writer.transaction import WriteTransaction

COW_HIVE, MOR_PLAIN, MOR_NONE = Layout("COPY_ON_WRITE", "hive"), Layout("MERGE_ON_READ", "plain"), Layout("MERGE_ON_READ", "none")
CASES = [
    (HUDI_0_15, COW_HIVE, {}),
    (HUDI_0_15, MOR_PLAIN, {}),
    (HUDI_0_15, MOR_NONE, SERVICES),
    (HUDI_1, COW_HIVE, SERVICES),
    (HUDI_1, MOR_PLAIN, {}),
    (HUDI_1, MOR_NONE, SERVICES),
]


def _id(version: str, layout: Layout, extra: dict[str, str]) -> str:
    return f"hudi-{version}-{layout.id}" + ("-services" if extra else "")


@pytest.mark.parametrize(("version", "layout", "extra"), CASES, ids=[_id(*c) for c in CASES])
def test_apache_hudi_reads_what_hoodie_writes(
    version: str, layout: Layout, extra: dict[str, str], hudi_oracle: Callable[[str], HudiOracle], tmp_path: Path
) -> None:
    oracle = hudi_oracle(version)
    path = tmp_path / "table"
    write = _write_by_hoodie(path, layout.options("hoodie_written", **extra))
    run_sequence(oracle, path, layout, Model.of(layout), extra, steps(), write, "hoodie")


def _write_by_hoodie(path: Path, options: dict[str, str]) -> Callable[[str, list[dict[str, Any]]], Completed]:
    def write(op: str, records: list[dict[str, Any]]) -> Completed:
        instant = hoodie.write(batch(records), str(path), {**options, "hoodie.datasource.write.operation": op})
        return Completed(instant, "", instant)  # (table version 6: completion is the instant)

    return write


def stable(r: dict[str, Any]) -> dict[str, Any]:
    """``r`` with ``day`` and ``at`` fixed by its key (a key's partition never changes):
    ``day`` one of two dates, ``at`` on the date of its city (so that partitions by
    the date of ``at`` are the cities')."""
    n = int(r["uuid"][1:])
    at = dt.datetime(2024, 3, 1 + n % 3, n % 24, n % 60, tzinfo=dt.timezone.utc)
    return {**r, "day": dt.date(2024, 1, 1 + n % 2), "at": at}


def _two_levels(hive: bool) -> tuple[set[str], Callable[[str], str]]:
    """The partitions of the two-levels key generator, and the record key of a uuid."""
    partitions = {f"city={c}/day=2024-01-0{d}" if hive else f"{c}/2024-01-0{d}" for c in CITIES for d in (1, 2)}
    return partitions, lambda uuid: f"uuid:{uuid},city:{CITIES[int(uuid[1:]) % 3]}"


def _dates(hive: bool) -> tuple[set[str], Callable[[str], str]]:
    """The partitions of the timestamp key generator on ``booked`` (one date per city),
    and the record key of a uuid."""
    return {f"booked=2024/03/0{d}" if hive else f"2024/03/0{d}" for d in (1, 2, 3)}, lambda uuid: uuid


KEYGENS = {
    # two partition levels (city=la/day=2024-01-02) and two record key fields (uuid:k004,city:la)
    "two-levels": ({
        "hoodie.datasource.write.keygenerator.class": "org.apache.hudi.keygen.ComplexKeyGenerator",
        "hoodie.datasource.write.recordkey.field": "uuid,city",
        "hoodie.datasource.write.partitionpath.field": "city,day",
    }, _two_levels),
    # the date of a string column, three folder levels (2024/03/02)
    "date-string": (DATE_KEYS, _dates),
}
KEYGEN_CASES = [
    (HUDI_0_15, COW_HIVE, "two-levels"),
    (HUDI_1, MOR_PLAIN, "two-levels"),
    (HUDI_0_15, MOR_PLAIN, "date-string"),
    (HUDI_1, COW_HIVE, "date-string"),
]


@pytest.mark.parametrize(("version", "layout", "keygen"), KEYGEN_CASES, ids=[f"hudi-{v}-{x.id}-{k}" for v, x, k in KEYGEN_CASES])
def test_apache_hudi_reads_the_partitions_of_other_key_generators(
    version: str, layout: Layout, keygen: str, hudi_oracle: Callable[[str], HudiOracle], tmp_path: Path
) -> None:
    oracle = hudi_oracle(version)
    path = tmp_path / "table"
    keygen_options, expected = KEYGENS[keygen]
    options = layout.options("hoodie_keys", **keygen_options)
    sequence = [(op, [stable(r) for r in records]) for op, records in steps()]
    write = _write_by_hoodie(path, options)
    run_sequence(oracle, path, layout, Model.of(layout), {}, sequence, write, "hoodie", path_valued(version, options))
    found = (p.parent.relative_to(path) for p in path.rglob(".hoodie_partition_metadata"))
    partitions = {p.as_posix() for p in found if p.parts[0] != ".hoodie"}  # (not the metadata table's)
    keys = {r["uuid"]: r["_hoodie_record_key"] for r in hoodie.read(str(path)).to_pylist()}
    expected_partitions, key_of = expected(layout.partitioning == "hive")
    assert all(key == key_of(uuid) for uuid, key in keys.items()), keys
    assert partitions == expected_partitions


#: cleaning that keeps the last two slices of every file group (and the savepointed ones):
#: time travel one write back finds its files. (Apache Hudi does not refuse a time travel
#: whose files this policy cleaned, as hoodie does: test_differences.py)
FILE_VERSIONS = {"hoodie.cleaner.policy": "KEEP_LATEST_FILE_VERSIONS", "hoodie.cleaner.fileversions.retained": "2"}
LIFE_CASES = [(HUDI_0_15, COW_HIVE, FILE_VERSIONS), (HUDI_1, MOR_PLAIN, SERVICES)]


@pytest.mark.parametrize(("version", "layout", "extra"), LIFE_CASES, ids=[f"hudi-{v}-{x.id}" for v, x, _ in LIFE_CASES])
def test_apache_hudi_reads_through_a_killed_write_a_savepoint_and_a_restore(
    version: str, layout: Layout, extra: dict[str, str], hudi_oracle: Callable[[str], HudiOracle], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A bulk insert, an upsert, a write killed after writing its files (pending: Apache
    Hudi ignores it), a delete (which rolls it back first), a savepoint, an upsert, an
    insert_overwrite (an upsert when cleaning keeps file versions), cleaning (and
    compaction, merge-on-read), a restore to the savepoint, an upsert: Apache Hudi's
    reads equal hoodie's and the model after each."""
    oracle = hudi_oracle(version)
    path = tmp_path / "table"
    write = _write_by_hoodie(path, layout.options("hoodie_life", **extra))
    model = Model.of(layout)
    writes: list[Completed] = []

    def step(op: str, records: list[dict[str, Any]]) -> None:
        done = write(op, records)
        model.apply(done.instant, op, records)
        writes.append(done)
        check_reads(oracle, path, layout, model, writes, f"write {len(writes) - 1} ({op})")

    (first, inserts), (_, upsert), (_, delete), (_, again), (_, overwrite) = steps()
    step(first, inserts)
    step("upsert", upsert)

    # a write that dies after writing its data files: its instant stays pending
    def die(self: WriteTransaction, *args: Any, **kwargs: Any) -> None:
        raise RuntimeError("writer killed before completing")

    monkeypatch.setattr(WriteTransaction, "commit", die)
    monkeypatch.setattr(WriteTransaction, "abort", lambda self: None)  # nobody cleans up after a kill
    with pytest.raises(RuntimeError, match="writer killed"):
        write("upsert", [record(n, 8) for n in range(0, 30, 2)] + [record(n, 1) for n in range(50, 56)])
    monkeypatch.undo()
    (killed,) = HoodieTable.open(str(path)).timeline.pending()
    assert any(killed.timestamp in p.name for p in path.rglob("*") if ".hoodie" not in p.parts), "the killed write left no data file"
    check_reads(oracle, path, layout, model, writes, "a killed write (pending)")

    step("delete", delete)  # rolls the killed write back first
    table = HoodieTable.open(str(path))
    assert table.timeline.completed(["rollback"]) and not table.timeline.pending() and not table.timeline.contains(killed.timestamp)

    savepoint = writes[-1].instant
    create_savepoint(table, savepoint)
    step("upsert", again)
    step("upsert" if extra is FILE_VERSIONS else "insert_overwrite", overwrite)
    assert "clean" in completed_actions(path), "nothing was cleaned"
    assert not layout.is_mor or "commit" in completed_actions(path), "nothing was compacted"

    restored = restore_to(open_for_services(str(path)), savepoint)  # (its metadata table, on by default, updated too)
    assert isinstance(restored, RestoreResult) and {w.instant for w in writes[3:]} <= set(restored.rolled_back)
    assert "restore" in completed_actions(path)
    del writes[3:]
    model.rows = dict(model.as_of[savepoint])
    # the snapshot and time travel to the savepoint (not to before it: cleaned, on copy-on-write)
    check_reads(oracle, path, layout, model, writes[-1:], "the restore")
    at_savepoint = both_read(oracle, path, {"as.of.instant": savepoint}, "time travel to the savepoint after the restore")
    assert at_savepoint is not None and data(at_savepoint) == model_rows(model.rows.values())
    step("upsert", [record(n, 9) for n in (0, 3, 4, 60)])
