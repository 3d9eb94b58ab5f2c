"""Which partition paths pin down a column's value (pure logic, no Spark session)."""
from __future__ import annotations

import datetime

import pyarrow as pa
import pytest

from hoodie.config.table_config import TableConfig
from hoodie.layout import DEFAULT_PARTITION
from hoodie.table.partition_values import PartitionScheme, exact_value

SIMPLE = "org.apache.hudi.keygen.SimpleKeyGenerator"


@pytest.mark.parametrize(
    ("text", "arrow_type", "expected"),
    [
        ("sf", pa.string(), (True, "sf")),
        ("007", pa.string(), (True, "007")),
        (DEFAULT_PARTITION, pa.string(), (False, None)),  # null or ""
        ("default", pa.string(), (False, None)),  # pre-0.12 default partition
        (DEFAULT_PARTITION, pa.int32(), (True, None)),  # an int has no empty text
        ("-42", pa.int64(), (True, -42)),
        ("007", pa.int32(), (False, None)),  # not how an int prints
        ("2024-01-02", pa.date32(), (True, datetime.date(2024, 1, 2))),
        ("2024-1-2", pa.date32(), (False, None)),
        ("true", pa.bool_(), (True, True)),
        ("1.0", pa.float64(), (False, None)),
        ("1700000000000000", pa.timestamp("us", "UTC"), (False, None)),
    ],
)
def test_exact_value(text: str, arrow_type: pa.DataType, expected: tuple[bool, object]) -> None:
    assert exact_value(text, arrow_type) == expected


def _scheme(**props: str) -> PartitionScheme:
    return PartitionScheme.of(TableConfig({"hoodie.table.keygenerator.class": SIMPLE, **props}))


SCHEMA = pa.schema([("city", pa.string()), ("n", pa.int32()), ("v", pa.float64())])


def test_literals_by_layout() -> None:
    plain = _scheme(**{"hoodie.table.partition.fields": "city"})
    assert plain.literals("sf", SCHEMA) == {"city": "sf"}
    assert plain.literals("a/b", SCHEMA) == {}  # a value holding "/" splits the path
    hive = _scheme(**{"hoodie.table.partition.fields": "city,n", "hoodie.datasource.write.hive_style_partitioning": "true"})
    assert hive.literals("city=sf/n=3", SCHEMA) == {"city": "sf", "n": 3}
    assert hive.literals(f"city={DEFAULT_PARTITION}/n={DEFAULT_PARTITION}", SCHEMA) == {"n": None}
    assert hive.discoverable(["city=sf/n=3", "city=la/n=-1"], SCHEMA)
    assert not hive.discoverable(["city=sf/n=3", f"city={DEFAULT_PARTITION}/n=1"], SCHEMA)
    assert not hive.discoverable(["city=s%2Ff/n=3"], SCHEMA)  # Spark would unescape %2F
    encoded = _scheme(**{"hoodie.table.partition.fields": "city", "hoodie.datasource.write.partitionpath.urlencode": "true"})
    assert encoded.literals("s%2Ff", SCHEMA) == {"city": "s/f"}
    assert encoded.literals("a+b", SCHEMA) == {}  # space (quote_plus) or plus (Hive escaping)?
    timestamp = PartitionScheme.of(TableConfig({
        "hoodie.table.keygenerator.class": "org.apache.hudi.keygen.TimestampBasedKeyGenerator",
        "hoodie.table.partition.fields": "city",
    }))
    assert timestamp.literals("sf", SCHEMA) == {} and not timestamp.discoverable(["sf"], SCHEMA)
