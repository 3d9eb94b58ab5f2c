"""Benchmark data: a base table and an upsert batch, generated deterministically.

Base: N rows in P partitions, about 200 bytes a row: a string key, a partition column,
a long ordering field and ten mixed columns. Upsert: U updates spread over all
partitions plus U new keys.
"""
from __future__ import annotations

import numpy as np
import pyarrow as pa


def _rows(keys: np.ndarray, parts: np.ndarray, ts: np.ndarray, rng: np.random.Generator) -> pa.Table:
    n = len(keys)
    key_strings = pa.array([f"key-{k:012d}" for k in keys.tolist()], pa.string())
    cities = pa.array([f"part-{p:03d}" for p in parts.tolist()], pa.string())
    return pa.table({
        "key": key_strings,
        "part": cities,
        "ts": pa.array(ts, pa.int64()),
        "c_int": pa.array(rng.integers(0, 1 << 30, n, dtype=np.int32)),
        "c_long": pa.array(rng.integers(0, 1 << 60, n, dtype=np.int64)),
        "c_double": pa.array(rng.random(n)),
        "c_float": pa.array(rng.random(n).astype(np.float32)),
        "c_bool": pa.array(rng.random(n) < 0.5),
        "c_str1": pa.array(np.char.add("name-", rng.integers(0, 10**6, n).astype(str)).tolist(), pa.string()),
        "c_str2": pa.array(np.char.add("some longer descriptive text ", rng.integers(0, 10**9, n).astype(str)).tolist(), pa.string()),
        "c_str3": pa.array(np.char.add("category-", rng.integers(0, 50, n).astype(str)).tolist(), pa.string()),
        "c_date": pa.array(rng.integers(18000, 20000, n, dtype=np.int32)).cast(pa.date32()),
        "c_ts": pa.array(rng.integers(1_600_000_000_000_000, 1_700_000_000_000_000, n, dtype=np.int64)).cast(pa.timestamp("us", "UTC")),
    })


def base_table(n: int, partitions: int, seed: int = 1, start: int = 0) -> pa.Table:
    """Rows of keys ``start`` .. ``start + n - 1`` (a big table is made a piece at a time:
    pass each piece its own ``start`` and ``seed``)."""
    rng = np.random.default_rng(seed)
    keys = np.arange(start, start + n)
    parts = keys % partitions
    return _rows(keys, parts, np.full(n, 1, dtype=np.int64), rng)


def upsert_batch(n: int, partitions: int, updates: int, seed: int = 2) -> pa.Table:
    rng = np.random.default_rng(seed)
    upd_keys = np.sort(rng.choice(n, size=updates, replace=False))
    new_keys = np.arange(n, n + updates)
    keys = np.concatenate([upd_keys, new_keys])
    parts = keys % partitions
    return _rows(keys, parts, np.full(len(keys), 2, dtype=np.int64), rng)


def micro_batch(existing: int, updates: int, inserts: int, partitions: int, seed: int, ts: int) -> pa.Table:
    """A streaming micro-batch: ``updates`` distinct keys drawn from ``0 .. existing - 1``
    and ``inserts`` new keys after them, all at ordering value ``ts``."""
    rng = np.random.default_rng(seed)
    keys = np.concatenate([np.sort(rng.choice(existing, size=updates, replace=False)), np.arange(existing, existing + inserts)])
    return _rows(keys, keys % partitions, np.full(len(keys), ts, dtype=np.int64), rng)
