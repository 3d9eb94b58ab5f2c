"""Tables hoodie writes read back through hudi-rs (the independent Apache Hudi reader)
exactly as expected, and carry bloom filters that decode per the spec."""
from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from table_options import trip_options

import hoodie
from hoodie.formats.bloom_footer import read_footer_index
from hoodie.table.table import HoodieTable

DATA_COLS = ["uuid", "city", "ts", "fare", "rider"]


def batch(rows: list[tuple]) -> pa.Table:
    cols = list(zip(*rows)) if rows else [[] for _ in DATA_COLS]
    return pa.table({
        "uuid": pa.array(cols[0], pa.string()),
        "city": pa.array(cols[1], pa.string()),
        "ts": pa.array(cols[2], pa.int64()),
        "fare": pa.array(cols[3], pa.float64()),
        "rider": pa.array(cols[4], pa.string()),
    })


def data_rows(table: pa.Table, cols: list[str]) -> list[tuple]:
    return sorted(tuple(r[c] for c in cols) for r in table.select(cols).to_pylist())


SCENARIOS = {
    "partitioned_simple": {
        "hoodie.datasource.write.recordkey.field": "uuid",
        "hoodie.datasource.write.partitionpath.field": "city",
    },
    "partitioned_hive_style": {
        "hoodie.datasource.write.recordkey.field": "uuid",
        "hoodie.datasource.write.partitionpath.field": "city",
        "hoodie.datasource.write.hive_style_partitioning": "true",
    },
    "nonpartitioned": {"hoodie.datasource.write.recordkey.field": "uuid"},
    "complex_key": {
        "hoodie.datasource.write.recordkey.field": "uuid,rider",
        "hoodie.datasource.write.partitionpath.field": "city",
        "hoodie.datasource.write.keygenerator.class": "org.apache.hudi.keygen.ComplexKeyGenerator",
    },
}


@pytest.mark.parametrize("index_type", ["BLOOM", "SIMPLE"])
@pytest.mark.parametrize("scenario", sorted(SCENARIOS))
def test_hudi_rs_reads_what_hoodie_writes(tmp_path: Path, scenario: str, index_type: str, hudi_rs_read) -> None:
    path = str(tmp_path / scenario)
    opts = {"hoodie.table.name": "trips", "hoodie.datasource.write.precombine.field": "ts", "hoodie.index.type": index_type, **SCENARIOS[scenario]}
    expected: dict[tuple, tuple] = {}

    def apply(rows: list[tuple], op: str = "upsert") -> None:
        hoodie.write(batch(rows), path, {**opts, "hoodie.datasource.write.operation": op})
        for r in rows:
            key = (r[0], r[4]) if "rider" in opts["hoodie.datasource.write.recordkey.field"] else (r[0],)
            full_key = key if "partitionpath.field" not in str(opts) else (r[1],) + key
            if op == "delete":
                expected.pop(full_key, None)
            elif op == "insert_overwrite":
                pass
            else:
                cur = expected.get(full_key)
                if cur is None or cur[2] <= r[2]:
                    expected[full_key] = r

    apply([("a", "sf", 1, 1.0, "r1"), ("b", "sf", 1, 2.0, "r2"), ("c", "nyc", 1, 3.0, "r3"), ("d", "la", 1, 4.0, "r4")], "insert")
    apply([("a", "sf", 2, 10.0, "r1"), ("c", "nyc", 0, 30.0, "r3"), ("e", "nyc", 2, 5.0, "r5")])
    apply([("b", "sf", 9, 0.0, "r2"), ("zz", "la", 9, 0.0, "r9")], "delete")
    got = hudi_rs_read(path)
    assert data_rows(got, DATA_COLS) == sorted(expected.values())
    ours = hoodie.read(path)
    assert data_rows(ours, DATA_COLS) == sorted(expected.values())
    assert ours.column_names[:5] == ["_hoodie_commit_time", "_hoodie_commit_seqno", "_hoodie_record_key", "_hoodie_partition_path", "_hoodie_file_name"]


def test_insert_overwrite_and_overwrite_table_read_by_hudi_rs(table_path: str, hudi_rs_read) -> None:
    opts = trip_options()
    hoodie.write(batch([("a", "sf", 1, 1.0, "x"), ("b", "nyc", 1, 2.0, "y"), ("c", "la", 1, 3.0, "z")]), table_path, opts)
    t = hoodie.write(batch([("q", "sf", 2, 9.0, "w")]), table_path, {**opts, "hoodie.datasource.write.operation": "insert_overwrite"})
    table = HoodieTable.open(table_path)
    inst = table.timeline.get(t)
    assert inst.action == "replacecommit"
    meta = table.commit_metadata(inst)
    assert list(meta.replaced_file_ids()) == ["sf"]
    assert data_rows(hudi_rs_read(table_path), ["uuid", "city"]) == [("b", "nyc"), ("c", "la"), ("q", "sf")]
    hoodie.write(batch([("z", "sf", 3, 1.0, "v")]), table_path, {**opts, "hoodie.datasource.write.operation": "insert_overwrite_table"})
    assert data_rows(hudi_rs_read(table_path), ["uuid", "city"]) == [("z", "sf")]
    assert data_rows(hoodie.read(table_path), ["uuid", "city"]) == [("z", "sf")]


def test_every_base_file_carries_a_bloom_filter_holding_its_keys(table_path: str) -> None:
    opts = trip_options()
    rows = [(f"k{i:05d}", ["sf", "nyc"][i % 2], i, float(i), "r") for i in range(3000)]
    hoodie.write(batch(rows), table_path, opts)
    hoodie.write(batch([(f"k{i:05d}", ["sf", "nyc"][i % 2], 10**6, 0.5, "u") for i in range(0, 3000, 7)]), table_path, opts)
    files = list(Path(table_path).rglob("*.parquet"))
    assert files
    for f in files:
        md = pq.read_metadata(f)
        index = read_footer_index(md.metadata)
        keys = pq.read_table(f, columns=["_hoodie_record_key"]).column(0).to_pylist()
        assert index is not None and index.bloom_filter is not None
        assert md.metadata[b"hoodie_bloom_filter_type_code"] == b"DYNAMIC_V0"
        assert index.min_key == min(keys) and index.max_key == max(keys)
        assert index.bloom_filter.might_contain_many(keys).all()
        assert not index.bloom_filter.might_contain_many([f"absent-{i}" for i in range(2000)]).any()
