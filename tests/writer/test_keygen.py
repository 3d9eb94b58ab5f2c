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


def _timestamps(**opts: str) -> KeyGenerator:
    return kg(**{
        "hoodie.datasource.write.recordkey.field": "id",
        "hoodie.datasource.write.partitionpath.field": "at",
        "hoodie.datasource.write.keygenerator.class": "org.apache.hudi.keygen.TimestampBasedKeyGenerator",
        **opts,
    })


DATES = {"hoodie.keygen.timebased.timestamp.type": "DATE_STRING", "hoodie.keygen.timebased.input.dateformat": "yyyy-MM-dd HH:mm:ss"}


# (options, values of "at", partition paths): what Apache Hudi 0.15's writer made of them
@pytest.mark.parametrize(("opts", "values", "paths"), [
    # no time zone: a null date is the epoch's
    ({**DATES, "hoodie.keygen.timebased.output.dateformat": "yyyy/MM/dd"}, pa.array(["2024-03-01 10:00:00", None]), ["2024/03/01", "1970/01/01"]),
    # the key generator's zone is the input's and the output's: the hour stays; a null is the epoch in that zone
    (
        {**DATES, "hoodie.keygen.timebased.output.dateformat": "yyyy-MM-dd-HH", "hoodie.keygen.timebased.timezone": "America/Los_Angeles"},
        pa.array(["2024-03-01 10:00:00", None]),
        ["2024-03-01-10", "1969-12-31-16"],
    ),
    # the input zone alone: read there, written in it; a time the clocks repeat is the earlier
    (
        {**DATES, "hoodie.keygen.timebased.output.dateformat": "yyyy-MM-dd-HH", "hoodie.keygen.timebased.input.timezone": "Asia/Tokyo"},
        pa.array(["2024-03-01 10:00:00", None]),
        ["2024-03-01-10", "1970-01-01-09"],
    ),
    (
        {**DATES, "hoodie.keygen.timebased.output.dateformat": "yyyy-MM-dd-HH",
         "hoodie.keygen.timebased.input.timezone": "America/Los_Angeles", "hoodie.keygen.timebased.output.timezone": "UTC"},
        pa.array(["2024-11-03 01:30:00", None]),
        ["2024-11-03-08", "1970-01-01-00"],
    ),
    # epoch values: a null is one unit after the epoch
    (
        {"hoodie.keygen.timebased.timestamp.type": "EPOCHMILLISECONDS", "hoodie.keygen.timebased.output.dateformat": "yyyy-MM-dd-HH",
         "hoodie.keygen.timebased.timezone": "America/Los_Angeles"},
        pa.array([1700000000000, None], pa.int64()),
        ["2023-11-14-14", "1969-12-31-16"],
    ),
    (
        {"hoodie.keygen.timebased.timestamp.type": "UNIX_TIMESTAMP", "hoodie.keygen.timebased.output.dateformat": "yyyy-MM-dd-HH"},
        pa.array([1700000000, None], pa.int64()),
        ["2023-11-14-22", "1970-01-01-00"],
    ),
])
def test_timestamp_partitions_of_nulls_and_zones_are_apache_hudis(opts: dict[str, str], values: pa.Array, paths: list[str]) -> None:
    assert _timestamps(**opts).partition_paths(pa.table({"id": [1, 2], "at": values})).to_pylist() == paths


def test_a_date_string_the_input_format_does_not_read_is_refused_naming_it() -> None:
    g = _timestamps(**DATES, **{"hoodie.keygen.timebased.output.dateformat": "yyyy/MM/dd"})
    batch = pa.table({"id": ["a", "b"], "at": ["2024-03-01 10:00:00", "01/03/2024"]})
    with pytest.raises(RecordError, match=r"'at' of record key 'b' has the value '01/03/2024', which does not match .*input.dateformat='yyyy-MM-dd HH:mm:ss'"):
        g.partition_paths(batch)


def test_the_output_zone_alone_leaves_the_input_in_utc_and_is_recorded_as_such() -> None:
    g = _timestamps(**DATES, **{"hoodie.keygen.timebased.output.dateformat": "yyyy-MM-dd-HH", "hoodie.keygen.timebased.output.timezone": "Asia/Tokyo"})
    assert g.partition_paths(pa.table({"id": [1], "at": ["2024-03-01 10:00:00"]})).to_pylist() == ["2024-03-01-19"]
    props = g.table_properties()
    assert props["hoodie.keygen.timebased.output.timezone"] == "Asia/Tokyo" and "hoodie.keygen.timebased.timezone" not in props
    assert _timestamps(**DATES).table_properties()["hoodie.keygen.timebased.timezone"] == "UTC"


def test_a_date_string_at_a_time_the_clocks_skip_is_refused_naming_it() -> None:
    g = _timestamps(**DATES, **{"hoodie.keygen.timebased.output.dateformat": "yyyy/MM/dd", "hoodie.keygen.timebased.timezone": "America/Los_Angeles"})
    batch = pa.table({"id": ["a", "b"], "at": ["2024-03-01 10:00:00", "2024-03-10 02:30:00"]})
    with pytest.raises(RecordError, match=r"'at' of record key 'b' has the value '2024-03-10 02:30:00', which is a time the clocks skip in America/"):
        g.partition_paths(batch)
