"""Arrow ⇄ Avro schemas: exact reproduction of the schemas Java Hudi wrote into the
conformance tables, plus round trips and the Java schema variants a reader meets."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import fastavro
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from hoodie.errors import SchemaError
from hoodie.formats.avro_schema import (
    arrow_to_avro_schema,
    avro_record_name_and_namespace,
    avro_schema_json,
    avro_schema_to_arrow,
    decimal_fixed_size,
)
from hoodie.formats.meta_columns import META_COLUMNS

# --------------------------------------------------------------------------------------
# Helpers over an unpacked conformance table
# --------------------------------------------------------------------------------------


def _properties(table: Path) -> dict[str, str]:
    """hoodie.properties (Java Properties: '#' comments, '\\:' escapes)."""
    out = {}
    for line in (table / ".hoodie" / "hoodie.properties").read_text("utf-8").splitlines():
        if not line or line.startswith("#") or "=" not in line:
            continue
        key, value = line.split("=", 1)
        out[key] = value.replace("\\:", ":").replace("\\=", "=").replace("\\\\", "\\")
    return out


def _commit_schemas(table: Path) -> list[str]:
    """extraMetadata.schema of every completed commit, oldest first.

    v6 keeps JSON commits in ``.hoodie/``; v8/v9 keep Avro ones in ``.hoodie/timeline/``.
    """
    actions = ("commit", "deltacommit", "replacecommit")
    schemas = []
    v6 = sorted(p for p in (table / ".hoodie").iterdir() if p.suffix.lstrip(".") in actions)
    for p in v6:
        schemas.append(json.loads(p.read_text("utf-8"))["extraMetadata"]["schema"])
    timeline = table / ".hoodie" / "timeline"
    if timeline.is_dir():
        for p in sorted(q for q in timeline.iterdir() if q.suffix.lstrip(".") in actions):
            with p.open("rb") as fh:
                record = next(iter(fastavro.reader(fh)))
            schemas.append(record["extraMetadata"]["schema"])
    return schemas


def _base_files(table: Path) -> list[Path]:
    return sorted(p for p in table.rglob("*.parquet") if ".hoodie" not in p.relative_to(table).parts)


def _data_schema(path: Path) -> pa.Schema:
    schema = pq.read_schema(path)
    return pa.schema([f for f in schema if f.name not in META_COLUMNS])


def _normalize(t: pa.DataType) -> pa.DataType:
    """Erase what differs between parquet writers but not in Avro: list item names and
    nullability (the Avro writer's 2-level lists read as ``list<array: T not null>``)."""
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        return pa.list_(pa.field("element", _normalize(t.value_type)))
    if pa.types.is_map(t):
        return pa.map_(t.key_type, pa.field("value", _normalize(t.item_type)))
    if pa.types.is_struct(t):
        return pa.struct([pa.field(f.name, _normalize(f.type), f.nullable) for f in t])
    return t


# --------------------------------------------------------------------------------------
# Conformance
# --------------------------------------------------------------------------------------


def test_conformance_table_schemas(conformance_tables: dict[str, Path], conformance_table_key: str) -> None:
    """For every table: arrow_to_avro_schema of each base file's data columns is exactly the
    commit's extraMetadata.schema (v6, v8 and v9 alike), and with meta fields exactly the
    file's parquet.avro.schema. Nothing needed an exception: every detail (names,
    namespaces, fixed decimal sizes, key order, null-first unions) is reproducible."""
    table = conformance_tables[conformance_table_key]
    props = _properties(table)
    schemas = _commit_schemas(table)
    files = _base_files(table)
    if not schemas:
        assert not files, "a table with data files but no commit"
        return
    # The record name comes from hoodie.table.name, not the folder (v9 tables differ).
    name = props["hoodie.table.name"]
    latest = schemas[-1]
    assert set(schemas) == {latest}  # no schema evolution in the samples
    assert files

    for path in files:
        data_schema = _data_schema(path)
        assert avro_schema_json(arrow_to_avro_schema(data_schema, name)) == latest, path.name
        # Passing the full file schema is the same: meta columns are not data fields.
        assert avro_schema_json(arrow_to_avro_schema(pq.read_schema(path), name)) == latest

        metadata = pq.read_metadata(path).metadata or {}
        if b"parquet.avro.schema" in metadata:
            with_meta = avro_schema_json(arrow_to_avro_schema(data_schema, name, include_meta_fields=True))
            assert with_meta == metadata[b"parquet.avro.schema"].decode("utf-8"), path.name

        # Avro → Arrow gives the file's data schema, up to list/map naming per writer.
        back = avro_schema_to_arrow(latest)
        assert back.names == data_schema.names
        for ours, theirs in zip(back, data_schema):
            assert ours.nullable and theirs.nullable
            assert _normalize(ours.type) == _normalize(theirs.type), ours.name
        if b"org.apache.spark.sql.parquet.row.metadata" in metadata:
            # Spark's row writer uses standard 3-level lists: exactly our Arrow types.
            assert back == data_schema.remove_metadata()

    # Parse + print reproduces Java's text byte for byte.
    assert avro_schema_json(json.loads(latest)) == latest


def test_conformance_create_schema(conformance_tables: dict[str, Path]) -> None:
    """hoodie.table.create.schema is Spark's raw form (null second, no defaults); it reads
    into the same Arrow schema as the commit's null-first form."""
    checked = 0
    for key, table in conformance_tables.items():
        props = _properties(table)
        schemas = _commit_schemas(table)
        create = props.get("hoodie.table.create.schema")
        if not create or not schemas:
            continue
        assert avro_schema_to_arrow(create) == avro_schema_to_arrow(schemas[-1]), key
        checked += 1
    assert checked


# --------------------------------------------------------------------------------------
# Round trip over every supported type
# --------------------------------------------------------------------------------------

ALL_TYPES = pa.schema(
    [
        ("b", pa.bool_()),
        ("i8", pa.int8()),
        ("i16", pa.int16()),
        ("i32", pa.int32()),
        ("i64", pa.int64()),
        ("f32", pa.float32()),
        ("f64", pa.float64()),
        ("s", pa.string()),
        ("ls", pa.large_string()),
        ("bin", pa.binary()),
        ("dec", pa.decimal128(10, 5)),
        ("dec38", pa.decimal128(38, 10)),
        ("d", pa.date32()),
        ("ts_us", pa.timestamp("us", tz="UTC")),
        ("ts_ms", pa.timestamp("ms", tz="UTC")),
        ("ts_ntz", pa.timestamp("us")),
        ("t_ms", pa.time32("ms")),
        ("t_us", pa.time64("us")),
        ("fixed16", pa.binary(16)),
        ("ints", pa.list_(pa.int32())),
        ("structs", pa.list_(pa.struct([("x", pa.string()), ("y", pa.decimal128(5, 2))]))),
        ("m", pa.map_(pa.string(), pa.struct([("v", pa.float64())]))),
        ("mi", pa.map_(pa.large_string(), pa.int64())),
        ("st", pa.struct([("a", pa.int32()), ("inner", pa.struct([("z", pa.bool_())]))])),
    ]
)

# What comes back: Avro has one int and one string type, all is nullable, items are "element".
ALL_TYPES_BACK = pa.schema(
    [
        ("b", pa.bool_()),
        ("i8", pa.int32()),
        ("i16", pa.int32()),
        ("i32", pa.int32()),
        ("i64", pa.int64()),
        ("f32", pa.float32()),
        ("f64", pa.float64()),
        ("s", pa.string()),
        ("ls", pa.string()),
        ("bin", pa.binary()),
        ("dec", pa.decimal128(10, 5)),
        ("dec38", pa.decimal128(38, 10)),
        ("d", pa.date32()),
        ("ts_us", pa.timestamp("us", tz="UTC")),
        ("ts_ms", pa.timestamp("ms", tz="UTC")),
        ("ts_ntz", pa.timestamp("us")),
        ("t_ms", pa.time32("ms")),
        ("t_us", pa.time64("us")),
        ("fixed16", pa.binary(16)),
        ("ints", pa.list_(pa.field("element", pa.int32()))),
        ("structs", pa.list_(pa.field("element", pa.struct([("x", pa.string()), ("y", pa.decimal128(5, 2))])))),
        ("m", pa.map_(pa.string(), pa.struct([("v", pa.float64())]))),
        ("mi", pa.map_(pa.string(), pa.int64())),
        ("st", pa.struct([("a", pa.int32()), ("inner", pa.struct([("z", pa.bool_())]))])),
    ]
)


def _field_type(avro: dict[str, Any], name: str) -> Any:
    (field,) = [f for f in avro["fields"] if f["name"] == name]
    assert field["type"][0] == "null" and field["default"] is None
    return field["type"][1]


def test_round_trip_all_types() -> None:
    avro = arrow_to_avro_schema(ALL_TYPES, "t")
    assert avro_schema_to_arrow(avro) == ALL_TYPES_BACK
    assert avro_schema_to_arrow(avro_schema_json(avro)) == ALL_TYPES_BACK
    # Idempotent from then on.
    assert arrow_to_avro_schema(ALL_TYPES_BACK, "t") == avro
    # fastavro (an independent Avro implementation) accepts the schema.
    fastavro.parse_schema(json.loads(avro_schema_json(avro)))

    assert (avro["name"], avro["namespace"]) == ("t_record", "hoodie.t")
    assert _field_type(avro, "i8") == "int" and _field_type(avro, "ls") == "string"
    assert _field_type(avro, "dec") == {
        "type": "fixed",
        "name": "fixed",
        "namespace": "hoodie.t.t_record.dec",
        "size": 5,
        "logicalType": "decimal",
        "precision": 10,
        "scale": 5,
    }
    assert _field_type(avro, "dec38")["size"] == 16
    assert _field_type(avro, "ts_us") == {"type": "long", "logicalType": "timestamp-micros"}
    assert _field_type(avro, "ts_ms") == {"type": "long", "logicalType": "timestamp-millis"}
    assert _field_type(avro, "ts_ntz") == {"type": "long", "logicalType": "local-timestamp-micros"}
    assert _field_type(avro, "d") == {"type": "int", "logicalType": "date"}

    # Items and values reuse the field's name; struct children live under it.
    items = _field_type(avro, "structs")["items"]
    assert items[0] == "null"
    assert (items[1]["name"], items[1]["namespace"]) == ("structs", "hoodie.t.t_record")
    y = items[1]["fields"][1]["type"][1]
    assert y["namespace"] == "hoodie.t.t_record.structs.y" and y["size"] == 3
    inner = _field_type(avro, "st")["fields"][1]["type"][1]
    assert (inner["name"], inner["namespace"]) == ("inner", "hoodie.t.t_record.st")
    assert _field_type(avro, "m")["values"][1]["name"] == "m"


def test_meta_fields() -> None:
    data = pa.schema([("id", pa.int32())])
    with_meta = arrow_to_avro_schema(data, "t", include_meta_fields=True)
    assert [f["name"] for f in with_meta["fields"]] == [*META_COLUMNS, "id"]
    assert with_meta["fields"][0] == {"name": "_hoodie_commit_time", "type": ["null", "string"], "doc": "", "default": None}
    full = pa.schema([(m, pa.string()) for m in META_COLUMNS] + [("id", pa.int32())])
    assert arrow_to_avro_schema(full, "t", include_meta_fields=True) == with_meta
    assert [f["name"] for f in arrow_to_avro_schema(full, "t")["fields"]] == ["id"]
    assert avro_schema_to_arrow(with_meta).names == [*META_COLUMNS, "id"]


def test_json_is_compact_and_keeps_unicode() -> None:
    schema = {"type": "record", "name": "r", "fields": [{"name": "a", "type": "string", "doc": "café"}]}
    assert avro_schema_json(schema) == '{"type":"record","name":"r","fields":[{"name":"a","type":"string","doc":"café"}]}'


def test_table_name_sanitized_like_hudi() -> None:
    assert avro_record_name_and_namespace("trips") == ("trips_record", "hoodie.trips")
    assert avro_record_name_and_namespace("my-table") == ("my__table_record", "hoodie.my__table")
    assert avro_record_name_and_namespace("1st.t") == ("__st__t_record", "hoodie.__st__t")


def test_decimal_fixed_sizes_match_spark() -> None:
    # Spark's minBytesForPrecision for precisions 1..38 (the samples use 10 → 5 and 15 → 7).
    expected = [1, 1, 2, 2, 3, 3, 4, 4, 4, 5, 5, 6, 6, 6, 7, 7, 8, 8, 9, 9, 9,
                10, 10, 11, 11, 11, 12, 12, 13, 13, 13, 14, 14, 15, 15, 16, 16, 16]  # fmt: skip
    assert [decimal_fixed_size(p) for p in range(1, 39)] == expected


@pytest.mark.parametrize(
    "arrow_type",
    [pa.null(), pa.uint64(), pa.map_(pa.int32(), pa.string()), pa.duration("s")],
    ids=["null", "uint64", "int-keyed map", "duration"],
)
def test_unsupported_arrow_types(arrow_type: pa.DataType) -> None:
    with pytest.raises(SchemaError):
        arrow_to_avro_schema(pa.schema([("c", arrow_type)]), "t")


@pytest.mark.parametrize("name", ["a b", "1col", "a-b", ""])
def test_invalid_column_names(name: str) -> None:
    with pytest.raises(SchemaError):
        arrow_to_avro_schema(pa.schema([(name, pa.int32())]), "t")


# --------------------------------------------------------------------------------------
# Avro variants a reader meets
# --------------------------------------------------------------------------------------


def test_avro_variants_to_arrow() -> None:
    schema = {
        "type": "record",
        "name": "r",
        "namespace": "ns",
        "fields": [
            {"name": "req", "type": "long"},
            {"name": "null_second", "type": ["string", "null"]},
            {"name": "e", "type": {"type": "enum", "name": "Color", "symbols": ["RED", "BLUE"]}},
            {"name": "e2", "type": ["null", "Color"]},  # reference to a named type
            {"name": "f", "type": {"type": "fixed", "name": "F16", "size": 16}},
            {"name": "f2", "type": "ns.F16"},  # fully qualified reference
            {"name": "bdec", "type": {"type": "bytes", "logicalType": "decimal", "precision": 20, "scale": 3}},
            {"name": "uuid", "type": {"type": "string", "logicalType": "uuid"}},
            {"name": "odd", "type": {"type": "long", "logicalType": "made-up"}},
            {"name": "ts_ms", "type": {"type": "long", "logicalType": "timestamp-millis"}},
            {"name": "lts_ms", "type": {"type": "long", "logicalType": "local-timestamp-millis"}},
            {"name": "num", "type": ["null", "int", "long"]},
            {"name": "mixed", "type": ["null", "string", "int"]},
            {"name": "wrapped", "type": {"type": "string"}},
            {
                "name": "arr",
                "type": {"type": "array", "items": {"type": "record", "name": "Item", "fields": [{"name": "x", "type": "int"}]}},
            },
            {"name": "arr2", "type": {"type": "array", "items": "Item"}},
        ],
    }
    item = pa.struct([pa.field("x", pa.int32(), nullable=False)])
    expected = pa.schema(
        [
            pa.field("req", pa.int64(), nullable=False),
            pa.field("null_second", pa.string()),
            pa.field("e", pa.string(), nullable=False),
            pa.field("e2", pa.string()),
            pa.field("f", pa.binary(16), nullable=False),
            pa.field("f2", pa.binary(16), nullable=False),
            pa.field("bdec", pa.decimal128(20, 3), nullable=False),
            pa.field("uuid", pa.string(), nullable=False),
            pa.field("odd", pa.int64(), nullable=False),
            pa.field("ts_ms", pa.timestamp("ms", tz="UTC"), nullable=False),
            pa.field("lts_ms", pa.timestamp("ms"), nullable=False),
            pa.field("num", pa.int64()),
            pa.field("mixed", pa.struct([("member0", pa.string()), ("member1", pa.int32())])),
            pa.field("wrapped", pa.string(), nullable=False),
            pa.field("arr", pa.list_(pa.field("element", item, nullable=False)), nullable=False),
            pa.field("arr2", pa.list_(pa.field("element", item, nullable=False)), nullable=False),
        ]
    )
    assert avro_schema_to_arrow(schema) == expected
    assert avro_schema_to_arrow(json.dumps(schema)) == expected


def test_avro_errors() -> None:
    with pytest.raises(SchemaError):
        avro_schema_to_arrow("{not json")
    with pytest.raises(SchemaError):
        avro_schema_to_arrow('"string"')  # not a record
    with pytest.raises(SchemaError):
        avro_schema_to_arrow({"type": "record", "name": "r", "fields": [{"name": "a", "type": "Nope"}]})
    recursive = {
        "type": "record",
        "name": "Node",
        "fields": [{"name": "next", "type": ["null", "Node"]}],
    }
    with pytest.raises(SchemaError):
        avro_schema_to_arrow(recursive)
