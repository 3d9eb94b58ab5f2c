"""hudi-rs (the PyPI ``hudi`` package) accepts the log files hoodie writes.

A log file written here is placed into a copy of a Java-written v6 MOR table as the next
log version of an existing file slice, with a completed deltacommit in the style of the
table's own; hudi-rs must then return the table with our update and delete applied. This
is the proof that another Hudi implementation reads our bytes.
"""
from __future__ import annotations

import datetime as dt
import json
import shutil
from collections.abc import Callable
from decimal import Decimal
from pathlib import Path
from typing import Any

import hudi
import pyarrow as pa
import pyarrow.parquet as pq

from hoodie.formats.avro_schema import (
    arrow_to_avro_schema,
    avro_schema_json,
    avro_schema_to_arrow,
)
from hoodie.formats.log import (
    AvroDataBlock,
    DeleteBlock,
    DeleteRecord,
    HeaderKey,
    ParquetDataBlock,
    read_log_file,
    write_log_file,
)
from hoodie.storage.local import LocalStorage


def _read_with_hudi_rs(base: Path) -> dict[str, dict[str, Any]]:
    batches = hudi.HudiTableBuilder.from_base_uri(str(base)).build().read()
    return {r["_hoodie_record_key"]: r for r in pa.Table.from_batches(batches).to_pylist()}


def _copy(conformance_table: Callable[[str], Path], name: str, tmp_path: Path) -> Path:
    dest = tmp_path / Path(name).name
    shutil.copytree(conformance_table(name), dest)
    return dest


def _write_stat(partition: str, file_id: str, base_instant: str, base_file: str, log_name: str, size: int, version: int) -> dict[str, Any]:
    return {
        "fileId": file_id,
        "path": f"{partition}/{log_name}" if partition else log_name,
        "cdcStats": None,
        "prevCommit": base_instant,
        "numWrites": 1,
        "numDeletes": 0,
        "numUpdateWrites": 1,
        "numInserts": 0,
        "totalWriteBytes": size,
        "totalWriteErrors": 0,
        "tempPath": None,
        "partitionPath": partition,
        "totalLogRecords": 0,
        "totalLogFilesCompacted": 0,
        "totalLogSizeCompacted": 0,
        "totalUpdatedRecordsCompacted": 0,
        "totalLogBlocks": 0,
        "totalCorruptLogBlock": 0,
        "totalRollbackBlocks": 0,
        "fileSizeInBytes": size,
        "minEventTime": None,
        "maxEventTime": None,
        "runtimeStats": None,
        "logVersion": version,
        "logOffset": 0,
        "baseFile": base_file,
        "logFiles": [log_name],
        "recordsStats": {"val": None},
    }


def _deltacommit(base: Path, instant: str, partition: str, stat: dict[str, Any], schema: str, complete: bool = True) -> None:
    """requested → inflight → completed deltacommit files, formatted like Java's (Jackson, " : ")."""
    meta = {
        "partitionToWriteStats": {partition: [stat]},
        "compacted": False,
        "extraMetadata": {"schema": schema},
        "operationType": "UPSERT",
    }
    text = json.dumps(meta, indent=2, separators=(",", " : "))
    timeline = base / ".hoodie"
    (timeline / f"{instant}.deltacommit.requested").write_bytes(b"")
    (timeline / f"{instant}.deltacommit.inflight").write_text(text)
    if complete:
        (timeline / f"{instant}.deltacommit").write_text(text)


def test_hudi_rs_applies_our_avro_update_and_delete(conformance_table, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    base = _copy(conformance_table, "quickstart_trips_table/mor/avro/v6_trips_8i1u", tmp_path)
    before = _read_with_hudi_rs(base)
    assert len(before) == 8
    rider_a, rider_c = "334e26e9-8355-45cc-97c6-c31daf0df330", "e96c4396-3fad-413a-a942-4cb36106d721"

    partition = "city=san_francisco"
    file_id, base_instant = "d0304c53-6fd2-4b7a-a9d6-5ff632f79224-0", "20250331030642808"
    (base_file,) = (base / partition).glob(f"{file_id}_*.parquet")
    base_table = pq.read_table(base_file)
    data_schema = base_table.drop_columns([c for c in base_table.column_names if c.startswith("_hoodie")]).schema
    log_schema = avro_schema_json(arrow_to_avro_schema(data_schema, "v6_trips_8i1u", include_meta_fields=True))
    # Same schema text as the Java-written log.1 of this slice.
    (java_log,) = (base / partition).glob(f".{file_id}_*.log.1_*")
    assert read_log_file(LocalStorage(), str(java_log))[0].header[HeaderKey.SCHEMA] == log_schema

    instant = "20250331030700123"
    update = dict(before[rider_a])
    update.update(
        _hoodie_commit_time=instant,
        _hoodie_commit_seqno=f"{instant}_0_1",
        _hoodie_file_name=file_id,  # log records carry the file id only
        fare=77.7,
        ts=update["ts"] + 1,
    )
    records = pa.Table.from_pylist([update], schema=avro_schema_to_arrow(log_schema))
    blocks = [
        AvroDataBlock.create(records, log_schema, instant),
        DeleteBlock.create([DeleteRecord(rider_c, partition)], instant, log_schema),
    ]
    log_name = f".{file_id}_{base_instant}.log.2_0-40-100"
    size = write_log_file(LocalStorage(), str(base / partition / log_name), blocks)
    stat = _write_stat(partition, file_id, base_instant, base_file.name, log_name, size, 2)
    commit_schema = avro_schema_json(arrow_to_avro_schema(data_schema, "v6_trips_8i1u"))

    # Not yet completed: hudi-rs leaves our blocks out.
    _deltacommit(base, instant, partition, stat, commit_schema, complete=False)
    assert _read_with_hudi_rs(base) == before

    _deltacommit(base, instant, partition, stat, commit_schema)
    after = _read_with_hudi_rs(base)
    assert set(after) == set(before) - {rider_c}
    assert after[rider_a]["fare"] == 77.7
    assert after[rider_a]["_hoodie_commit_time"] == instant
    for key in set(after) - {rider_a}:
        assert after[key] == before[key]


def test_hudi_rs_reads_nested_avro_values_a_delete_and_a_parquet_block(conformance_table, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    base = _copy(conformance_table, "sample_table/mor/parquet/v6_nonpartitioned", tmp_path)
    before = _read_with_hudi_rs(base)
    assert set(before) == {"1", "2", "3", "4"}
    file_id, base_instant = "d206069c-22c8-4532-b9ea-3cf4282342c4-0", "20250117083125837"
    (base_file,) = base.glob(f"{file_id}_*.parquet")
    (java_log,) = base.glob(f".{file_id}_*.log.1_*")
    log_schema = read_log_file(LocalStorage(), str(java_log))[0].header[HeaderKey.SCHEMA]
    arrow_schema = avro_schema_to_arrow(log_schema)

    def as_log_record(row: dict[str, Any], instant: str, **changes: Any) -> dict[str, Any]:
        out = dict(row)
        out.update(_hoodie_commit_time=instant, _hoodie_commit_seqno=f"{instant}_0_1", _hoodie_file_name=file_id, **changes)
        return out

    # log.2: an Avro update of Bob exercising every nested type, and a delete of Carol.
    i1 = "20250117090000000"
    bob = as_log_record(
        before["2"],
        i1,
        name="Bobby",
        longField=before["2"]["longField"] + 1,  # the ordering field decides the merge
        decimalField=Decimal("-12.34567"),
        dateField=dt.date(2001, 2, 3),
        timestampField=dt.datetime(2020, 1, 2, 3, 4, 5, 678901, tzinfo=dt.timezone.utc),
        binaryField=b"\x00\xff",
        arrayField=[{"arr_struct_f1": "x", "arr_struct_f2": 7}, None],
        mapField=[("k", {"map_field_value_struct_f1": 1.25, "map_field_value_struct_f2": True})],
        structField={"field1": "s", "field2": 9, "child_struct": {"child_field1": 2.5, "child_field2": False}},
    )
    log2 = f".{file_id}_{base_instant}.log.2_0-50-60"
    size2 = write_log_file(
        LocalStorage(),
        str(base / log2),
        [
            AvroDataBlock.create(pa.Table.from_pylist([bob], schema=arrow_schema), log_schema, i1),
            DeleteBlock.create([DeleteRecord("3", "")], i1, log_schema),
        ],
    )
    _deltacommit(base, i1, "", _write_stat("", file_id, base_instant, base_file.name, log2, size2, 2), log_schema)

    # log.3: a Parquet block updating Alice.
    i2 = "20250117090100000"
    alice = as_log_record(before["1"], i2, name="Alicia", longField=before["1"]["longField"] + 5)
    log3 = f".{file_id}_{base_instant}.log.3_0-70-80"
    size3 = write_log_file(
        LocalStorage(), str(base / log3), [ParquetDataBlock.create(pa.Table.from_pylist([alice], schema=arrow_schema), i2, log_schema)]
    )
    _deltacommit(base, i2, "", _write_stat("", file_id, base_instant, base_file.name, log3, size3, 3), log_schema)

    after = _read_with_hudi_rs(base)
    assert set(after) == {"1", "2", "4"}
    assert after["2"] == bob
    assert after["1"]["name"] == "Alicia" and after["1"]["_hoodie_commit_time"] == i2
    assert after["4"] == before["4"]
