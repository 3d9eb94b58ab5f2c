"""conform: the one place columns are cast, reordered and filled for readers and writers."""
from __future__ import annotations

import pyarrow as pa
import pytest

from hoodie.errors import SchemaError
from hoodie.formats.conform import conform


def test_list_and_map_children_take_the_schema_names() -> None:
    """Avro writers name list items ``array``, Spark ``element``: Arrow calls the two types
    equal, yet the result must carry the schema's names."""
    avro_list = pa.list_(pa.field("array", pa.int32()))
    avro_map = pa.map_(pa.string(), pa.field("value_x", pa.int64()))
    data = pa.table({
        "xs": pa.array([[1, None], None], avro_list),
        "m": pa.array([[("a", 1)], None], avro_map),
    })
    schema = pa.schema([("xs", pa.list_(pa.field("element", pa.int32()))), ("m", pa.map_(pa.string(), pa.int64()))])
    out = conform(data, schema)
    assert str(out.column("xs").type) == "list<element: int32>"
    assert str(out.column("m").type) == str(pa.map_(pa.string(), pa.int64()))
    assert out.column("xs").to_pylist() == [[1, None], None]


def test_columns_reordered_missing_null_extra_dropped_and_bad_casts_named() -> None:
    data = pa.table({"b": ["x"], "a": pa.array([1], pa.int32()), "extra": [True]})
    schema = pa.schema([("a", pa.int64()), ("b", pa.string()), ("c", pa.float64())])
    out = conform(data, schema)
    assert out.schema == schema and out.to_pylist() == [{"a": 1, "b": "x", "c": None}]
    with pytest.raises(SchemaError, match=r"file.parquet: column 'b' of type string cannot be cast to int64"):
        conform(data, pa.schema([("b", pa.int64())]), "file.parquet")
