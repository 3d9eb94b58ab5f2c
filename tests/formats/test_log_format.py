"""Log files: the Java-written vectors decode to their known content and re-encode to the
same bytes, every log file of every MOR conformance table decodes, every block kind round
trips, the frame layout matches the spec field by field, and the writer's rules hold."""
from __future__ import annotations

import datetime as dt
import struct
import zipfile
from decimal import Decimal
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from shared import cases_or_skip, no_conformance_reason, shared_dir

from hoodie.errors import FileAlreadyExistsError, FormatError, SchemaError
from hoodie.formats.avro_schema import (
    arrow_to_avro_schema,
    avro_schema_json,
    avro_schema_to_arrow,
)
from hoodie.formats.log import (
    MAGIC,
    AvroDataBlock,
    BlockInfo,
    BlockType,
    CdcDataBlock,
    CommandBlock,
    CommandType,
    CorruptBlock,
    DeleteBlock,
    DeleteRecord,
    HeaderKey,
    HFileDataBlock,
    LogFileReader,
    OrderingType,
    ParquetDataBlock,
    encode_block,
    encode_log_file,
    frame_block,
    iter_log_file,
    read_log_bytes,
    read_log_file,
    write_log_file,
)
from hoodie.layout import parse_log_file_name
from hoodie.storage.local import LocalStorage

VECTORS = shared_dir() / "conformance" / "vectors" / "log_files"
TABLES = shared_dir() / "conformance" / "tables"


def _vector(name: str) -> Path:
    if not VECTORS.is_dir():
        pytest.skip(f"no log vectors under {VECTORS}")
    (path,) = [p for p in (VECTORS / name).iterdir() if p.name.startswith(".")]
    return path


def _mor_log_members() -> list[tuple[Path, str]]:
    """(zip, member) of every log file in every MOR conformance zip, metadata table included."""
    out = []
    for z in sorted(TABLES.rglob("*.zip")) if TABLES.is_dir() else []:
        if "/mor/" not in z.as_posix():
            continue
        with zipfile.ZipFile(z) as zf:
            for member in zf.namelist():
                if "__MACOSX" in member:
                    continue
                if parse_log_file_name(member.rsplit("/", 1)[-1]) is not None:
                    out.append((z, member))
    return out


MOR_LOGS = _mor_log_members()
TRIPS_INSTANT = "20250101000000000"


def _trips_table(n: int = 2) -> pa.Table:
    return pa.table(
        {
            "_hoodie_commit_time": [TRIPS_INSTANT] * n,
            "_hoodie_commit_seqno": [f"{TRIPS_INSTANT}_0_{i}" for i in range(n)],
            "_hoodie_record_key": [f"key-{i}" for i in range(n)],
            "_hoodie_partition_path": ["city=x"] * n,
            "_hoodie_file_name": ["f1-0"] * n,
            "ts": pa.array(range(n), pa.int64()),
            "rider": [f"rider-{i}" for i in range(n)],
            "fare": [1.5 * i for i in range(n)],
        }
    )


def _trips_schema() -> str:
    data = _trips_table().drop_columns([c for c in _trips_table().column_names if c.startswith("_hoodie")])
    return avro_schema_json(arrow_to_avro_schema(data.schema, "trips", include_meta_fields=True))


# --------------------------------------------------------------------------------------
# Java-written vectors (spec §11)
# --------------------------------------------------------------------------------------


def test_avro_data_vector_decodes_to_known_record() -> None:
    (block,) = read_log_file(LocalStorage(), str(_vector("valid_log_avro_data")))
    assert isinstance(block, AvroDataBlock)
    assert block.instant_time == "20250316025828811"
    assert list(block.header) == [HeaderKey.INSTANT_TIME, HeaderKey.SCHEMA]
    assert block.footer == {}
    assert block.records.num_rows == 1
    row = block.records.to_pylist()[0]
    assert row["_hoodie_record_key"] == "334e26e9-8355-45cc-97c6-c31daf0df330"
    assert row["ts"] == 1695159649088
    assert row["fare"] == 29.1
    # In log records _hoodie_file_name is the file id only (spec §4.2).
    assert row["_hoodie_file_name"] == "ff32ab89-5ad0-4968-83b4-89a34c95d32f-0"
    assert block.records.schema == avro_schema_to_arrow(block.schema_json)


def test_delete_vector_decodes_to_three_keys_with_default_ordering() -> None:
    (block,) = read_log_file(LocalStorage(), str(_vector("valid_log_delete")))
    assert isinstance(block, DeleteBlock)
    assert block.instant_time == "20250618054714114"
    assert list(block.header) == [HeaderKey.SCHEMA, HeaderKey.INSTANT_TIME]  # HashMap order
    assert [k.record_key for k in block.keys] == [
        "e96c4396-3fad-413a-a942-4cb36106d721",
        "9909a8b1-2d15-4d3d-8ec9-efc48c536a00",
        "334e26e9-8355-45cc-97c6-c31daf0df330",
    ]
    assert {k.partition_path for k in block.keys} == {"city=san_francisco"}
    # Branch 2 value 0 (bytes 04 00): the spec's "long 0"; in the wrapper union it is IntWrapper.
    assert all(k.ordering_value == 0 and k.ordering_type is OrderingType.INT for k in block.keys)


def test_parquet_vector_decodes_to_one_row() -> None:
    (block,) = read_log_file(LocalStorage(), str(_vector("valid_log_parquet_data")))
    assert isinstance(block, ParquetDataBlock)
    assert block.instant_time == "20250113230424191"
    assert block.records.num_rows == 1
    row = block.records.to_pylist()[0]
    assert row["_hoodie_record_key"] == "334e26e9-8355-45cc-97c6-c31daf0df330"
    assert row["rider"] == "rider-A"


def test_rollback_vector_decodes_to_command_block() -> None:
    (block,) = read_log_file(LocalStorage(), str(_vector("valid_log_rollback")))
    assert isinstance(block, CommandBlock)
    assert block.command is CommandType.ROLLBACK_PREVIOUS_BLOCK
    assert block.target_instant == "20250126040826878"
    assert block.instant_time == "20250126040936578"
    assert block.header[HeaderKey.COMMAND_BLOCK_TYPE] == "0"


@pytest.mark.parametrize("name", ["valid_log_avro_data", "valid_log_delete", "valid_log_rollback"])
def test_vector_reencodes_byte_exact(name: str) -> None:
    data = _vector(name).read_bytes()
    assert encode_log_file(read_log_bytes(data)) == data


def test_parquet_vector_frame_is_byte_exact_with_original_content() -> None:
    """Java's parquet-mr output cannot be reproduced by pyarrow; everything around the
    content can: re-framing the original content gives the original file."""
    data = _vector("valid_log_parquet_data").read_bytes()
    with LogFileReader.from_bytes(data) as reader:
        (info,) = list(reader.scan())
    assert isinstance(info, BlockInfo)
    content = data[info.content_offset : info.content_offset + info.content_length]
    assert content[:4] == b"PAR1" and content[-4:] == b"PAR1"
    assert frame_block(info.block_type, info.header, content, info.footer) == data
    # and our own encoding of the decoded block decodes to the same rows
    (block,) = read_log_bytes(data)
    (again,) = read_log_bytes(encode_block(block))
    assert again.records.to_pylist() == block.records.to_pylist()


def test_delete_vector_layout_matches_spec_numbers() -> None:
    data = _vector("valid_log_delete").read_bytes()
    assert data[:6] == MAGIC
    (block_length,) = struct.unpack_from(">q", data, 6)
    (total,) = struct.unpack_from(">q", data, len(data) - 8)
    assert (block_length, total, len(data)) == (1084, 1090, 1098)


# --------------------------------------------------------------------------------------
# Every log file of every MOR conformance table
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "zip_path, member",
    cases_or_skip(MOR_LOGS, [f"{z.stem}:{m.rsplit('/', 1)[-1][:40]}" for z, m in MOR_LOGS], "merge-on-read log files", argcount=2),
)
def test_conformance_log_file_decodes_without_corruption(zip_path: Path, member: str, tmp_path: Path) -> None:
    with zipfile.ZipFile(zip_path) as zf:
        data = zf.read(member)
    path = tmp_path / member.rsplit("/", 1)[-1]
    path.write_bytes(data)
    blocks = read_log_file(LocalStorage(), str(path))
    assert blocks
    assert not [b for b in blocks if isinstance(b, CorruptBlock)]
    for block in blocks:
        assert block.instant_time, "hudi-rs requires INSTANT_TIME on every block"
        if isinstance(block, AvroDataBlock):
            assert block.records.schema == avro_schema_to_arrow(block.schema_json)
            assert block.records.num_rows > 0
    # Everything but Parquet content (written by parquet-mr) re-encodes to the same bytes.
    if not any(isinstance(b, ParquetDataBlock) for b in blocks):
        assert encode_log_file(blocks) == data


def test_conformance_tables_hold_every_readable_block_kind() -> None:
    if not MOR_LOGS:
        pytest.skip(no_conformance_reason("merge-on-read log files"))
    kinds = set()
    for z, member in MOR_LOGS:
        with zipfile.ZipFile(z) as zf:
            kinds.update(type(b) for b in read_log_bytes(zf.read(member)))
    assert {AvroDataBlock, ParquetDataBlock, DeleteBlock, CommandBlock, HFileDataBlock} <= kinds


def test_avro_log_types_match_base_file_types(conformance_table) -> None:  # type: ignore[no-untyped-def]
    """Decoded Avro log records have the base file's Arrow types, so they concatenate."""
    base = conformance_table("sample_table/mor/avro/v9_txns_simple_meta")
    logs = [p for p in base.rglob(".*.log.*") if ".hoodie" not in p.parts]
    avro_blocks = [b for p in logs for b in read_log_file(LocalStorage(), str(p)) if isinstance(b, AvroDataBlock)]
    assert avro_blocks
    base_file = next(p for p in base.rglob("*.parquet") if ".hoodie" not in p.parts)
    base_schema = pq.read_schema(base_file).remove_metadata()
    for block in avro_blocks:
        for f in block.records.schema:
            assert f.type == base_schema.field(f.name).type, f.name
        pa.concat_tables([pq.read_table(base_file).select(block.records.column_names).cast(block.records.schema), block.records])


# --------------------------------------------------------------------------------------
# The frame, field by field (spec §6.1)
# --------------------------------------------------------------------------------------


def test_frame_layout_field_by_field() -> None:
    header = {HeaderKey.INSTANT_TIME: "20240101000000000", HeaderKey.SCHEMA: "{}"}
    content = b"\x01\x02\x03"
    data = frame_block(BlockType.AVRO_DATA, header, content)
    pos = 0
    assert data[pos : pos + 6] == b"#HUDI#"
    pos += 6
    (block_length,) = struct.unpack_from(">q", data, pos)
    assert block_length == len(data) - 14
    pos += 8
    assert struct.unpack_from(">ii", data, pos) == (1, 3)  # format version 1, AVRO_DATA
    pos += 8
    assert struct.unpack_from(">i", data, pos) == (2,)
    pos += 4
    assert struct.unpack_from(">ii", data, pos) == (0, 17)
    pos += 8
    assert data[pos : pos + 17] == b"20240101000000000"
    pos += 17
    assert struct.unpack_from(">ii", data, pos) == (2, 2)
    pos += 8 + 2
    assert struct.unpack_from(">q", data, pos) == (3,)
    pos += 8
    assert data[pos : pos + 3] == content
    pos += 3
    assert struct.unpack_from(">i", data, pos) == (0,)  # empty footer
    pos += 4
    assert struct.unpack_from(">q", data, pos) == (block_length + 6,)
    assert pos + 8 == len(data)


def test_header_order_is_kept_on_decode_and_ordinal_on_create() -> None:
    block = CommandBlock.rollback("20240102000000000", "20240101000000000")
    assert list(block.header) == [HeaderKey.INSTANT_TIME, HeaderKey.TARGET_INSTANT_TIME, HeaderKey.COMMAND_BLOCK_TYPE]
    shuffled = CommandBlock(
        "20240101000000000",
        header={
            HeaderKey.COMMAND_BLOCK_TYPE: "0",
            HeaderKey.INSTANT_TIME: "20240102000000000",
            HeaderKey.TARGET_INSTANT_TIME: "20240101000000000",
        },
    )
    data = encode_block(shuffled)
    (decoded,) = read_log_bytes(data)
    assert list(decoded.header) == list(shuffled.header)
    assert encode_block(decoded) == data
    assert data != encode_block(block)  # same entries, different order: different bytes


# --------------------------------------------------------------------------------------
# Round trips of every block kind
# --------------------------------------------------------------------------------------


def test_avro_block_round_trip() -> None:
    table = _trips_table(5)
    block = AvroDataBlock.create(table, _trips_schema(), TRIPS_INSTANT)
    (decoded,) = read_log_bytes(encode_block(block))
    assert isinstance(decoded, AvroDataBlock)
    assert decoded.records.equals(table)
    assert decoded == block
    assert encode_block(decoded) == encode_block(block)


def test_avro_block_with_zero_records() -> None:
    table = _trips_table(0)
    (decoded,) = read_log_bytes(encode_block(AvroDataBlock.create(table, _trips_schema(), TRIPS_INSTANT)))
    assert decoded.records.num_rows == 0
    assert decoded.records.schema == avro_schema_to_arrow(_trips_schema())


def test_avro_block_content_layout() -> None:
    block = AvroDataBlock.create(_trips_table(2), _trips_schema(), TRIPS_INSTANT)
    with LogFileReader.from_bytes(encode_block(block)) as reader:
        (info,) = list(reader.scan())
        content = reader._source.read_at(info.content_offset, info.content_length)
    assert struct.unpack_from(">ii", content, 0) == (3, 2)  # block version 3, 2 records
    (first_len,) = struct.unpack_from(">i", content, 8)
    (second_len,) = struct.unpack_from(">i", content, 12 + first_len)
    assert 16 + first_len + second_len == len(content)


def test_parquet_block_round_trip() -> None:
    table = _trips_table(4)
    block = ParquetDataBlock.create(table, TRIPS_INSTANT, _trips_schema())
    data = encode_block(block)
    (decoded,) = read_log_bytes(data)
    assert isinstance(decoded, ParquetDataBlock)
    assert decoded.records.equals(table)
    assert decoded.header == block.header
    with LogFileReader.from_bytes(data) as reader:
        (info,) = list(reader.scan())
        content = reader._source.read_at(info.content_offset, info.content_length)
    md = pq.ParquetFile(pa.BufferReader(content)).metadata
    assert md.row_group(0).column(0).compression == "GZIP"
    assert b"ARROW:schema" not in (md.metadata or {})


@pytest.mark.parametrize(("codec", "stored"), [("snappy", "SNAPPY"), ("zstd", "ZSTD"), ("uncompressed", "UNCOMPRESSED")])
def test_parquet_block_takes_the_table_codec(codec: str, stored: str) -> None:
    table = _trips_table(3)
    data = encode_block(ParquetDataBlock.create(table, TRIPS_INSTANT, _trips_schema(), compression=codec))
    (decoded,) = read_log_bytes(data)
    assert decoded.records.equals(table)
    with LogFileReader.from_bytes(data) as reader:
        (info,) = list(reader.scan())
        content = reader._source.read_at(info.content_offset, info.content_length)
    assert pq.ParquetFile(pa.BufferReader(content)).metadata.row_group(0).column(0).compression == stored


def test_delete_block_round_trip_every_ordering_type() -> None:
    utc = dt.timezone.utc
    cases = [
        DeleteRecord("k", "p"),
        DeleteRecord("k", "p", True),
        DeleteRecord("k", "p", 7, OrderingType.INT),
        DeleteRecord("k", "p", 1695159649088),
        DeleteRecord("k", "p", 1.5, OrderingType.FLOAT),
        DeleteRecord("k", "p", 2.25),
        DeleteRecord("k", "p", b"\x00\x01"),
        DeleteRecord("k", "p", "z"),
        DeleteRecord("k", "p", dt.date(2024, 2, 29)),
        DeleteRecord("k", "p", Decimal("-123.456")),
        DeleteRecord("k", "p", 3_600_000_000, OrderingType.TIME_MICROS),
        DeleteRecord("k", "p", dt.datetime(2024, 1, 2, 3, 4, 5, 6, tzinfo=utc)),
        DeleteRecord("k", "p", (5, "a", dt.date(2020, 1, 1))),
        DeleteRecord("k", "p", None),
        DeleteRecord(None, None),
    ]
    for record in cases:
        block = DeleteBlock.create([record, record], TRIPS_INSTANT)
        data = encode_block(block)
        (decoded,) = read_log_bytes(data)
        assert isinstance(decoded, DeleteBlock)
        assert decoded.keys[0].ordering_type is record.ordering_type, record
        expected = record.ordering_value
        if isinstance(expected, Decimal):
            assert decoded.keys[0].ordering_value == expected
        elif record.ordering_type is OrderingType.FLOAT:
            assert decoded.keys[0].ordering_value == pytest.approx(expected)
        else:
            assert decoded.keys[0] == record
        assert encode_block(decoded) == data


def test_empty_delete_block_round_trip() -> None:
    block = DeleteBlock.create([], TRIPS_INSTANT)
    (decoded,) = read_log_bytes(encode_block(block))
    assert decoded == block


def test_command_block_round_trip() -> None:
    block = CommandBlock.rollback("20240102000000000", "20240101000000000")
    data = encode_block(block)
    assert len(data) == 105  # same size as the Java rollback vector
    (decoded,) = read_log_bytes(data)
    assert decoded == block


def test_raw_blocks_round_trip_and_are_not_data() -> None:
    block = CdcDataBlock(b"\x00CDC\xff" * 10, {HeaderKey.INSTANT_TIME: TRIPS_INSTANT})
    (decoded,) = read_log_bytes(encode_block(block))
    assert type(decoded) is CdcDataBlock
    assert decoded == block
    assert not hasattr(decoded, "records")


def test_hfile_block_that_is_no_hfile_is_refused() -> None:
    data = encode_block(HFileDataBlock(b"\x00HFILE\xff" * 10, {HeaderKey.INSTANT_TIME: TRIPS_INSTANT}))
    with pytest.raises(FormatError, match=r"<bytes>: HFILE_DATA block at byte 0: HFILE_DATA content: 70 bytes is too short"):
        read_log_bytes(data)


def test_several_blocks_in_one_file_keep_order(tmp_path: Path) -> None:
    blocks = [
        AvroDataBlock.create(_trips_table(3), _trips_schema(), TRIPS_INSTANT),
        DeleteBlock.create([DeleteRecord("key-1", "city=x")], TRIPS_INSTANT, _trips_schema()),
        CommandBlock.rollback("20250102000000000", TRIPS_INSTANT),
        ParquetDataBlock.create(_trips_table(2), "20250103000000000", _trips_schema()),
    ]
    path = tmp_path / ".f1-0_20250101000000000.log.1_0-1-2"
    size = write_log_file(LocalStorage(), str(path), blocks)
    assert size == path.stat().st_size
    decoded = read_log_file(LocalStorage(), str(path))
    assert [type(b) for b in decoded] == [type(b) for b in blocks]
    assert decoded[:3] == blocks[:3]
    assert decoded[3].records.equals(blocks[3].records)
    assert [type(b) for b in iter_log_file(LocalStorage(), str(path), whole_file_limit=0)] == [type(b) for b in blocks]


def test_scan_reports_headers_without_decoding(tmp_path: Path) -> None:
    blocks = [
        AvroDataBlock.create(_trips_table(3), _trips_schema(), TRIPS_INSTANT),
        CommandBlock.rollback("20250102000000000", TRIPS_INSTANT),
    ]
    data = encode_log_file(blocks)
    with LogFileReader.from_bytes(data) as reader:
        infos = list(reader.scan())
        assert [i.block_type for i in infos] == [BlockType.AVRO_DATA, BlockType.COMMAND]
        assert [i.instant_time for i in infos] == [TRIPS_INSTANT, "20250102000000000"]
        assert infos[0].offset == 0 and infos[1].offset == infos[0].size
        assert infos[1].end == len(data)
        assert reader.read_block(infos[1]) == blocks[1]


# --------------------------------------------------------------------------------------
# Block model rules
# --------------------------------------------------------------------------------------


def test_avro_block_header_schema_must_agree() -> None:
    with pytest.raises(ValueError, match="SCHEMA"):
        AvroDataBlock(_trips_table(), _trips_schema(), {HeaderKey.SCHEMA: "{}"})
    block = AvroDataBlock(_trips_table(), _trips_schema(), {HeaderKey.INSTANT_TIME: TRIPS_INSTANT})
    assert block.header[HeaderKey.SCHEMA] == _trips_schema()


def test_command_block_header_must_agree() -> None:
    with pytest.raises(ValueError, match="TARGET_INSTANT_TIME"):
        CommandBlock("1", header={HeaderKey.TARGET_INSTANT_TIME: "2"})


def test_corrupt_block_cannot_be_written() -> None:
    with pytest.raises(ValueError):
        encode_block(CorruptBlock(0, 10))


def test_delete_block_refuses_mixed_ordering_types() -> None:
    block = DeleteBlock.create([DeleteRecord("a", "p"), DeleteRecord("b", "p", 2**40)], TRIPS_INSTANT)
    with pytest.raises(Exception, match="mixes ordering value types"):
        encode_block(block)
    # the same values with one explicit type are fine
    ok = DeleteBlock.create(
        [DeleteRecord("a", "p", 0, OrderingType.LONG), DeleteRecord("b", "p", 2**40, OrderingType.LONG)], TRIPS_INSTANT
    )
    (decoded,) = read_log_bytes(encode_block(ok))
    assert decoded == ok


def test_ordering_type_for_arrow_type() -> None:
    assert OrderingType.for_arrow_type(pa.int64()) is OrderingType.LONG
    assert OrderingType.for_arrow_type(pa.int16()) is OrderingType.INT
    assert OrderingType.for_arrow_type(pa.timestamp("us", tz="UTC")) is OrderingType.TIMESTAMP_MICROS
    assert OrderingType.for_arrow_type(pa.string()) is OrderingType.STRING
    with pytest.raises(TypeError):
        OrderingType.for_arrow_type(pa.list_(pa.int32()))


# --------------------------------------------------------------------------------------
# Writer rules
# --------------------------------------------------------------------------------------


def test_write_log_file_refuses_existing_path(tmp_path: Path) -> None:
    path = tmp_path / ".f1-0_20250101000000000.log.1_0-1-2"
    block = CommandBlock.rollback("20250102000000000", TRIPS_INSTANT)
    write_log_file(LocalStorage(), str(path), [block])
    before = path.read_bytes()
    with pytest.raises(FileAlreadyExistsError):
        write_log_file(LocalStorage(), str(path), [block, block])
    assert path.read_bytes() == before


def test_write_log_file_checks_name_blocks_and_instant(tmp_path: Path) -> None:
    block = CommandBlock.rollback("20250102000000000", TRIPS_INSTANT)
    with pytest.raises(ValueError, match="log file name"):
        write_log_file(LocalStorage(), str(tmp_path / "data.log"), [block])
    good = str(tmp_path / ".f1-0_20250101000000000.log.1_0-1-2")
    with pytest.raises(ValueError, match="at least one block"):
        write_log_file(LocalStorage(), good, [])
    no_instant = HFileDataBlock(b"x")
    with pytest.raises(ValueError, match="INSTANT_TIME"):
        write_log_file(LocalStorage(), good, [no_instant])
    assert not Path(good).exists()


def test_avro_block_refuses_columns_outside_schema() -> None:
    table = _trips_table().append_column("extra", pa.array([1, 2]))
    with pytest.raises(SchemaError, match="extra"):
        encode_block(AvroDataBlock.create(table, _trips_schema(), TRIPS_INSTANT))


def test_read_missing_file_raises() -> None:
    with pytest.raises(FileNotFoundError):
        read_log_file(LocalStorage(), "/nonexistent/.f1-0_1.log.1_0-1-2")


def test_malformed_content_in_a_well_framed_block_is_a_format_error() -> None:
    schema = _trips_schema()
    bad = frame_block(
        BlockType.AVRO_DATA,
        {HeaderKey.INSTANT_TIME: TRIPS_INSTANT, HeaderKey.SCHEMA: schema},
        struct.pack(">iii", 3, 1, 2) + b"\x02\xff",  # one 2-byte record that is not the schema
    )
    with pytest.raises(FormatError, match="AVRO_DATA block at byte 0"):
        read_log_bytes(bad)
    unknown_type = frame_block(9, {HeaderKey.INSTANT_TIME: TRIPS_INSTANT}, b"")
    with pytest.raises(FormatError, match="unknown block type 9"):
        read_log_bytes(unknown_type)
    kryo_delete = frame_block(BlockType.DELETE, {HeaderKey.INSTANT_TIME: TRIPS_INSTANT}, struct.pack(">ii", 2, 0))
    with pytest.raises(FormatError, match="Kryo"):
        read_log_bytes(kryo_delete)


# --------------------------------------------------------------------------------------
# Reader modes and storages
# --------------------------------------------------------------------------------------


def test_streamed_mode_reads_headers_wider_than_the_first_probe(tmp_path: Path) -> None:
    wide = pa.table({f"column_with_a_long_name_{i:04d}": pa.array([i], pa.int64()) for i in range(1000)})
    schema = avro_schema_json(arrow_to_avro_schema(wide.schema, "wide", include_meta_fields=False))
    assert len(schema) > 4 * 16 * 1024
    block = AvroDataBlock.create(wide, schema, TRIPS_INSTANT)
    path = tmp_path / ".f1-0_20250101000000000.log.1_0-1-2"
    write_log_file(LocalStorage(), str(path), [block, block])
    assert read_log_file(LocalStorage(), str(path), whole_file_limit=0) == [block, block]


def test_fsspec_storage_round_trip() -> None:
    from hoodie.storage.fsspec_storage import FsspecStorage

    storage = FsspecStorage("memory")
    path = "memory://logtest/table/.f1-0_20250101000000000.log.1_0-1-2"
    blocks = [AvroDataBlock.create(_trips_table(3), _trips_schema(), TRIPS_INSTANT), CommandBlock.rollback("20250102000000000", TRIPS_INSTANT)]
    try:
        write_log_file(storage, path, blocks)
        assert read_log_file(storage, path) == blocks
        assert read_log_file(storage, path, whole_file_limit=0) == blocks
        with pytest.raises(FileAlreadyExistsError):
            write_log_file(storage, path, blocks)
    finally:
        storage.delete_dir("memory://logtest")
