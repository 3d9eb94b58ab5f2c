"""HFILE_DATA log blocks (the metadata table's log files): every such block of the
conformance tables decodes to records whose key is the HFile key, re-encodes to the same
records; blocks built here round trip through a log file on disk, are keyed and encoded
as Java's ``HoodieHFileDataBlock`` does (key field blanked in the value), and answer key
and prefix lookups."""
from __future__ import annotations

import io
import json
import zipfile
from pathlib import Path

import fastavro
import pyarrow as pa
import pytest
from shared import cases_or_skip, shared_dir

from hoodie.errors import FormatError
from hoodie.formats.avro_schema import avro_schema_to_arrow
from hoodie.formats.hfile import HFileReader
from hoodie.formats.log import HeaderKey, HFileDataBlock, read_log_bytes, read_log_file, write_log_file
from hoodie.layout import parse_log_file_name
from hoodie.storage.local import LocalStorage

TABLES = shared_dir() / "conformance" / "tables"
INSTANT = "20250101000000000"

FILES_SCHEMA = json.dumps({
    "type": "record",
    "name": "HoodieMetadataRecord",
    "namespace": "org.apache.hudi.avro.model",
    "fields": [
        {"name": "key", "type": {"type": "string", "avro.java.string": "String"}},
        {"name": "type", "type": "int"},
        {"name": "filesystemMetadata", "type": ["null", {
            "type": "map",
            "values": {"type": "record", "name": "HoodieMetadataFileInfo", "fields": [
                {"name": "size", "type": "long"},
                {"name": "isDeleted", "type": "boolean"},
            ]},
        }], "default": None},
    ],
})


def _files_records(partitions: list[str]) -> pa.Table:
    rows = [{"key": "__all_partitions__", "type": 1, "filesystemMetadata": [(p, {"size": 0, "isDeleted": False}) for p in partitions]}]
    for i, p in enumerate(partitions):
        files = [(f"f{i}-{j}_1-2-3_{INSTANT}.parquet", {"size": 1000 + j, "isDeleted": j == 2}) for j in range(3)]
        rows.append({"key": p, "type": 2, "filesystemMetadata": files})
    return pa.Table.from_pylist(rows, schema=avro_schema_to_arrow(FILES_SCHEMA))


def test_block_round_trips_through_a_log_file(tmp_path: Path) -> None:
    partitions = [f"city={c}" for c in ("zurich", "austin", "sao_paulo", "chennai")]
    records = _files_records(partitions)
    block = HFileDataBlock.create(records, FILES_SCHEMA, INSTANT)
    assert block.header == {HeaderKey.INSTANT_TIME: INSTANT, HeaderKey.SCHEMA: FILES_SCHEMA}
    path = tmp_path / ".files-0000-0_20250101000000000.log.1_0-1-0"
    write_log_file(LocalStorage(), str(path), [block])
    (decoded,) = read_log_file(LocalStorage(), str(path))
    assert decoded == block
    expected = records.take(pa.compute.sort_indices(records.column("key")))  # type: ignore[attr-defined]
    assert decoded.records().equals(expected)
    # as Java writes it: keys sorted by bytes, the schema in the file info, the key field
    # blanked inside each value
    hfile = HFileReader.from_bytes(decoded.content)
    assert [k for k, _ in hfile.read_all()] == sorted(["__all_partitions__", *partitions])
    assert hfile.schema == FILES_SCHEMA
    parsed = fastavro.parse_schema(json.loads(FILES_SCHEMA))
    for _, value in hfile.read_all():
        assert fastavro.schemaless_reader(io.BytesIO(value), parsed, parsed)["key"] == ""  # type: ignore[call-overload, index]
    # lookups read what they need
    assert decoded.records(keys=["city=austin", "city=nowhere", "city=zurich"]).column("key").to_pylist() == ["city=austin", "city=zurich"]
    assert decoded.records(prefixes=["city=c", "city=s"]).column("key").to_pylist() == ["city=chennai", "city=sao_paulo"]


def test_empty_block_round_trips() -> None:
    block = HFileDataBlock.create(_files_records([]).slice(0, 0), FILES_SCHEMA, INSTANT)
    assert block.records().num_rows == 0
    assert block.records().schema == avro_schema_to_arrow(FILES_SCHEMA)


def test_repeated_key_is_refused() -> None:
    records = pa.concat_tables([_files_records(["a"]), _files_records(["b"])])
    with pytest.raises(FormatError, match="'__all_partitions__' repeats"):
        HFileDataBlock.create(records, FILES_SCHEMA, INSTANT)


# --------------------------------------------------------------------------------------
# the conformance tables' metadata-table log files
# --------------------------------------------------------------------------------------


def _mdt_logs() -> list[tuple[Path, str]]:
    out = []
    for z in sorted(TABLES.rglob("*.zip")) if TABLES.is_dir() else []:
        with zipfile.ZipFile(z) as zf:
            out += [
                (z, m) for m in zf.namelist()
                if "__MACOSX" not in m and "/.hoodie/metadata/" in m and parse_log_file_name(m.rsplit("/", 1)[-1]) is not None
            ]
    return out


MDT_LOGS = _mdt_logs()


@pytest.mark.parametrize(
    "zip_path, member",
    cases_or_skip(MDT_LOGS, [f"{z.stem}:{m.rsplit('/', 1)[-1][:48]}" for z, m in MDT_LOGS], "metadata table log files", argcount=2),
)
def test_metadata_table_log_blocks_decode(zip_path: Path, member: str) -> None:
    with zipfile.ZipFile(zip_path) as zf:
        blocks = [b for b in read_log_bytes(zf.read(member)) if isinstance(b, HFileDataBlock)]
    for block in blocks:
        records = block.records()
        keys = [k for k, _ in HFileReader.from_bytes(block.content).read_all()]
        assert records.column("key").to_pylist() == keys and all(keys)
        assert set(records.column("type").to_pylist()) <= set(range(1, 8))
        again = HFileDataBlock.create(records, block.header[HeaderKey.SCHEMA], block.instant_time or INSTANT)
        assert again.records().equals(records)
        if keys:
            assert block.records(keys=[keys[-1]]).equals(records.slice(len(keys) - 1))


def test_conformance_metadata_logs_hold_hfile_blocks() -> None:
    if not MDT_LOGS:
        pytest.skip("no metadata table log files in the conformance tables")
    count = 0
    for z, member in MDT_LOGS:
        with zipfile.ZipFile(z) as zf:
            count += sum(isinstance(b, HFileDataBlock) for b in read_log_bytes(zf.read(member)))
    assert count > 100
