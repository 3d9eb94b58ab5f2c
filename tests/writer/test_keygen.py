"""Key generators produce Hudi's record keys and partition paths and reject bad keys."""
from __future__ import annotations

import pyarrow as pa
import pytest

from hoodie.config.options import HoodieConfig
from hoodie.errors import ConfigError, RecordError
from hoodie.writer.keygen import KeyGenerator, java_date_format_to_strftime


def kg(**opts: str) -> KeyGenerator:
    return KeyGenerator.from_config(HoodieConfig.of(opts))


def test_simple_key_and_plain_partition() -> None:
    g = kg(**{"hoodie.datasource.write.recordkey.field": "id", "hoodie.datasource.write.partitionpath.field": "p"})
    batch = pa.table({"id": [1, 2], "p": ["a", None]})
    assert g.class_name.endswith("SimpleKeyGenerator")
    assert g.record_keys(batch).to_pylist() == ["1", "2"]
    assert g.partition_paths(batch).to_pylist() == ["a", "__HIVE_DEFAULT_PARTITION__"]


def test_complex_key_hive_style_multi_partition() -> None:
    g = kg(**{
        "hoodie.datasource.write.recordkey.field": "id,name",
        "hoodie.datasource.write.partitionpath.field": "byteField,shortField",
        "hoodie.datasource.write.hive_style_partitioning": "true",
    })
    batch = pa.table({"id": [4, 5], "name": ["Diana", ""], "byteField": pa.array([10, 20], pa.int8()), "shortField": pa.array([300, 100], pa.int16())})
    # the format conformance tables show: "id:4,name:Diana" and "byteField=10/shortField=300"
    assert g.record_keys(batch).to_pylist() == ["id:4,name:Diana", "id:5,name:__empty__"]
    assert g.partition_paths(batch).to_pylist() == ["byteField=10/shortField=300", "byteField=20/shortField=100"]


def test_nonpartitioned() -> None:
    g = kg(**{"hoodie.datasource.write.recordkey.field": "id"})
    assert g.class_name.endswith("NonpartitionedKeyGenerator")
    assert g.partition_paths(pa.table({"id": [1]})).to_pylist() == [""]


def test_timestamp_based_date_string_and_epoch_millis() -> None:
    g = kg(**{
        "hoodie.datasource.write.recordkey.field": "id",
        "hoodie.datasource.write.partitionpath.field": "ts_str",
        "hoodie.datasource.write.keygenerator.class": "org.apache.hudi.keygen.TimestampBasedKeyGenerator",
        "hoodie.keygen.timebased.timestamp.type": "DATE_STRING",
        "hoodie.keygen.timebased.input.dateformat": "yyyy-MM-dd'T'HH:mm:ss'Z'",
        "hoodie.keygen.timebased.output.dateformat": "yyyy/MM/dd/HH",
    })
    assert g.partition_paths(pa.table({"id": [1], "ts_str": ["2023-04-04T13:01:02Z"]})).to_pylist() == ["2023/04/04/13"]
    g = kg(**{
        "hoodie.datasource.write.recordkey.field": "id",
        "hoodie.datasource.write.partitionpath.field": "ts",
        "hoodie.datasource.write.keygenerator.type": "TIMESTAMP",
        "hoodie.keygen.timebased.timestamp.type": "EPOCHMILLISECONDS",
        "hoodie.keygen.timebased.output.dateformat": "yyyy-MM-dd",
    })
    assert g.partition_paths(pa.table({"id": [1], "ts": [1700000000000]})).to_pylist() == ["2023-11-14"]


def test_java_date_format_translation() -> None:
    assert java_date_format_to_strftime("yyyy/MM/dd'T'HH") == "%Y/%m/%dT%H"
    with pytest.raises(ConfigError, match="'E'"):
        java_date_format_to_strftime("EEE")


@pytest.mark.parametrize("value, word", [(None, "null"), ("", "empty")])
def test_null_or_empty_key_names_field_and_row(value: str | None, word: str) -> None:
    g = kg(**{"hoodie.datasource.write.recordkey.field": "id"})
    with pytest.raises(RecordError, match=rf"'id' is {word} in row 1"):
        g.record_keys(pa.table({"id": ["a", value]}))


def test_missing_key_column_is_named() -> None:
    g = kg(**{"hoodie.datasource.write.recordkey.field": "uuid"})
    with pytest.raises(RecordError, match="'uuid' is not a column"):
        g.record_keys(pa.table({"id": ["a"]}))


def test_floats_render_like_java() -> None:
    g = kg(**{"hoodie.datasource.write.recordkey.field": "f"})
    assert g.record_keys(pa.table({"f": [1.0, 2.5]})).to_pylist() == ["1.0", "2.5"]


def test_url_encoded_partition_paths_escape_like_hive() -> None:
    g = kg(**{
        "hoodie.datasource.write.recordkey.field": "id",
        "hoodie.datasource.write.partitionpath.field": "p",
        "hoodie.datasource.write.partitionpath.urlencode": "true",
    })
    batch = pa.table({"id": [1, 2], "p": ["2024/01/02 10:00", "a+b,é"]})
    assert g.partition_paths(batch).to_pylist() == ["2024%2F01%2F02 10%3A00", "a+b,é"]
