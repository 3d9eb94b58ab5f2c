"""The schemaless Avro codec of log blocks: every Avro type round trips through Arrow with
the types of ``avro_schema_to_arrow``, the bytes equal fastavro's (an independent encoder),
and bad data or schemas are refused with the column named."""
from __future__ import annotations

import datetime as dt
import io
import struct
from decimal import Decimal
from typing import Any

import fastavro
import pyarrow as pa
import pytest
from avro_blocks import split_avro_content

from hoodie.errors import FormatError, SchemaError
from hoodie.formats.avro_nodes import parse_avro_schema
from hoodie.formats.avro_schema import avro_schema_json, avro_schema_to_arrow
from hoodie.formats.log import (
    AvroDataBlock,
    BlockType,
    HeaderKey,
    encode_block,
    frame_block,
    read_log_bytes,
)
from hoodie.formats.log.avro_decode import decode_columns
from hoodie.formats.log.avro_encode import encode_records, minimal_twos_complement

INSTANT = "20250101000000000"
UTC = dt.timezone.utc


def _meta(name: str) -> dict[str, Any]:
    return {"name": name, "type": ["null", "string"], "doc": "", "default": None}


def _opt(name: str, t: Any) -> dict[str, Any]:
    return {"name": name, "type": ["null", t], "default": None}


NS = "hoodie.t.t_record"
SCHEMA: dict[str, Any] = {
    "type": "record",
    "name": "t_record",
    "namespace": "hoodie.t",
    "fields": [
        _meta("_hoodie_commit_time"),
        _meta("_hoodie_record_key"),
        _opt("b", "boolean"),
        _opt("i", "int"),
        _opt("l", "long"),
        _opt("f", "float"),
        _opt("d", "double"),
        _opt("s", "string"),
        _opt("raw", "bytes"),
        _opt("e", {"type": "enum", "name": "Color", "symbols": ["RED", "GREEN"]}),
        _opt("fx", {"type": "fixed", "name": "fixed", "namespace": f"{NS}.fx", "size": 3}),
        _opt("dec", {"type": "fixed", "name": "fixed", "namespace": f"{NS}.dec", "size": 5, "logicalType": "decimal", "precision": 10, "scale": 2}),
        _opt("decb", {"type": "bytes", "logicalType": "decimal", "precision": 20, "scale": 3}),
        _opt("date", {"type": "int", "logicalType": "date"}),
        _opt("tmil", {"type": "int", "logicalType": "time-millis"}),
        _opt("tmic", {"type": "long", "logicalType": "time-micros"}),
        _opt("tsm", {"type": "long", "logicalType": "timestamp-millis"}),
        _opt("tsu", {"type": "long", "logicalType": "timestamp-micros"}),
        _opt("ltsu", {"type": "long", "logicalType": "local-timestamp-micros"}),
        _opt("uuid", {"type": "string", "logicalType": "uuid"}),
        _opt("odd", {"type": "long", "logicalType": "no-such-type"}),
        _opt(
            "rec",
            {
                "type": "record",
                "name": "rec",
                "namespace": NS,
                "fields": [
                    _opt("x", "int"),
                    {"name": "y", "type": "string"},
                    _opt("inner", {"type": "record", "name": "inner", "namespace": f"{NS}.rec", "fields": [_opt("z", "double")]}),
                ],
            },
        ),
        _opt("arr", {"type": "array", "items": ["null", "long"]}),
        _opt("arr_rec", {"type": "array", "items": ["null", "hoodie.t.t_record.rec"]}),
        _opt("m", {"type": "map", "values": ["null", "string"]}),
        {"name": "req_int", "type": "int"},
        {"name": "req_str", "type": "string"},
        {"name": "multi", "type": ["null", "int", "string"], "default": None},
        {"name": "wide", "type": ["null", "int", "long"], "default": None},
        {"name": "fd", "type": ["float", "double"]},
    ],
}

ROWS: list[dict[str, Any]] = [
    {
        "_hoodie_commit_time": INSTANT, "_hoodie_record_key": "k1", "b": True, "i": -(2**31), "l": 2**63 - 1,
        "f": 1.5, "d": -2.25, "s": "héllo ☃", "raw": b"\x00\xff", "e": "GREEN", "fx": b"abc",
        "dec": Decimal("-12345678.90"), "decb": Decimal("123456789012345.678"), "date": dt.date(1969, 12, 31),
        "tmil": dt.time(1, 2, 3, 4000), "tmic": dt.time(23, 59, 59, 999999),
        "tsm": dt.datetime(2024, 1, 2, 3, 4, 5, 6000, tzinfo=UTC), "tsu": dt.datetime(1900, 1, 1, 0, 0, 0, 1, tzinfo=UTC),
        "ltsu": dt.datetime(2030, 6, 7, 8, 9, 10, 11), "uuid": "0f8fad5b-d9cb-469f-a165-70867728950e", "odd": -1,
        "rec": {"x": 1, "y": "why", "inner": {"z": 0.5}}, "arr": [1, None, -3], "arr_rec": [{"x": None, "y": "", "inner": None}, None],
        "m": [("a", "1"), ("b", None)], "req_int": 0, "req_str": "", "multi": {"member0": 5}, "wide": 2**40, "fd": 3.0,
    },
    {
        "_hoodie_commit_time": None, "_hoodie_record_key": "k2", "b": None, "i": None, "l": None, "f": None, "d": None,
        "s": None, "raw": None, "e": None, "fx": None, "dec": None, "decb": Decimal("-0.001"), "date": None, "tmil": None,
        "tmic": None, "tsm": None, "tsu": None, "ltsu": None, "uuid": None, "odd": None, "rec": None, "arr": [],
        "arr_rec": None, "m": [], "req_int": -1, "req_str": "x" * 300, "multi": {"member1": "five"}, "wide": None, "fd": -0.0,
    },
    {
        "_hoodie_commit_time": "", "_hoodie_record_key": "", "b": False, "i": 0, "l": 0, "f": 0.0, "d": 0.0, "s": "",
        "raw": b"", "e": "RED", "fx": b"\x00\x00\x00", "dec": Decimal("0.00"), "decb": Decimal("0"),
        "date": dt.date(2262, 4, 11), "tmil": dt.time(0), "tmic": dt.time(0), "tsm": dt.datetime(1970, 1, 1, tzinfo=UTC),
        "tsu": dt.datetime(1970, 1, 1, tzinfo=UTC), "ltsu": dt.datetime(1970, 1, 1), "uuid": "", "odd": 0,
        "rec": {"x": None, "y": "y", "inner": {"z": None}}, "arr": None, "arr_rec": [], "m": None, "req_int": 2**31 - 1,
        "req_str": "z", "multi": None, "wide": -1, "fd": 1e300,
    },
]  # fmt: skip


def _table(rows: list[dict[str, Any]] = ROWS) -> pa.Table:
    return pa.Table.from_pylist(rows, schema=avro_schema_to_arrow(SCHEMA))


def _content_records(data: bytes) -> list[bytes]:
    """The per-record Avro bytes inside an encoded AVRO_DATA block."""
    from hoodie.formats.log import LogFileReader

    with LogFileReader.from_bytes(data) as reader:
        (info,) = list(reader.scan())
        content = data[info.content_offset : info.content_offset + info.content_length]
    return split_avro_content(content)


def _fastavro_value(row: dict[str, Any]) -> dict[str, Any]:
    """The same row in fastavro's conventions (unions hold the bare value, maps are dicts)."""
    out = dict(row)
    out["multi"] = None if row["multi"] is None else next(v for v in row["multi"].values() if v is not None)
    out["m"] = None if row["m"] is None else dict(row["m"])
    return out


def test_every_avro_type_round_trips_with_avro_schema_to_arrow_types() -> None:
    table = _table()
    block = AvroDataBlock.create(table, SCHEMA, INSTANT)
    (decoded,) = read_log_bytes(encode_block(block))
    assert decoded.records.schema == avro_schema_to_arrow(SCHEMA)
    assert decoded.records.equals(table)
    assert decoded.records.to_pylist() == table.to_pylist()


def test_bytes_equal_fastavro() -> None:
    """fastavro is an independent Avro implementation: same record, same bytes. The only
    union fastavro resolves differently is [int, long] for a small value (it picks int),
    which is why ``wide`` holds values that only fit a long or are null."""
    records = _content_records(encode_block(AvroDataBlock.create(_table(), SCHEMA, INSTANT)))
    parsed = fastavro.parse_schema(SCHEMA)
    for row, ours in zip(ROWS, records):
        if row["wide"] is not None and -(2**31) <= row["wide"] < 2**31:
            row = {**row, "wide": None}
            ours = None  # compared below against a re-encoding instead
        buf = io.BytesIO()
        fastavro.schemaless_writer(buf, parsed, _fastavro_value(row))
        if ours is not None:
            assert buf.getvalue() == ours, row["_hoodie_record_key"]
        # and ours decodes what fastavro wrote
        node = parse_avro_schema(SCHEMA)
        data = buf.getvalue()
        (got,) = decode_columns(node, data, [(0, len(data))], avro_schema_to_arrow(SCHEMA)).to_pylist()
        assert got == _table([row]).to_pylist()[0]


def test_int_long_union_takes_the_long_branch() -> None:
    schema = {"type": "record", "name": "r", "fields": [{"name": "w", "type": ["null", "int", "long"]}]}
    node = parse_avro_schema(schema)
    (rec,) = encode_records(node, pa.table({"w": pa.array([5], pa.int64())}), avro_schema_to_arrow(schema))
    assert rec == b"\x04\x0a"  # branch 2 (long), value 5


def test_decimal_bytes_are_minimal_twos_complement() -> None:
    assert minimal_twos_complement(0) == b"\x00"
    assert minimal_twos_complement(127) == b"\x7f"
    assert minimal_twos_complement(128) == b"\x00\x80"
    assert minimal_twos_complement(-1) == b"\xff"
    assert minimal_twos_complement(-128) == b"\x80"
    assert minimal_twos_complement(-129) == b"\xff\x7f"


def test_arrow_columns_are_coerced_to_the_avro_types() -> None:
    schema = {
        "type": "record",
        "name": "r",
        "fields": [
            _opt("i", "int"),
            _opt("s", "string"),
            _opt("ts", {"type": "long", "logicalType": "timestamp-micros"}),
            _opt("tsm", {"type": "long", "logicalType": "timestamp-millis"}),
            _opt("dec", {"type": "bytes", "logicalType": "decimal", "precision": 12, "scale": 4}),
        ],
    }
    table = pa.table(
        {
            "i": pa.array([1, None], pa.int8()),
            "s": pa.array(["a", "b"]).dictionary_encode(),
            "ts": pa.array([1_000, 2_000], pa.timestamp("ns")),  # whole micros: no loss
            "tsm": pa.array([5, 6], pa.timestamp("s", tz="UTC")),
            "dec": pa.array([Decimal("1.5"), None], pa.decimal128(5, 1)),
        }
    )
    (decoded,) = read_log_bytes(encode_block(AvroDataBlock.create(table, schema, INSTANT)))
    assert decoded.records.to_pylist() == [
        {
            "i": 1,
            "s": "a",
            "ts": dt.datetime(1970, 1, 1, 0, 0, 0, 1, tzinfo=UTC),
            "tsm": dt.datetime(1970, 1, 1, 0, 0, 5, tzinfo=UTC),
            "dec": Decimal("1.5000"),
        },
        {"i": None, "s": "b", "ts": dt.datetime(1970, 1, 1, 0, 0, 0, 2, tzinfo=UTC), "tsm": dt.datetime(1970, 1, 1, 0, 0, 6, tzinfo=UTC), "dec": None},
    ]


def test_missing_nullable_column_is_written_as_null() -> None:
    table = _table().drop_columns(["s", "rec"])
    (decoded,) = read_log_bytes(encode_block(AvroDataBlock.create(table, SCHEMA, INSTANT)))
    assert decoded.records.column("s").null_count == 3
    assert decoded.records.column("rec").null_count == 3


@pytest.mark.parametrize(
    "column, values, arrow_type, message",
    [
        ("req_int", [None, 1, 2], pa.int32(), "req_int"),
        ("req_int", [2**40, 1, 2], pa.int64(), "req_int"),
        ("tsu", [1001, 0, 0], pa.timestamp("ns", tz="UTC"), "tsu"),
        ("e", ["BLUE", None, None], pa.string(), "e"),
        ("dec", [Decimal("1.001"), None, None], pa.decimal128(10, 3), "dec"),
    ],
)
def test_bad_values_are_refused_naming_the_column(column: str, values: list[Any], arrow_type: pa.DataType, message: str) -> None:
    table = _table()
    table = table.set_column(table.schema.get_field_index(column), column, pa.array(values, arrow_type))
    with pytest.raises(SchemaError, match=message):
        encode_block(AvroDataBlock.create(table, SCHEMA, INSTANT))


def test_missing_required_column_is_refused() -> None:
    with pytest.raises(SchemaError, match="req_str"):
        encode_block(AvroDataBlock.create(_table().drop_columns(["req_str"]), SCHEMA, INSTANT))


def test_recursive_schema_is_refused() -> None:
    schema = {"type": "record", "name": "node", "fields": [_opt("next", "node")]}
    with pytest.raises(SchemaError, match="recursive"):
        parse_avro_schema(schema)


def test_negative_block_counts_are_decoded() -> None:
    """Avro lets an array block give -count followed by the block's byte size."""
    schema = {"type": "record", "name": "r", "fields": [{"name": "a", "type": {"type": "array", "items": "int"}}]}
    record = b"\x03" + b"\x04" + b"\x02\x04" + b"\x02" + b"\x06" + b"\x00"  # [-2 items (2 bytes): 1, 2], [1 item: 3]
    content = struct.pack(">iii", 3, 1, len(record)) + record
    data = frame_block(BlockType.AVRO_DATA, {HeaderKey.INSTANT_TIME: INSTANT, HeaderKey.SCHEMA: avro_schema_json(schema)}, content)
    (block,) = read_log_bytes(data)
    assert block.records.to_pylist() == [{"a": [1, 2, 3]}]


@pytest.mark.parametrize(
    "record, message",
    [
        (b"", "does not match"),  # nothing where a string length should be
        (b"\x04\x61", "runs past"),  # a 2-byte string with 1 byte left
        (b"\x02\x61\x00", "is 3 bytes but its schema reads 2"),
        (b"\x09\x61", "runs past"),  # negative length
    ],
)
def test_records_that_do_not_match_the_schema(record: bytes, message: str) -> None:
    schema = {"type": "record", "name": "r", "fields": [{"name": "s", "type": "string"}]}
    content = struct.pack(">iii", 3, 1, len(record)) + record
    data = frame_block(BlockType.AVRO_DATA, {HeaderKey.INSTANT_TIME: INSTANT, HeaderKey.SCHEMA: avro_schema_json(schema)}, content)
    with pytest.raises(FormatError, match=message):
        read_log_bytes(data)


def test_avro_block_without_schema_header_is_a_format_error() -> None:
    data = frame_block(BlockType.AVRO_DATA, {HeaderKey.INSTANT_TIME: INSTANT}, struct.pack(">ii", 3, 0))
    with pytest.raises(FormatError, match="SCHEMA"):
        read_log_bytes(data)


def test_decoding_is_reasonably_fast() -> None:
    import time

    n = 20_000
    table = pa.table(
        {
            "_hoodie_commit_time": [INSTANT] * n,
            "_hoodie_record_key": [f"key-{i}" for i in range(n)],
            "l": pa.array(range(n), pa.int64()),
            "s": [f"value-{i}" for i in range(n)],
            "d": [0.5] * n,
        }
    )
    schema = {
        "type": "record",
        "name": "r",
        "fields": [_meta("_hoodie_commit_time"), _meta("_hoodie_record_key"), _opt("l", "long"), _opt("s", "string"), _opt("d", "double")],
    }
    data = encode_block(AvroDataBlock.create(table, schema, INSTANT))
    start = time.perf_counter()
    (block,) = read_log_bytes(data)
    elapsed = time.perf_counter() - start
    assert block.records.equals(table)
    assert elapsed < 2.0, f"decoding {n} records took {elapsed:.2f}s"
