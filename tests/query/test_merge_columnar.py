"""The columnar slice merge (``merge_columnar``) gives exactly what the record-at-a-time
merge rules give, on random slices: keys repeated within and across log blocks and in the
base file, ordering ties, nulls, every ordering class it takes on, and commit time."""
from __future__ import annotations

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hoodie.table.slice_reader.merge import MergeStats, _LogBuffer, _merge_base, merge_columnar
from hoodie.table.slice_reader.merge_rules import MergeConfig, MergeMode

ORDERING_TYPES = {
    "long": (pa.int64(), st.integers(-3, 3)),
    "int32": (pa.int32(), st.integers(-3, 3)),
    "bool": (pa.bool_(), st.booleans()),
    "timestamp": (pa.timestamp("us"), st.integers(0, 4)),
    "double": (pa.float64(), st.sampled_from([-1.5, -0.0, 0.0, 2.0, float("inf"), float("nan")])),
    "string": (pa.string(), st.sampled_from(["", "a", "b", "é", "zz"])),
}


def _schema(ordering: pa.DataType) -> pa.Schema:
    return pa.schema([("_hoodie_record_key", pa.string()), ("ts", ordering), ("v", pa.int64())])


@st.composite
def slices(draw, type_name: str):
    arrow_type, values = ORDERING_TYPES[type_name]
    nullable = draw(st.booleans())
    ordering = st.one_of(st.none(), values) if nullable else values
    keys = st.sampled_from([f"k{i}" for i in range(8)])

    def rows(n: int) -> list[dict]:
        return [{"_hoodie_record_key": draw(keys), "ts": draw(ordering), "v": draw(st.integers(0, 10**6))} for _ in range(n)]

    schema = _schema(arrow_type)
    base = pa.Table.from_pylist(rows(draw(st.integers(0, 8))), schema=schema)
    logs = [pa.Table.from_pylist(rows(draw(st.integers(1, 6))), schema=schema) for _ in range(draw(st.integers(1, 3)))]
    return base, logs


def _record_at_a_time(base: pa.Table, logs: list[pa.Table], merge: MergeConfig) -> tuple[pa.Table, MergeStats]:
    stats = MergeStats()
    buffer = _LogBuffer(merge, base.schema, stats)
    for i, t in enumerate(logs):
        buffer.add_data(t, f"2024010100000000{i}")
    return _merge_base(base, buffer, merge.mode, stats), stats


def _rows(t: pa.Table) -> list[str]:
    return sorted(map(repr, t.to_pylist()))  # repr: NaN equals itself


@pytest.mark.parametrize("type_name", sorted(ORDERING_TYPES))
@pytest.mark.parametrize("mode", [MergeMode.EVENT_TIME_ORDERING, MergeMode.COMMIT_TIME_ORDERING])
def test_columnar_equals_record_at_a_time(type_name: str, mode: MergeMode) -> None:
    merge = MergeConfig(mode, ("ts",))

    @settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(slices(type_name))
    def check(case) -> None:
        base, logs = case
        expected, expected_stats = _record_at_a_time(base, logs, merge)
        stats = MergeStats()
        got = merge_columnar(base, logs, merge, stats)
        if got is None:
            # only a null float or string ordering in the log sends a slice back to the rules
            log = pa.concat_tables(logs)
            assert mode is MergeMode.EVENT_TIME_ORDERING and type_name in ("double", "string") and log.column("ts").null_count
            return
        assert _rows(got) == _rows(expected)
        assert (stats.updated, stats.inserted, stats.deleted, stats.log_records) == (
            expected_stats.updated, expected_stats.inserted, expected_stats.deleted, expected_stats.log_records)

    check()


def test_declines_delete_flags_and_composite_orderings() -> None:
    schema = pa.schema([("_hoodie_record_key", pa.string()), ("ts", pa.int64()), ("_hoodie_is_deleted", pa.bool_())])
    log = pa.Table.from_pylist([{"_hoodie_record_key": "a", "ts": 1, "_hoodie_is_deleted": True}], schema=schema)
    base = schema.empty_table()
    assert merge_columnar(base, [log], MergeConfig(MergeMode.EVENT_TIME_ORDERING, ("ts",)), MergeStats()) is None
    plain = log.drop_columns(["_hoodie_is_deleted"])
    assert merge_columnar(plain.slice(0, 0), [plain], MergeConfig(MergeMode.EVENT_TIME_ORDERING, ("ts", "_hoodie_record_key")), MergeStats()) is None
    assert merge_columnar(plain.slice(0, 0), [plain], MergeConfig(MergeMode.EVENT_TIME_ORDERING, ("ts",)), MergeStats()).num_rows == 1


def test_a_log_record_without_key_is_reported_with_its_instant() -> None:
    from hoodie.errors import FormatError

    schema = _schema(pa.int64())
    log = pa.Table.from_pylist([{"_hoodie_record_key": None, "ts": 1, "v": 1}], schema=schema)
    merge = MergeConfig(MergeMode.EVENT_TIME_ORDERING, ("ts",))
    assert merge_columnar(schema.empty_table(), [log], merge, MergeStats()) is None
    with pytest.raises(FormatError, match="log block of instant 20240101000000000: a record has no record key"):
        _record_at_a_time(schema.empty_table(), [log], merge)
