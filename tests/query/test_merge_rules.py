"""Unit tests of the merge rules and ordering values (no files): each rule as hudi-rs 0.5.0's
default file group reader applies it."""
from __future__ import annotations

import itertools
import math
from decimal import Decimal

import pyarrow as pa
import pytest

from hoodie.config.table_config import TableConfig
from hoodie.errors import UnsupportedTableError
from hoodie.formats.log import DeleteRecord, OrderingType
from hoodie.table.slice_reader.merge_rules import (
    BufferedRecord,
    MergeConfig,
    MergeMode,
    delta_merge,
    delta_merge_delete,
    final_merge,
    resolve_merge_mode,
)
from hoodie.table.slice_reader.ordering import (
    DEFAULT,
    OrderingValue,
    column_ordering_values,
    compare,
    delete_ordering_value,
    same_class,
)

EVENT, COMMIT = MergeMode.EVENT_TIME_ORDERING, MergeMode.COMMIT_TIME_ORDERING


def L(v: int) -> OrderingValue:
    return OrderingValue("long", v)


def data(ordering: OrderingValue | None, row: int = 0) -> BufferedRecord:
    return BufferedRecord(ordering, False, 0, row)


def delete(ordering: OrderingValue | None) -> BufferedRecord:
    return BufferedRecord(ordering, True)


# --- ordering values --------------------------------------------------------------------------


def test_integer_like_columns_are_longs_and_nulls_the_default() -> None:
    values = column_ordering_values([pa.array([3, None, -1], pa.int16())])
    assert values == [L(3), DEFAULT, L(-1)]
    assert column_ordering_values([pa.array([True, False])]) == [L(1), L(0)]
    assert column_ordering_values([pa.array([0], pa.timestamp("us"))]) == [L(0)]
    assert column_ordering_values([pa.array(["b"])]) == [OrderingValue("string", "b")]
    assert column_ordering_values([pa.array([Decimal("1.50")], pa.decimal128(5, 2))])[0].kind == "decimal"


def test_composite_of_several_fields_and_none_when_a_part_is_null() -> None:
    values = column_ordering_values([pa.array([1, None]), pa.array(["a", "b"])])
    assert values[0] == OrderingValue("composite", (L(1), OrderingValue("string", "a")))
    assert values[1] is None


def test_only_an_int_wrapper_zero_is_the_default_delete_ordering() -> None:
    assert delete_ordering_value(DeleteRecord("k", "p", 0, OrderingType.INT)) == DEFAULT
    assert delete_ordering_value(DeleteRecord("k", "p", 0, OrderingType.LONG)) == L(0)
    assert delete_ordering_value(DeleteRecord("k", "p", 7, OrderingType.INT)) == L(7)
    assert delete_ordering_value(DeleteRecord("k", "p", None, None)) is None
    assert delete_ordering_value(DeleteRecord("k", "p", "x", OrderingType.STRING)) == OrderingValue("string", "x")


def test_comparison_classes() -> None:
    assert same_class(DEFAULT, L(5)) and compare(DEFAULT, L(5)) < 0 and compare(L(0), DEFAULT) == 0
    assert not same_class(L(1), OrderingValue("string", "1"))
    assert not same_class(OrderingValue("double", 1.0), L(1))
    d = [OrderingValue("double", x) for x in (-math.inf, -0.0, 0.0, 1.0, math.inf, math.nan)]
    assert all(compare(a, b) < 0 for a, b in itertools.pairwise(d))  # IEEE total order, NaN last
    assert compare(OrderingValue("decimal", Decimal("1.0")), OrderingValue("decimal", Decimal("1.00"))) == 0
    assert compare(OrderingValue("string", "é"), OrderingValue("string", "z")) > 0  # code points, as UTF-8 bytes


# --- event time -------------------------------------------------------------------------------


def test_delta_merge_ties_go_to_the_newer_record() -> None:
    old, tie, low = data(L(5), 0), data(L(5), 1), data(L(4), 2)
    assert delta_merge(EVENT, tie, old) is tie
    assert delta_merge(EVENT, low, old) is old
    assert delta_merge(EVENT, low, None) is low


def test_delta_merge_null_ordering_is_zero_and_cross_class_lets_the_newer_win() -> None:
    assert delta_merge(EVENT, data(DEFAULT, 1), data(L(3))).row == 0  # 0 < 3
    assert delta_merge(EVENT, data(DEFAULT, 1), data(L(-3))).row == 1
    assert delta_merge(EVENT, data(OrderingValue("string", "a"), 1), data(L(9))).row == 1
    assert delta_merge(EVENT, data(None, 1), data(L(9))).row == 1  # no value at all: newer wins


def test_commit_time_delete_wins_and_is_only_displaced_by_data() -> None:
    ct_delete = delete(DEFAULT)
    assert delta_merge_delete(EVENT, ct_delete, data(L(100))) is ct_delete
    assert delta_merge_delete(EVENT, delete(L(200)), ct_delete) is ct_delete  # a later delete-block entry keeps it
    newer = data(L(-5), 3)
    assert delta_merge(EVENT, newer, ct_delete) is newer  # any later data record replaces it


def test_delete_with_an_ordering_loses_only_to_a_strictly_greater_same_class_value() -> None:
    existing = data(L(10))
    assert delta_merge_delete(EVENT, delete(L(9)), existing) is existing
    tie = delete(L(10))
    assert delta_merge_delete(EVENT, tie, existing) is tie
    zero_long = delete(L(0))  # a genuine long 0 is compared, unlike the int default
    assert delta_merge_delete(EVENT, zero_long, existing) is existing
    cross = delete(OrderingValue("string", "0"))
    assert delta_merge_delete(EVENT, cross, existing) is cross


def test_final_merge_against_the_base_row() -> None:
    base = data(L(10), 0)
    assert final_merge(EVENT, base, data(L(9), 1)) is base
    upd = data(L(10), 1)
    assert final_merge(EVENT, base, upd) is upd
    assert final_merge(EVENT, base, delete(L(9))) is base
    assert final_merge(EVENT, base, delete(L(10))).is_delete
    assert final_merge(EVENT, base, delete(DEFAULT)).is_delete
    assert final_merge(EVENT, data(DEFAULT), data(L(-1))).ordering == DEFAULT  # null base = 0 > -1


def test_commit_time_mode_always_takes_the_newer_record() -> None:
    base, low = data(L(10)), data(L(1), 1)
    assert final_merge(COMMIT, base, low) is low
    assert delta_merge(COMMIT, low, data(L(99), 2)) is low
    d = delete(L(-1))
    assert delta_merge_delete(COMMIT, d, data(L(99))) is d


# --- merge mode resolution --------------------------------------------------------------------

DEFAULT_PAYLOAD = "org.apache.hudi.common.model.DefaultHoodieRecordPayload"
OVERWRITE_PAYLOAD = "org.apache.hudi.common.model.OverwriteWithLatestAvroPayload"
EVENT_ID, COMMIT_ID = "eeb8d96f-b1e4-49fd-bbf8-28ac514178e5", "ce9acb64-bde0-424c-9b91-f6ebba25356d"


@pytest.mark.parametrize(
    ("props", "version", "ordering", "mode"),
    [
        ({}, 6, True, EVENT),
        ({}, 6, False, COMMIT),
        ({"hoodie.compaction.payload.class": DEFAULT_PAYLOAD}, 6, False, EVENT),
        # Spark's v6 sample tables: the payload class decides before v8, the strategy id after
        ({"hoodie.compaction.payload.class": OVERWRITE_PAYLOAD, "hoodie.compaction.record.merger.strategy": EVENT_ID}, 6, True, COMMIT),
        ({"hoodie.compaction.payload.class": OVERWRITE_PAYLOAD, "hoodie.record.merge.strategy.id": EVENT_ID}, 8, True, EVENT),
        ({"hoodie.record.merge.strategy.id": COMMIT_ID}, 8, True, COMMIT),
        ({"hoodie.record.merge.mode": "commit_time_ordering", "hoodie.compaction.payload.class": DEFAULT_PAYLOAD}, 9, True, COMMIT),
        ({"hoodie.compaction.payload.class": "com.example.Payload"}, 6, True, MergeMode.CUSTOM),
        ({"hoodie.record.merge.mode": "CUSTOM"}, 9, True, MergeMode.CUSTOM),
    ],
)
def test_resolve_merge_mode(props, version, ordering, mode) -> None:
    assert resolve_merge_mode(props, version, ordering) is mode


def test_merge_config_of_a_table() -> None:
    config = TableConfig({
        "hoodie.table.name": "t",
        "hoodie.table.version": "9",
        "hoodie.table.ordering.fields": "ts, seq",
        "hoodie.record.merge.mode": "EVENT_TIME_ORDERING",
        "hoodie.record.merge.property.hoodie.payload.delete.field": "op",
        "hoodie.record.merge.property.hoodie.payload.delete.marker": "d",
    })
    merge = MergeConfig.for_table(config)
    assert merge.mode is EVENT and merge.ordering_fields == ("ts", "seq") and merge.delete_marker == ("op", "d")
    with pytest.raises(UnsupportedTableError, match="custom"):
        MergeConfig(MergeMode.CUSTOM).require_mergeable("slice")
