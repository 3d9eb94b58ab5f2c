"""A plain-Python model of a table written with a global index (RECORD_INDEX), and random
batches whose updates may name another partition than their key is in (shared by the
in-process and Spark model-based tests)."""
from __future__ import annotations

import random
from typing import Any

import pyarrow as pa
from modeling import CITIES

Row = dict[str, Any]


class GlobalModel:
    """The expected table: uuid -> (partition path, row), Apache Hudi's rules for a key
    whose record names another partition (``hoodie.record.index.update.partition.path``)."""

    def __init__(self, update_partition_path: bool) -> None:
        self.update_partition_path = update_partition_path
        self.rows: dict[str, tuple[str, Row]] = {}

    def apply(self, op: str, batch: list[Row]) -> None:
        for uuid, row in _dedupe(batch).items():
            current = self.rows.get(uuid)
            if op == "delete":
                self.rows.pop(uuid, None)
            elif current is None:
                self.rows[uuid] = (row["city"], row)
            elif current[1]["ts"] <= row["ts"]:
                # where it was, unless it may move; the row's own columns as written
                moves = self.update_partition_path and current[0] != row["city"]
                self.rows[uuid] = (row["city"] if moves else current[0], row)


def _dedupe(batch: list[Row]) -> dict[str, Row]:
    out: dict[str, Row] = {}
    for row in batch:  # by key alone: later wins ties, larger ts wins
        if row["uuid"] not in out or out[row["uuid"]]["ts"] <= row["ts"]:
            out[row["uuid"]] = row
    return out


def global_batch(rng: random.Random, model: GlobalModel, next_id: list[int]) -> tuple[str, list[Row]]:
    """An upsert of updates (a third naming another city than their key is in, some with a
    smaller ordering value than the stored one) and inserts, with duplicates of a key
    naming different cities; or a delete naming keys with any city (and a key never
    written)."""
    existing = list(model.rows)
    if existing and rng.random() < 0.25:
        victims = rng.sample(existing, min(len(existing), rng.randint(1, 10)))
        rows = [{"uuid": u, "city": rng.choice(CITIES), "ts": 0, "fare": 0.0} for u in victims]
        return "delete", [*rows, {"uuid": "never-written", "city": "sf", "ts": 0, "fare": 0.0}]
    rows = []
    for u in rng.sample(existing, min(len(existing), rng.randint(0, 30))):
        city = model.rows[u][0] if rng.random() < 0.66 else rng.choice(CITIES)
        rows.append({"uuid": u, "city": city, "ts": model.rows[u][1]["ts"] + rng.randint(-3, 10), "fare": rng.random()})
    for _ in range(rng.randint(1, 60)):
        next_id[0] += 1
        rows.append({"uuid": f"id-{next_id[0]:05d}", "city": rng.choice(CITIES), "ts": rng.randint(0, 50), "fare": rng.random()})
    rows.extend(dict(r, city=rng.choice(CITIES), ts=r["ts"] + rng.choice([-1, 0, 1])) for r in rng.sample(rows, min(len(rows), 4)))
    rng.shuffle(rows)
    return "upsert", rows


def to_arrow(rows: list[Row]) -> pa.Table:
    return pa.table({
        "uuid": pa.array([r["uuid"] for r in rows], pa.string()),
        "city": pa.array([r["city"] for r in rows], pa.string()),
        "ts": pa.array([r["ts"] for r in rows], pa.int64()),
        "fare": pa.array([r["fare"] for r in rows], pa.float64()),
    })


def snapshot_rows(t: pa.Table) -> dict[str, tuple[str, Row]]:
    """A snapshot read as the model holds it (one entry per key: a duplicate is lost here,
    so callers compare the row count too)."""
    return {r["uuid"]: (r["_hoodie_partition_path"], {k: r[k] for k in ("uuid", "city", "ts", "fare")}) for r in t.to_pylist()}


def global_options(table_type: str, update_partition_path: bool) -> dict[str, str]:
    return {
        "hoodie.table.name": "global",
        "hoodie.datasource.write.recordkey.field": "uuid",
        "hoodie.datasource.write.partitionpath.field": "city",
        "hoodie.datasource.write.precombine.field": "ts",
        "hoodie.datasource.write.table.type": table_type,
        "hoodie.index.type": "RECORD_INDEX",
        "hoodie.metadata.enable": "true",
        "hoodie.metadata.record.index.enable": "true",
        "hoodie.record.index.update.partition.path": str(update_partition_path).lower(),
        "hoodie.metadata.compact.max.delta.commits": "3",
        "hoodie.compact.inline": "true",
        "hoodie.compact.inline.max.delta.commits": "3",
        "hoodie.parquet.max.file.size": "12000",
        "hoodie.parquet.small.file.limit": "8000",
        "hoodie.copyonwrite.record.size.estimate": "60",
    }
