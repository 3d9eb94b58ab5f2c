"""Which version of a key wins is decided by one set of rules (table.slice_reader.merge_rules)
wherever two versions meet: the writer's dedupe of a batch, the copy-on-write merge into a
base file, and the merge-on-read slice merge (read and compaction)."""
from __future__ import annotations

import os
import random
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

import hoodie
from hoodie.services import CompactionSettings, compact
from hoodie.services.compaction import UNBOUNDED_STRATEGY
from hoodie.table import HoodieTable
from hoodie.table.slice_reader.merge_rules import MergeMode, fold_versions, surviving_versions
from hoodie.table.slice_reader.ordering import LONG, column_ordering_values, columnar_kind, sort_keys
from hoodie.writer.prepare import dedupe
from hoodie.writer.schema import DELETE_COLUMN


def _keyed(keys: list[str], ordering: pa.Array, deletes: list[bool]) -> pa.Table:
    return pa.table({
        "_hoodie_record_key": keys,
        "_hoodie_partition_path": ["p"] * len(keys),
        DELETE_COLUMN: deletes,
        "ts": ordering,
        "row": list(range(len(keys))),
    })


def _folded(batch: pa.Table) -> list[int]:
    """The rows the record-at-a-time fold of the merge rules keeps, in batch order."""
    encoded = batch.column("_hoodie_record_key").combine_chunks().dictionary_encode()
    codes = encoded.indices.to_numpy(zero_copy_only=False).astype(np.int64)
    orderings = column_ordering_values([batch.column("ts")])
    deletes = batch.column(DELETE_COLUMN).to_numpy(zero_copy_only=False)
    return sorted(fold_versions(codes, len(encoded.dictionary), orderings, deletes, MergeMode.EVENT_TIME_ORDERING).tolist())


@pytest.mark.parametrize("seed", range(40))
@pytest.mark.parametrize("kind", ["int", "float", "string"])
def test_dedupe_keeps_what_the_merge_rules_keep(seed: int, kind: str) -> None:
    """Column at a time or record by record, dedupe keeps exactly the versions the fold of
    the delta-merge rule keeps: nulls (the default value), ties and deletes included."""
    rng = random.Random(seed * 7 + len(kind))
    n = rng.randint(2, 60)
    keys = [f"k{rng.randint(0, n // 3)}" for _ in range(n)]
    values: list[object | None] = []
    for _ in range(n):
        v = rng.randint(-3, 3)
        values.append(None if rng.random() < 0.2 else {"int": v, "float": v / 2, "string": f"s{v + 3}"}[kind])
    arrow_type = {"int": pa.int64(), "float": pa.float64(), "string": pa.string()}[kind]
    batch = _keyed(keys, pa.array(values, arrow_type), [rng.random() < 0.15 for _ in range(n)])
    assert dedupe(batch, "ts").column("row").to_pylist() == _folded(batch)


def test_column_at_a_time_winners_are_the_fold_for_total_orders() -> None:
    rng = np.random.default_rng(3)
    codes = rng.integers(0, 50, 2000)
    values = pa.array(rng.integers(-5, 5, 2000))
    assert columnar_kind(values.type) == LONG
    order = sort_keys(values, LONG)
    assert order is not None
    orderings = column_ordering_values([values])
    folded = fold_versions(codes, 50, orderings, np.zeros(2000, dtype=bool), MergeMode.EVENT_TIME_ORDERING)
    assert surviving_versions(codes, 50, order).tolist() == folded.tolist()


OPTS = {
    "hoodie.table.name": "wins",
    "hoodie.datasource.write.recordkey.field": "uuid",
    "hoodie.datasource.write.partitionpath.field": "city",
    "hoodie.datasource.write.precombine.field": "ts",
    "hoodie.compact.inline": "false",
    # no small files: merge-on-read updates go to log files, not into a merged base file
    "hoodie.parquet.small.file.limit": "0",
    # the merge rules; the test compacts through the library, on a table opened plainly
    "hoodie.metadata.enable": "false",
}


def _batch(rows: list[tuple[str, int | None, float, bool]]) -> pa.Table:
    uuid, ts, fare, deleted = zip(*rows)
    return pa.table({
        "uuid": list(uuid),
        "city": ["sf"] * len(rows),
        "ts": pa.array(ts, pa.int64()),
        "fare": list(fare),
        "_hoodie_is_deleted": list(deleted),
    })


def _rows(t: pa.Table) -> list[tuple]:
    return sorted((r["uuid"], r["ts"], r["fare"]) for r in t.select(["uuid", "ts", "fare"]).to_pylist())


def test_copy_on_write_and_merge_on_read_keep_the_same_versions(tmp_path: Path, hudi_rs_read) -> None:
    """Null ordering values (the default 0), smaller and equal values, deletes with and
    without a value, against stored records with positive, zero, negative and null
    values: a copy-on-write merge keeps what a merge-on-read read, hudi-rs's read of it
    and its compaction keep."""
    first = _batch([("a", 5, 1.0, False), ("b", 0, 1.0, False), ("c", -2, 1.0, False), ("d", None, 1.0, False),
                    ("e", 5, 1.0, False), ("f", 5, 1.0, False), ("g", 3, 1.0, False)])
    second = _batch([
        ("a", None, 2.0, False),  # null (0) against 5: the stored record stays
        ("b", None, 2.0, False),  # null (0) against 0: a tie, the newer wins
        ("c", None, 2.0, False),  # null (0) against -2: the newer wins
        ("d", -1, 2.0, False),  # -1 against null (0): the stored record stays
        ("e", 4, 2.0, True),  # a delete with a smaller value: the stored record stays
        ("f", None, 2.0, True),  # a delete without a value: a commit-time delete wins
        ("g", 3, 2.0, False), ("g", 2, 3.0, False), ("g", 3, 4.0, False),  # in-batch: the later of the greatest
        ("h", None, 2.0, False), ("h", -1, 3.0, False),  # in-batch: -1 < null (0)
    ])
    cow, mor = str(tmp_path / "cow"), str(tmp_path / "mor")
    for path, table_type in ((cow, "COPY_ON_WRITE"), (mor, "MERGE_ON_READ")):
        opts = {**OPTS, "hoodie.datasource.write.table.type": table_type}
        hoodie.write(first, path, opts)
        hoodie.write(second, path, opts)
    expected = [("a", 5, 1.0), ("b", None, 2.0), ("c", None, 2.0), ("d", None, 1.0), ("e", 5, 1.0), ("g", 3, 4.0), ("h", None, 2.0)]
    assert _rows(hoodie.read(cow)) == expected
    assert _rows(hoodie.read(mor)) == expected
    assert _rows(hudi_rs_read(mor)) == expected
    assert any(".log." in n for n in os.listdir(Path(mor) / "city=sf" if (Path(mor) / "city=sf").exists() else Path(mor) / "sf"))
    meta, _ = compact(HoodieTable.open(mor), CompactionSettings(strategy=UNBOUNDED_STRATEGY), require_threshold=False)
    assert meta is not None
    assert _rows(hoodie.read(mor, {"hoodie.datasource.query.type": "read_optimized"})) == expected
