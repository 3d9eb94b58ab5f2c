"""Delete block content: ``HoodieDeleteRecordList`` bytes equal fastavro's for every ordering
type (fastavro given Hudi's schema), Java's default ordering value is ``IntWrapper(0)``,
and values that Java or hudi-rs would not accept are refused."""
from __future__ import annotations

import datetime as dt
import io
import struct
from decimal import Decimal
from typing import Any

import fastavro
import pytest

from hoodie.errors import FormatError, RecordError
from hoodie.formats.log import DeleteRecord, OrderingType
from hoodie.formats.log.delete_codec import decode_delete_content, encode_delete_content

M = "org.apache.hudi.avro.model"


def _wrapper(name: str, t: Any) -> dict[str, Any]:
    return {"type": "record", "name": name, "namespace": M, "fields": [{"name": "value", "type": t}]}


# hudi-common/src/main/avro/HoodieDeleteRecordList.avsc (Hudi 1.1; 0.14/0.15 lack ArrayWrapper).
_SCALARS = [
    _wrapper("BooleanWrapper", "boolean"),
    _wrapper("IntWrapper", "int"),
    _wrapper("LongWrapper", "long"),
    _wrapper("FloatWrapper", "float"),
    _wrapper("DoubleWrapper", "double"),
    _wrapper("BytesWrapper", "bytes"),
    _wrapper("StringWrapper", "string"),
    _wrapper("DateWrapper", "int"),
    _wrapper("DecimalWrapper", {"type": "bytes", "logicalType": "decimal", "precision": 30, "scale": 15}),
    _wrapper("TimeMicrosWrapper", {"type": "long", "logicalType": "time-micros"}),
    _wrapper("TimestampMicrosWrapper", "long"),
]
_ITEMS = ["null"] + [f"{M}.{w['name']}" for w in _SCALARS] + [_wrapper("LocalDateWrapper", "int")]
DELETE_LIST_SCHEMA = {
    "type": "record",
    "name": "HoodieDeleteRecordList",
    "namespace": M,
    "fields": [
        {
            "name": "deleteRecordList",
            "type": {
                "type": "array",
                "items": {
                    "type": "record",
                    "name": "HoodieDeleteRecord",
                    "fields": [
                        {"name": "recordKey", "type": ["null", "string"], "default": None},
                        {"name": "partitionPath", "type": ["null", "string"], "default": None},
                        {
                            "name": "orderingVal",
                            "type": ["null", *_SCALARS, {
                                "type": "record", "name": "ArrayWrapper", "namespace": M,
                                "fields": [{"name": "wrappedValues", "type": ["null", {"type": "array", "items": _ITEMS}], "default": None}],
                            }],
                            "default": None,
                        },
                    ],
                },
            },
        }
    ],
}  # fmt: skip
PARSED = fastavro.parse_schema(DELETE_LIST_SCHEMA)

_WRAPPER_OF = {
    OrderingType.BOOLEAN: "BooleanWrapper",
    OrderingType.INT: "IntWrapper",
    OrderingType.LONG: "LongWrapper",
    OrderingType.FLOAT: "FloatWrapper",
    OrderingType.DOUBLE: "DoubleWrapper",
    OrderingType.BYTES: "BytesWrapper",
    OrderingType.STRING: "StringWrapper",
    OrderingType.DATE: "DateWrapper",
    OrderingType.DECIMAL: "DecimalWrapper",
    OrderingType.TIME_MICROS: "TimeMicrosWrapper",
    OrderingType.TIMESTAMP_MICROS: "TimestampMicrosWrapper",
    OrderingType.LOCAL_DATE: "LocalDateWrapper",
}
EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)


def _fastavro_scalar(t: OrderingType, value: Any) -> Any:
    """The wrapper's raw Avro value (fastavro applies no logical type to these fields)."""
    if t in (OrderingType.DATE, OrderingType.LOCAL_DATE):
        return (value - dt.date(1970, 1, 1)).days
    if t is OrderingType.TIMESTAMP_MICROS:
        return (value - EPOCH) // dt.timedelta(microseconds=1)
    if t is OrderingType.TIME_MICROS:
        return dt.time(0, 0, 0, 0) if value == 0 else _micros_to_time(value)
    return value


def _micros_to_time(micros: int) -> dt.time:
    seconds, us = divmod(micros, 1_000_000)
    minutes, s = divmod(seconds, 60)
    h, m = divmod(minutes, 60)
    return dt.time(h, m, s, us)


def _fastavro_ordering(record: DeleteRecord) -> Any:
    t = record.ordering_type
    if t is None:
        return None
    if t is OrderingType.ARRAY:
        items = [None if it is None else (f"{M}.{_WRAPPER_OF[it]}", {"value": _fastavro_scalar(it, v)}) for it, v in record.ordering_value]
        return (f"{M}.ArrayWrapper", {"wrappedValues": items})
    return (f"{M}.{_WRAPPER_OF[t]}", {"value": _fastavro_scalar(t, record.ordering_value)})


def _fastavro_payload(records: list[DeleteRecord]) -> bytes:
    buf = io.BytesIO()
    fastavro.schemaless_writer(
        buf,
        PARSED,
        {
            "deleteRecordList": [
                {"recordKey": r.record_key, "partitionPath": r.partition_path, "orderingVal": _fastavro_ordering(r)}
                for r in records
            ]
        },
    )
    return buf.getvalue()


CASES = [
    DeleteRecord("k", "p"),
    DeleteRecord("k", "p", False),
    DeleteRecord("k", "p", -(2**31), OrderingType.INT),
    DeleteRecord("k", "p", -(2**63), OrderingType.LONG),
    DeleteRecord("k", "p", 0.375, OrderingType.FLOAT),  # exact in float32
    DeleteRecord("k", "p", 1e-300),
    DeleteRecord("k", "p", b""),
    DeleteRecord("k", "p", "ünïcode"),
    DeleteRecord("k", "p", dt.date(1, 1, 1)),
    DeleteRecord("k", "p", Decimal("123456789012345.123456789012345")),
    DeleteRecord("k", "p", Decimal("-0.000000000000001")),
    DeleteRecord("k", "p", 86_399_999_999, OrderingType.TIME_MICROS),
    DeleteRecord("k", "p", dt.datetime(1969, 12, 31, 23, 59, 59, 999999, tzinfo=dt.timezone.utc)),
    DeleteRecord("k", "p", ((OrderingType.LONG, 7), (None, None), (OrderingType.LOCAL_DATE, dt.date(2020, 2, 2)))),
    DeleteRecord("k", "p", None),
    DeleteRecord(None, None),
    DeleteRecord("", ""),
]


@pytest.mark.parametrize("record", CASES, ids=[f"{r.ordering_type}-{i}" for i, r in enumerate(CASES)])
def test_payload_equals_fastavro_and_round_trips(record: DeleteRecord) -> None:
    content = encode_delete_content([record, record])
    version, length = struct.unpack_from(">ii", content)
    assert version == 3 and length == len(content) - 8
    assert content[8:] == _fastavro_payload([record, record])
    assert decode_delete_content(content) == (record, record)
    # fastavro reads our bytes with Hudi's schema
    back = fastavro.schemaless_reader(io.BytesIO(content[8:]), PARSED, return_record_name=True)
    assert [r["recordKey"] for r in back["deleteRecordList"]] == [record.record_key] * 2


def test_default_ordering_value_is_int_wrapper_zero_like_spark_sql_delete() -> None:
    content = encode_delete_content([DeleteRecord("key", "p")])
    # count 1, key (branch 1, len 3), partition (branch 1, len 1), orderingVal branch 2 value 0, end
    assert content[8:] == b"\x02" + b"\x02\x06key" + b"\x02\x02p" + b"\x04\x00" + b"\x00"


def test_ordering_type_inference() -> None:
    assert DeleteRecord("k", "p", 5).ordering_type is OrderingType.INT
    assert DeleteRecord("k", "p", 2**31).ordering_type is OrderingType.LONG
    assert DeleteRecord("k", "p", 1.0).ordering_type is OrderingType.DOUBLE
    assert DeleteRecord("k", "p", dt.datetime(2020, 1, 1)).ordering_type is OrderingType.TIMESTAMP_MICROS
    assert DeleteRecord("k", "p", dt.date(2020, 1, 1)).ordering_type is OrderingType.DATE
    assert DeleteRecord("k", "p", Decimal(1)).ordering_type is OrderingType.DECIMAL
    assert DeleteRecord("k", "p", None).ordering_type is None


def test_naive_timestamp_is_taken_as_utc() -> None:
    naive = DeleteRecord("k", "p", dt.datetime(2020, 1, 1))
    aware = DeleteRecord("k", "p", dt.datetime(2020, 1, 1, tzinfo=dt.timezone.utc))
    assert encode_delete_content([naive]) == encode_delete_content([aware])


@pytest.mark.parametrize(
    "record",
    [
        DeleteRecord("k", "p", 2**31, OrderingType.INT),
        DeleteRecord("k", "p", 2**63, OrderingType.LONG),
        DeleteRecord("k", "p", "5", OrderingType.LONG),
        DeleteRecord("k", "p", Decimal("0.0000000000000001")),
    ],
)
def test_values_that_do_not_fit_are_refused(record: DeleteRecord) -> None:
    with pytest.raises(RecordError):
        encode_delete_content([record])


def test_invalid_records_are_refused_at_construction() -> None:
    with pytest.raises(ValueError):
        DeleteRecord("k", "p", None, OrderingType.INT)
    with pytest.raises(ValueError):
        DeleteRecord("k", "p", dt.date(2020, 1, 1), OrderingType.LOCAL_DATE)
    with pytest.raises(TypeError):
        DeleteRecord("k", "p", object())


def test_malformed_payloads_are_format_errors() -> None:
    good = encode_delete_content([DeleteRecord("k", "p")])
    with pytest.raises(FormatError, match="trailing"):
        decode_delete_content(good[:4] + struct.pack(">i", len(good) - 7) + good[8:] + b"\x00")
    with pytest.raises(FormatError, match="exceeds"):
        decode_delete_content(good[:4] + struct.pack(">i", 999) + good[8:])
    with pytest.raises(FormatError, match="malformed|runs past"):
        decode_delete_content(good[:4] + struct.pack(">i", 4) + good[8:12])
    with pytest.raises(FormatError, match="union index"):
        decode_delete_content(good[:4] + struct.pack(">i", 6) + b"\x02\x00\x00\x7e\x00\x00")
