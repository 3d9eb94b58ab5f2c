"""The numpy (vector) Avro codec of flat log records: for every supported type, in every
nullability, it writes the same bytes as the closure codec and as fastavro (an independent
implementation), decodes to the same table as the closure codec, refuses corrupt records
with FormatError, and leaves nested schemas to the closure codec."""
from __future__ import annotations

import io
import struct
from typing import Any

import fastavro
import numpy as np
import pyarrow as pa
import pytest
from avro_blocks import split_avro_content
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hoodie.errors import FormatError, SchemaError
from hoodie.formats.avro_nodes import parse_avro_schema, physical_arrow_type
from hoodie.formats.avro_schema import avro_schema_json, avro_schema_to_arrow
from hoodie.formats.log import AvroDataBlock, BlockType, HeaderKey, encode_block, frame_block, read_log_bytes
from hoodie.formats.log import content as content_module
from hoodie.formats.log.avro_decode import decode_columns
from hoodie.formats.log.avro_encode import encode_records
from hoodie.formats.log.avro_vector import can_vectorize, decode_records, encode_avro_content, encode_avro_contents
from hoodie.formats.log.content import _record_spans

INSTANT = "20250101000000000"
I64_MIN, I64_MAX = -(2**63), 2**63 - 1

# name -> (Avro type, strategy of its Python values as the encoder takes them)
SCALARS: dict[str, tuple[Any, st.SearchStrategy[Any]]] = {
    "boolean": ("boolean", st.booleans()),
    "int": ("int", st.integers(-(2**31), 2**31 - 1)),
    "long": ("long", st.integers(I64_MIN, I64_MAX)),
    "small_long": ("long", st.integers(-200, 200)),
    "date": ({"type": "int", "logicalType": "date"}, st.integers(-(10**6), 10**6)),
    "time_millis": ({"type": "int", "logicalType": "time-millis"}, st.integers(0, 86_399_999)),
    "time_micros": ({"type": "long", "logicalType": "time-micros"}, st.integers(0, 86_399_999_999)),
    "ts_millis": ({"type": "long", "logicalType": "timestamp-millis"}, st.integers(I64_MIN, I64_MAX)),
    "ts_micros": ({"type": "long", "logicalType": "timestamp-micros"}, st.integers(-(2**62), 2**62)),
    "local_ts_micros": ({"type": "long", "logicalType": "local-timestamp-micros"}, st.integers(0, 2**53)),
    "float": ("float", st.floats(width=32, allow_nan=False)),
    "double": ("double", st.floats(allow_nan=False)),
    "string": ("string", st.text(max_size=80)),
    "uuid": ({"type": "string", "logicalType": "uuid"}, st.uuids().map(str)),
    "bytes": ("bytes", st.binary(max_size=150)),
    "fixed": ({"type": "fixed", "name": "F", "size": 3}, st.binary(min_size=3, max_size=3)),
    "fixed16": ({"type": "fixed", "name": "G", "size": 16}, st.binary(min_size=16, max_size=16)),
    "enum": ({"type": "enum", "name": "E", "symbols": ["A", "B", "C"]}, st.sampled_from(["A", "B", "C"])),
}
# plain X, ["null", X], [X, "null"]
NULLABILITY = ("required", "null_first", "null_last")


def _field(name: str, scalar: str, nullability: str) -> dict[str, Any]:
    avro = SCALARS[scalar][0]
    if isinstance(avro, dict) and "name" in avro:
        avro = {**avro, "name": f"{avro['name']}_{name}"}  # named types must be unique
    if nullability == "null_first":
        return {"name": name, "type": ["null", avro], "default": None}
    if nullability == "null_last":
        return {"name": name, "type": [avro, "null"]}
    return {"name": name, "type": avro}


def _schema(fields: list[dict[str, Any]]) -> dict[str, Any]:
    return {"type": "record", "name": "rec", "namespace": "hoodie.test", "fields": fields}


def _table(schema: dict[str, Any], rows: list[dict[str, Any]]) -> pa.Table:
    """Rows of physical values (ints for dates and timestamps) as the Arrow table of ``schema``."""
    arrow = avro_schema_to_arrow(schema)
    node = parse_avro_schema(schema)
    columns = []
    for (name, child), field in zip(node.fields, arrow):
        arr = pa.array([r[name] for r in rows], physical_arrow_type(child))
        columns.append(arr.view(field.type) if arr.type != field.type else arr)
    return pa.Table.from_arrays(columns, schema=arrow)


_split = split_avro_content


def _closure_content(node: Any, table: pa.Table, arrow: pa.Schema) -> bytes:
    records = encode_records(node, table, arrow)
    return b"".join([struct.pack(">ii", 3, len(records))] + [struct.pack(">i", len(r)) + r for r in records])


def _vector_decode(node: Any, content: bytes, arrow: pa.Schema) -> pa.Table:
    starts, ends = _record_spans(content, struct.unpack_from(">i", content, 4)[0])
    return decode_records(node, content, starts, ends, arrow)


def _closure_decode(node: Any, content: bytes, arrow: pa.Schema) -> pa.Table:
    starts, ends = _record_spans(content, struct.unpack_from(">i", content, 4)[0])
    return decode_columns(node, content, list(zip(starts.tolist(), ends.tolist())), arrow)


def check_all_agree(schema: dict[str, Any], rows: list[dict[str, Any]], table: pa.Table | None = None) -> bytes:
    """Vector bytes == closure bytes == fastavro bytes; both decoders give back the table."""
    node = parse_avro_schema(schema)
    arrow = avro_schema_to_arrow(schema)
    assert can_vectorize(node)
    table = _table(schema, rows) if table is None else table
    vector = encode_avro_content(node, table, arrow, 3)
    assert vector == _closure_content(node, table, arrow)
    parsed = fastavro.parse_schema(schema)
    for row, ours in zip(rows, _split(vector)):
        buf = io.BytesIO()
        fastavro.schemaless_writer(buf, parsed, row)
        assert ours == buf.getvalue(), row
    decoded = _vector_decode(node, vector, arrow)
    assert decoded.schema == arrow
    assert decoded.equals(_closure_decode(node, vector, arrow))
    assert decoded.equals(table.cast(arrow) if table.schema != arrow else table)
    return vector


@st.composite
def flat_records(draw: st.DrawFn) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    kinds = draw(st.lists(st.tuples(st.sampled_from(sorted(SCALARS)), st.sampled_from(NULLABILITY)), min_size=1, max_size=6))
    fields = [_field(f"c{i}", scalar, nullability) for i, (scalar, nullability) in enumerate(kinds)]
    values = [
        SCALARS[scalar][1] if nullability == "required" else st.one_of(st.none(), SCALARS[scalar][1])
        for scalar, nullability in kinds
    ]
    rows = draw(st.lists(st.tuples(*values), max_size=25))
    return _schema(fields), [{f"c{i}": v for i, v in enumerate(r)} for r in rows]


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(flat_records())
def test_random_flat_records_agree_with_closure_and_fastavro(case: tuple[dict[str, Any], list[dict[str, Any]]]) -> None:
    schema, rows = case
    check_all_agree(schema, rows)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(flat_records(), st.lists(st.integers(min_value=0, max_value=30), min_size=1, max_size=5))
def test_slices_encoded_together_are_each_slice_encoded_alone(case: tuple[dict[str, Any], list[dict[str, Any]]], cuts: list[int]) -> None:
    """encode_avro_contents gives, for consecutive slices, exactly encode_avro_content of
    each slice; and encode_together hands each block those bytes."""
    schema, rows = case
    node = parse_avro_schema(schema)
    arrow = avro_schema_to_arrow(schema)
    table = _table(schema, rows)
    bounds = sorted({0, table.num_rows, *(min(c, table.num_rows) for c in cuts)})
    counts = [b - a for a, b in zip(bounds, bounds[1:])] or [0]
    together = encode_avro_contents(node, table, arrow, 3, counts)
    at = 0
    for count, content in zip(counts, together):
        assert content == encode_avro_content(node, table.slice(at, count), arrow, 3)
        at += count
    with pytest.raises(ValueError, match="do not cover"):
        encode_avro_contents(node, table, arrow, 3, [table.num_rows + 1])
    blocks = [AvroDataBlock.create(table.slice(a, b - a), avro_schema_json(schema), "20240101000000000") for a, b in zip(bounds, bounds[1:])]
    assert [encode_block(b) for b in content_module.encode_together(blocks)] == [encode_block(b) for b in blocks]


@pytest.mark.parametrize("nullability", NULLABILITY)
@pytest.mark.parametrize("scalar", sorted(SCALARS))
def test_every_type_and_nullability(scalar: str, nullability: str) -> None:
    """Each type alone, with a deterministic sample that also covers all-null columns."""
    values = _samples(scalar, np.random.default_rng(len(scalar)), 40)
    if nullability != "required":
        values = [None if i % 3 == 0 else v for i, v in enumerate(values)]
    schema = _schema([_field("a", scalar, nullability), _field("b", "string", "null_first")])
    check_all_agree(schema, [{"a": v, "b": None} for v in values])
    if nullability != "required":
        check_all_agree(schema, [{"a": None, "b": "x"} for _ in values])


def _samples(scalar: str, rng: np.random.Generator, n: int) -> list[Any]:  # noqa: C901 (one branch per Avro type)
    """Deterministic values of a scalar type, with the varint and length boundaries."""
    if scalar == "boolean":
        return [bool(b) for b in rng.integers(0, 2, n)]
    if scalar in ("int", "date"):
        edges = [0, -1, 1, 63, 64, -64, -65, 8191, 8192, 2**31 - 1, -(2**31)]
        return (edges + rng.integers(-(2**31), 2**31, n).tolist())[:n]
    if scalar in ("long", "ts_millis"):
        edges = [0, -1, 2**55 - 1, 2**55, -(2**55), -(2**55) - 1, 2**62, 2**63 - 1, -(2**63), 2**31, 2**49]
        return (edges + [int(x) >> int(s) for x, s in zip(rng.integers(I64_MIN, I64_MAX, n, dtype=np.int64), rng.integers(0, 63, n))])[:n]
    if scalar == "small_long":
        return rng.integers(-200, 200, n).tolist()
    if scalar == "time_millis":
        return rng.integers(0, 86_399_999, n).tolist()
    if scalar == "time_micros":
        return rng.integers(0, 86_399_999_999, n).tolist()
    if scalar in ("ts_micros", "local_ts_micros"):
        return rng.integers(0, 2**53, n).tolist()
    if scalar == "float":
        return [float(np.float32(x)) for x in rng.normal(0, 1e6, n - 2)] + [float("inf"), -0.0]
    if scalar == "double":
        return [float(x) for x in rng.normal(0, 1e100, n - 2)] + [float("-inf"), -0.0]
    if scalar == "string":
        return ["é" * int(k) + "x" * int(j) for k, j in zip(rng.integers(0, 5, n), rng.integers(0, 70, n))]
    if scalar == "uuid":
        return [f"{int(x):032x}" for x in rng.integers(0, I64_MAX, n)]
    if scalar == "bytes":
        return [rng.integers(0, 256, int(k), dtype=np.uint8).tobytes() for k in rng.integers(0, 200, n)]
    if scalar == "fixed":
        return [rng.integers(0, 256, 3, dtype=np.uint8).tobytes() for _ in range(n)]
    if scalar == "fixed16":
        return [rng.integers(0, 256, 16, dtype=np.uint8).tobytes() for _ in range(n)]
    if scalar == "enum":
        return [["A", "B", "C"][int(i)] for i in rng.integers(0, 3, n)]
    raise AssertionError(scalar)


def test_null_fields_and_empty_records() -> None:
    # (a plain "null" field has no Arrow schema: avro_schema_to_arrow refuses it)
    schema = _schema([{"name": "u", "type": ["null"]}, _field("a", "int", "required")])
    check_all_agree(schema, [{"u": None, "a": i} for i in range(5)])
    check_all_agree(_schema([{"name": "u", "type": ["null"]}]), [{"u": None}] * 3)
    # a union of one branch: a tag 0 before every value
    single = _schema([{"name": "x", "type": ["long"]}, {"name": "y", "type": ["string"]}])
    assert _split(check_all_agree(single, [{"x": 5, "y": "é"}, {"x": -1, "y": ""}])) == [b"\x00\x0a\x00\x04\xc3\xa9", b"\x00\x01\x00\x00"]
    check_all_agree(_schema([_field("a", "long", "required")]), [])  # no rows


@pytest.mark.parametrize(
    "lengths",
    [
        [17] * 500,  # one length: a single copy of fixed-size items
        [0, 3, 5] * 200,  # a few lengths
        list(range(0, 700)) * 2,  # many lengths: grouped, and rare ones byte by byte
        list(range(300, 0, -1)),  # many lengths, as wide copies; the last few lack the bytes after them
        [5] * 300 + [70_000] + [0] * 10,  # one huge value among small ones: a three-byte length
    ],
)
def test_string_length_distributions(lengths: list[int]) -> None:
    rng = np.random.default_rng(len(lengths))
    values = ["".join(chr(0x61 + int(c)) for c in rng.integers(0, 26, min(n, 50))) * (n // 50 + 1) for n in lengths]
    values = [v[:n] for v, n in zip(values, lengths)]
    schema = _schema([_field("s", "string", "null_first"), _field("b", "bytes", "required"), _field("t", "string", "required")])
    rows = [{"s": None if i % 7 == 3 else v, "b": v.encode(), "t": v} for i, v in enumerate(values)]
    check_all_agree(schema, rows)


def test_arrow_columns_are_cast_like_the_closure_codec() -> None:
    """Sliced and chunked columns, narrower ints, dictionaries, large strings, timestamps in
    other units, columns in another order, a missing nullable column."""
    schema = _schema(
        [
            _field("i", "int", "null_first"),
            _field("l", "long", "required"),
            _field("s", "string", "null_last"),
            _field("ts", "ts_micros", "null_first"),
            _field("f", "float", "required"),
            _field("e", "enum", "null_first"),
            _field("fx", "fixed", "null_first"),
            _field("b", "boolean", "null_first"),
            _field("gone", "string", "null_first"),
        ]
    )
    n = 40
    table = pa.table(
        {
            "s": pa.chunked_array(
                [pa.array([f"v{i}" for i in range(20)], pa.large_string()), pa.array([None] * 5 + [f"w{i}" for i in range(15)], pa.large_string())]
            ),
            "i": pa.array([i if i % 4 else None for i in range(n)], pa.int8()),
            "l": pa.array(range(-20, 20), pa.int16()),
            "ts": pa.array([i * 1000 for i in range(n)], pa.timestamp("ns", "UTC")),
            "f": pa.array([i / 4 for i in range(n)], pa.float64()),
            "e": pa.array(["A", "B", None, "C"] * 10).dictionary_encode(),
            "fx": pa.array([b"abc", None, b"xyz", b"\x00\x01\x02"] * 10, pa.binary()),
            "b": pa.array([True, False, None, True] * 10),
        }
    )
    wide = pa.concat_tables([table, table])
    for t in (table, wide.slice(7, n)):
        node = parse_avro_schema(schema)
        arrow = avro_schema_to_arrow(schema)
        content = encode_avro_content(node, t, arrow, 3)
        assert content == _closure_content(node, t, arrow)
        assert _vector_decode(node, content, arrow).equals(_closure_decode(node, content, arrow))


def test_null_slots_holding_data_are_ignored() -> None:
    """Arrow lets a null slot keep bytes (a string spanning data, an int that is not 0):
    the encoder must write only the null branch."""
    validity = pa.py_buffer(np.packbits(np.array([1, 0, 1, 0], bool), bitorder="little"))
    strings = pa.Array.from_buffers(pa.string(), 4, [validity, pa.py_buffer(np.array([0, 2, 9, 10, 14], np.int32)), pa.py_buffer(b"abGARBAGEcJUNK")])
    longs = pa.Array.from_buffers(pa.int64(), 4, [validity, pa.py_buffer(np.array([1, 2**60, 3, -(2**62)], np.int64))])
    bools = pa.Array.from_buffers(pa.bool_(), 4, [validity, pa.py_buffer(np.packbits(np.array([1, 1, 0, 1], bool), bitorder="little"))])
    schema = _schema([_field("s", "string", "null_first"), _field("l", "long", "null_last"), _field("b", "boolean", "null_first")])
    node, arrow = parse_avro_schema(schema), avro_schema_to_arrow(schema)
    table = pa.Table.from_arrays([strings, longs, bools], schema=arrow)
    content = encode_avro_content(node, table, arrow, 3)
    assert _split(content) == [b"\x02\x04ab\x00\x02\x02\x01", b"\x00\x02\x00", b"\x02\x02c\x00\x06\x02\x00", b"\x00\x02\x00"]
    assert content == _closure_content(node, table, arrow)
    assert _vector_decode(node, content, arrow).to_pylist() == table.to_pylist()


@pytest.mark.parametrize(
    "column, values, arrow_type, message",
    [
        ("r", [1, None, 3], pa.int64(), "column 'r', row 1"),
        ("n", ["a", None, "c"], pa.string(), "column 'n', row 1"),
        ("r", [2**40, 1, 2], pa.int64(), "'r'"),  # does not fit an Avro int
        ("e", ["A", "nope", None], pa.string(), "column 'e', row 1: 'nope' is not a symbol"),
        ("ts", [1001, 0, 0], pa.timestamp("ns", "UTC"), "'ts'"),  # would lose nanoseconds
    ],
)
def test_bad_columns_are_refused_naming_column_and_row(column: str, values: list[Any], arrow_type: pa.DataType, message: str) -> None:
    schema = _schema(
        [_field("r", "int", "required"), _field("n", "string", "required"), _field("e", "enum", "null_first"), _field("ts", "ts_micros", "null_first")]
    )
    table = _table(schema, [{"r": 1, "n": "x", "e": "A", "ts": 0}] * 3)
    table = table.set_column(table.schema.get_field_index(column), column, pa.array(values, arrow_type))
    node, arrow = parse_avro_schema(schema), avro_schema_to_arrow(schema)
    with pytest.raises(SchemaError, match=message):
        encode_avro_content(node, table, arrow, 3)
    with pytest.raises(SchemaError, match=f"'{column}'"):
        encode_records(node, table, arrow)


def test_missing_required_and_extra_columns_are_refused() -> None:
    schema = _schema([_field("r", "int", "required"), _field("o", "int", "null_first")])
    node, arrow = parse_avro_schema(schema), avro_schema_to_arrow(schema)
    with pytest.raises(SchemaError, match="'r'.*missing"):
        encode_avro_content(node, pa.table({"o": [1]}), arrow, 3)
    with pytest.raises(SchemaError, match="extra"):
        encode_avro_content(node, pa.table({"r": pa.array([1], pa.int32()), "extra": [1]}), arrow, 3)
    only_r = encode_avro_content(node, pa.table({"r": pa.array([1], pa.int32())}), arrow, 3)
    assert _split(only_r) == [b"\x02\x00"]


# --- corrupt records ----------------------------------------------------------------------

CORRUPT_SCHEMA = _schema(
    [
        _field("s", "string", "null_first"),
        _field("l", "long", "required"),
        _field("i", "int", "null_last"),
        _field("e", "enum", "required"),
        _field("d", "double", "null_first"),
        _field("t", "string", "required"),
    ]
)
GOOD = b"\x02\x02a" + b"\x04" + b"\x00\x06" + b"\x02" + b"\x02" + b"\x00\x00\x00\x00\x00\x00\xf0\x3f" + b"\x02z"


@pytest.mark.parametrize(
    "record, message",
    [
        (GOOD[:-1], "runs past"),  # truncated: the last string is missing its byte
        (GOOD[:5], "runs past|does not match"),  # truncated in the middle of the record
        (b"", "does not match"),
        (b"\x02\x7e" + GOOD[3:], "length 63 at byte .* runs past"),  # length past the record end
        (b"\x02\x01" + GOOD[3:], "length -1"),  # negative length
        (b"\x02\x02a" + b"\x04" + b"\x04\x06" + GOOD[6:], "union index 2"),  # bad union index
        (b"\x06" + GOOD[1:], "union index 3"),
        (b"\x02\x02a" + b"\xff" * 10 + b"\x01" + GOOD[4:], "longer than 10 bytes"),  # 11-byte varint
        (b"\x02\x02a" + b"\xff" * 9 + b"\x02" + GOOD[4:], "beyond a long"),  # 10 bytes, but 65 bits
        (GOOD + b"\x00", "is 19 bytes but its schema reads 18"),  # trailing byte
        (b"\x02\x02a\x04\x00" + b"\x80\x80\x80\x80\x20" + GOOD[6:], "does not fit 32 bits"),  # int of 2**33
        (b"\x02\x02a\x04\x00\x06\x08" + GOOD[9:], "enum index 4"),
        (GOOD[:-1] + b"\xff", "UTF-8"),
        (b"\x02" + b"\xfe\xff\xff\xff\xff\xff\xff\xff\x7f" + GOOD[3:], "runs past"),  # hostile huge length
    ],
)
def test_corrupt_records_are_refused(record: bytes, message: str) -> None:
    node, arrow = parse_avro_schema(CORRUPT_SCHEMA), avro_schema_to_arrow(CORRUPT_SCHEMA)
    good = struct.pack(">i", len(GOOD)) + GOOD
    # the bad record among good ones, so cursors of other records are in play
    content = struct.pack(">ii", 3, 3) + good + struct.pack(">i", len(record)) + record + good
    with pytest.raises(FormatError, match=message):
        _vector_decode(node, content, arrow)
    with pytest.raises(FormatError):
        _closure_decode(node, content, arrow)
    data = frame_block(BlockType.AVRO_DATA, {HeaderKey.INSTANT_TIME: INSTANT, HeaderKey.SCHEMA: avro_schema_json(CORRUPT_SCHEMA)}, content)
    with pytest.raises(FormatError):
        read_log_bytes(data)


def test_good_corrupt_schema_record_decodes() -> None:
    """The record the corrupt cases start from is itself valid."""
    node, arrow = parse_avro_schema(CORRUPT_SCHEMA), avro_schema_to_arrow(CORRUPT_SCHEMA)
    content = struct.pack(">iii", 3, 1, len(GOOD)) + GOOD
    assert _vector_decode(node, content, arrow).to_pylist() == [{"s": "a", "l": 2, "i": 3, "e": "B", "d": 1.0, "t": "z"}]


def test_noncanonical_union_tag_is_accepted() -> None:
    """Avro readers take any varint encoding of a branch index (Java does)."""
    schema = _schema([_field("a", "long", "null_first")])
    node, arrow = parse_avro_schema(schema), avro_schema_to_arrow(schema)
    record = b"\x82\x00\x06"  # branch 1 in two bytes, then 3
    content = struct.pack(">iii", 3, 1, len(record)) + record
    assert _vector_decode(node, content, arrow).to_pylist() == [{"a": 3}]


@pytest.mark.parametrize(
    "content, message",
    [
        (struct.pack(">iii", 3, 2, 1) + b"\x00", "ends after 1 of 2 records"),
        (struct.pack(">iii", 3, 1, 5) + b"\x00", "record 0 length 5 runs past"),
        (struct.pack(">iii", 3, 1, -1) + b"\x00", "record 0 length -1"),
        (struct.pack(">iii", 3, 1, 1) + b"\x00\x00", "1 bytes after its 1 records"),
        (struct.pack(">ii", 3, 10**9), "ends after 0 of"),
    ],
)
def test_record_framing_errors(content: bytes, message: str) -> None:
    schema = _schema([_field("a", "long", "required")])
    data = frame_block(BlockType.AVRO_DATA, {HeaderKey.INSTANT_TIME: INSTANT, HeaderKey.SCHEMA: avro_schema_json(schema)}, content)
    with pytest.raises(FormatError, match=message):
        read_log_bytes(data)


# --- dispatch -------------------------------------------------------------------------------


def test_log_blocks_use_the_vector_codec_for_flat_records(monkeypatch: pytest.MonkeyPatch) -> None:
    schema = _schema([_field("k", "string", "null_first"), _field("v", "double", "required")])
    table = _table(schema, [{"k": f"k{i}", "v": i / 3} for i in range(50)])

    def closure_not_used(*args: Any) -> None:
        raise AssertionError("closure codec used for a flat record")

    monkeypatch.setattr(content_module, "encode_records", closure_not_used)
    monkeypatch.setattr(content_module, "decode_columns", closure_not_used)
    (block,) = read_log_bytes(encode_block(AvroDataBlock.create(table, schema, INSTANT)))
    assert block.records.equals(table)


NESTED = [
    {"type": "record", "name": "inner", "fields": [{"name": "x", "type": "int"}]},
    {"type": "array", "items": "long"},
    {"type": "map", "values": "string"},
    {"type": "bytes", "logicalType": "decimal", "precision": 10, "scale": 2},
    {"type": "fixed", "name": "dec", "size": 5, "logicalType": "decimal", "precision": 10, "scale": 2},
    ["null", "int", "string"],
    ["null", "int", "long"],
]


@pytest.mark.parametrize("nested", NESTED, ids=lambda t: str(t)[:40])
def test_nested_schemas_fall_back_to_the_closure_codec(nested: Any) -> None:
    schema = _schema([_field("k", "string", "null_first"), {"name": "n", "type": ["null", nested] if not isinstance(nested, list) else nested}])
    node = parse_avro_schema(schema)
    assert not can_vectorize(node)
    arrow = avro_schema_to_arrow(schema)
    table = pa.table({"k": ["a", "b"], "n": pa.array([None, None], arrow.field("n").type)})
    (block,) = read_log_bytes(encode_block(AvroDataBlock.create(table, schema, INSTANT)))
    assert block.records.equals(table.cast(arrow))
    with pytest.raises(SchemaError, match="closure codec"):
        encode_avro_content(node, table, arrow, 3)


def test_nested_block_round_trips_values() -> None:
    schema = _schema([_field("k", "long", "required"), {"name": "a", "type": {"type": "array", "items": "string"}}])
    rows = [{"k": i, "a": [f"x{j}" for j in range(i % 4)]} for i in range(30)]
    table = pa.Table.from_pylist(rows, schema=avro_schema_to_arrow(schema))
    (block,) = read_log_bytes(encode_block(AvroDataBlock.create(table, schema, INSTANT)))
    assert block.records.to_pylist() == rows


def test_large_block_matches_closure() -> None:
    """Enough rows that every vectorized path sees realistic sizes."""
    n = 20_000
    rng = np.random.default_rng(3)
    schema = _schema(
        [
            _field("_hoodie_commit_time", "string", "null_first"),
            _field("key", "string", "null_first"),
            _field("ts", "long", "required"),
            _field("q", "int", "null_first"),
            _field("p", "double", "null_first"),
            _field("b", "boolean", "null_first"),
            _field("at", "ts_micros", "null_first"),
        ]
    )
    rows = [
        {
            "_hoodie_commit_time": INSTANT,
            "key": f"key-{i}",
            "ts": int(t),
            "q": None if i % 5 == 0 else int(q),
            "p": float(p),
            "b": bool(i % 2),
            "at": int(a),
        }
        for i, t, q, p, a in zip(range(n), rng.integers(0, 2**60, n), rng.integers(-500, 500, n), rng.random(n), rng.integers(0, 2**52, n))
    ]
    schema_node, arrow = parse_avro_schema(schema), avro_schema_to_arrow(schema)
    table = _table(schema, rows)
    content = encode_avro_content(schema_node, table, arrow, 3)
    assert content == _closure_content(schema_node, table, arrow)
    assert _vector_decode(schema_node, content, arrow).equals(table)


def test_blocks_decoded_together_are_each_block_decoded_alone() -> None:
    """decode_avro_together: one pass over several blocks' records gives exactly each
    block's own decoding (records, schema, header, footer), also for empty blocks and
    blocks of another schema; a bad block among good ones is named as when alone."""
    from hoodie.formats.log.content import _encode_avro, decode_avro_together, decode_content

    schema = _schema([_field("a", "long", "null_first"), _field("s", "string", "required"), _field("d", "double", "null_last")])
    rng = np.random.default_rng(7)
    blocks = []
    for n in (3, 0, 40, 1):
        rows = [
            {"a": None if i % 4 == 0 else int(v), "s": "é" * (i % 3) + "x" * int(k), "d": float(i)}
            for i, (v, k) in enumerate(zip(rng.integers(I64_MIN, I64_MAX, n), rng.integers(0, 90, n)))
        ]
        blocks.append(AvroDataBlock(_table(schema, rows), avro_schema_json(schema), {HeaderKey.INSTANT_TIME: f"2025010100000{len(blocks)}000"}, {}))
    parts = [(b.header, b.footer, bytes(_encode_avro(b))) for b in blocks]
    alone = [decode_content(BlockType.AVRO_DATA, h, f, c) for h, f, c in parts]
    together = decode_avro_together(parts)
    assert together == alone
    assert [b.records.num_rows for b in together] == [3, 0, 40, 1]
    # another schema among them: each decoded alone
    other = _schema([_field("z", "int", "required")])
    odd = AvroDataBlock(_table(other, [{"z": 5}]), avro_schema_json(other), {HeaderKey.INSTANT_TIME: INSTANT}, {})
    mixed = [*parts[:2], (odd.header, odd.footer, bytes(_encode_avro(odd)))]
    assert decode_avro_together(mixed) == [*alone[:2], decode_content(BlockType.AVRO_DATA, odd.header, {}, mixed[2][2])]
    # a record that does not match its schema: the same error as that block alone
    header, footer, content = parts[2]
    broken = content[:12] + b"\x08" + content[13:]  # first record: union index 4 of 2 branches
    with pytest.raises(FormatError) as alone_error:
        decode_content(BlockType.AVRO_DATA, header, footer, broken)
    with pytest.raises(FormatError) as together_error:
        decode_avro_together([parts[0], (header, footer, broken), parts[3]])
    assert str(together_error.value) == str(alone_error.value)
