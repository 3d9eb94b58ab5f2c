"""No partition value reaches outside its table, in process: every hostile value is
refused with an error naming the value, the field and the record key, before anything is
written; the table, a neighbouring table and the folders around them stay byte for byte
as they were. With hoodie.datasource.write.partitionpath.urlencode=true the encodable ones
are written as one folder and read back as given, through hoodie and hudi-rs."""
from __future__ import annotations

import os
import re
from pathlib import Path

import pyarrow as pa
import pytest
from hostile_paths import (
    ALWAYS_REFUSED,
    HOSTILE,
    REFUSED_UNLESS_ENCODED,
    TABLE_TYPES,
    expect_refused,
    hostile_options,
    tree_state,
    trips,
)

import hoodie


@pytest.mark.parametrize("hive", [False, True], ids=["plain", "hive"])
@pytest.mark.parametrize("table_type", sorted(TABLE_TYPES))
@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_hostile_partition_value_is_refused_and_nothing_changes(neighbourhood: Path, name: str, table_type: str, hive: bool) -> None:
    value = HOSTILE[name]
    a = str(neighbourhood / "a")
    opts = hostile_options(table_type, hive)
    hoodie.write(trips(["sf", "nyc"]), a, opts)
    rows_before = hoodie.read(a).sort_by("uuid")
    before = tree_state(neighbourhood.parent)
    # an update, a good insert and the hostile record: none of them may land
    expect_refused(value, lambda: hoodie.write(trips(["sf", value, "la"], ts=2), a, opts))
    assert tree_state(neighbourhood.parent) == before
    assert hoodie.read(a).sort_by("uuid") == rows_before
    assert hoodie.read(str(neighbourhood / "b")).num_rows == 2
    assert not os.path.exists("/abs")


@pytest.mark.parametrize("table_type", sorted(TABLE_TYPES))
@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_hostile_first_write_creates_no_table(neighbourhood: Path, name: str, table_type: str) -> None:
    value = HOSTILE[name]
    before = tree_state(neighbourhood.parent)
    expect_refused(value, lambda: hoodie.write(trips(["sf", value]), str(neighbourhood / "a"), hostile_options(table_type, False)))
    assert tree_state(neighbourhood.parent) == before


@pytest.mark.parametrize("operation", ["insert", "bulk_insert", "delete"])
def test_every_operation_checks_partition_values(neighbourhood: Path, operation: str) -> None:
    a = str(neighbourhood / "a")
    opts = hostile_options("cow", False)
    hoodie.write(trips(["sf", "nyc"]), a, opts)
    before = tree_state(neighbourhood.parent)
    expect_refused("../b/y", lambda: hoodie.write(trips(["sf", "../b/y"]), a, {**opts, "hoodie.datasource.write.operation": operation}))
    assert tree_state(neighbourhood.parent) == before


def test_many_partitions_are_checked_before_any_is_written(neighbourhood: Path) -> None:
    """The partition-grouped write (a batch over many partitions) refuses the batch before
    any group writes its partitions."""
    a = str(neighbourhood / "a")
    opts = hostile_options("cow", False)
    hoodie.write(trips(["sf"]), a, opts)
    before = tree_state(neighbourhood.parent)
    many = pa.table({"uuid": ["k1"] + [f"x{i}" for i in range(40)], "city": ["../b/y"] + [f"c{i}" for i in range(40)], "ts": [1] * 41, "fare": [0.0] * 41})
    expect_refused("../b/y", lambda: hoodie.write(many, a, opts))
    assert tree_state(neighbourhood.parent) == before


@pytest.mark.parametrize("hive", [False, True], ids=["plain", "hive"])
@pytest.mark.parametrize("table_type", sorted(TABLE_TYPES))
def test_url_encoding_writes_encodable_values_inside_and_reads_them_back(neighbourhood: Path, table_type: str, hive: bool, hudi_rs_read) -> None:
    a = neighbourhood / "a"
    values = sorted(REFUSED_UNLESS_ENCODED.values())
    opts = hostile_options(table_type, hive, **{"hoodie.datasource.write.partitionpath.urlencode": "true"})
    b_before = tree_state(neighbourhood / "b")
    hoodie.write(trips(values), str(a), opts)
    hoodie.write(trips(values, ts=2), str(a), opts)  # updates find their encoded partitions
    expected = sorted(values)
    assert sorted(hoodie.read(str(a)).column("city").to_pylist()) == expected
    assert sorted(hudi_rs_read(a).column("city").to_pylist()) == expected
    assert set(hoodie.read(str(a)).column("ts").to_pylist()) == {2}
    # one folder per value, directly under the table (no '/' left in a name)
    folders = {p.name for p in a.iterdir() if p.is_dir()} - {".hoodie"}
    assert len(folders) == len(values) and all(re.fullmatch(r"[^/]+", f) for f in folders)
    assert tree_state(neighbourhood / "b") == b_before
    assert sorted(os.listdir(neighbourhood)) == ["a", "b"]


@pytest.mark.parametrize("name", sorted(ALWAYS_REFUSED))
def test_url_encoding_still_refuses_what_it_cannot_make_safe(neighbourhood: Path, name: str) -> None:
    before = tree_state(neighbourhood.parent)
    opts = hostile_options("cow", True, **{"hoodie.datasource.write.partitionpath.urlencode": "true"})
    expect_refused(ALWAYS_REFUSED[name], lambda: hoodie.write(trips(["sf", ALWAYS_REFUSED[name]]), str(neighbourhood / "a"), opts))
    assert tree_state(neighbourhood.parent) == before
