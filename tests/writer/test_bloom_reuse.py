"""A copy-on-write merge continues the rewritten file's bloom filter with the new keys
instead of rehashing every key, and rebuilds it once removed keys bloat it."""
from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

import hoodie
from hoodie.formats.bloom_footer import read_footer_index
from hoodie.table.table import HoodieTable

OPTS = {
    "hoodie.table.name": "t",
    "hoodie.datasource.write.recordkey.field": "k",
    "hoodie.datasource.write.precombine.field": "ts",
    "hoodie.index.bloom.num_entries": "1000",
}


def latest_filter(path: str):
    (s,) = HoodieTable.open(path).view().latest_slices("")
    md = pq.read_metadata(s.base_file.path).metadata
    keys = pq.read_table(s.base_file.path, columns=["_hoodie_record_key"]).column(0).to_pylist()
    return read_footer_index(md).bloom_filter, keys


def test_filter_is_continued_then_rebuilt_when_bloated(tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    hoodie.write(pa.table({"k": [f"k{i}" for i in range(400)], "ts": [1] * 400}), path, OPTS)
    hoodie.write(pa.table({"k": [f"n{i}" for i in range(100)], "ts": [1] * 100}), path, OPTS)
    f, keys = latest_filter(path)
    assert len(keys) == 500 and f.current_nb_record == 500
    assert f.might_contain_many(keys).all()
    # delete 300 keys: the continued filter would hold 500 keys for 200 live ones
    hoodie.write(pa.table({"k": [f"k{i}" for i in range(300)]}), path, {**OPTS, "hoodie.datasource.write.operation": "delete"})
    f, keys = latest_filter(path)
    assert len(keys) == 200 and f.current_nb_record == 200, "rebuilt from the live keys"
    assert f.might_contain_many(keys).all()
    assert not f.might_contain_many([f"k{i}" for i in range(300)]).any()
