"""A plain-Python model of a Hudi table and random batches to drive it (shared by the
in-process and Spark model-based tests)."""
from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

import pyarrow as pa

CITIES = ["sf", "nyc", "la", "chennai"]


class Model:
    """The expected table: (city, uuid) -> row, with event-time merge semantics."""

    def __init__(self) -> None:
        self.rows: dict[tuple[str, str], dict[str, Any]] = {}

    def upsert(self, batch: list[dict[str, Any]]) -> set[tuple[str, str]]:
        changed: set[tuple[str, str]] = set()
        for key, row in _dedupe(batch).items():
            cur = self.rows.get(key)
            if cur is None or cur["ts"] <= row["ts"]:
                self.rows[key] = row
                changed.add(key)
        return changed

    def delete(self, batch: list[dict[str, Any]]) -> None:
        for row in batch:
            self.rows.pop((row["city"], row["uuid"]), None)

    def apply(self, op: str, batch: list[dict[str, Any]]) -> set[tuple[str, str]]:
        """Apply a write of operation ``op``; the keys whose records it changed (the
        incremental pull of that write): none for a delete."""
        if op == "delete":
            self.delete(batch)
            return set()
        return self.upsert(batch)


def run_write_steps(
    rng: random.Random,
    steps: int,
    opts: dict[str, str],
    write: Callable[[pa.Table, dict[str, str]], str],
    snapshot: Callable[[], pa.Table],
    incremental: Callable[[str, str], pa.Table],
) -> None:
    """Random writes applied to a table (``write(batch, options) -> instant``) and to a
    model; after each one the snapshot equals the model and the incremental pull of the
    write is exactly the records it changed, all committed at its instant."""
    model = Model()
    next_id = [0]
    previous: str | None = None
    for step in range(steps):
        op, rows = random_batch(rng, model, next_id)
        changed = model.apply(op, rows)
        instant = write(to_arrow(rows), {**opts, "hoodie.datasource.write.operation": op})
        snap = snapshot()
        assert table_rows(snap) == model.rows, f"snapshot differs from the model after step {step} ({op})"
        assert snap.num_rows == len(model.rows), "duplicate keys in the snapshot"
        if previous is not None:
            incr = incremental(previous, instant)
            assert set(table_rows(incr)) == changed, f"incremental pull of step {step} ({op})"
            assert set(incr.column("_hoodie_commit_time").to_pylist()) <= {instant}
        previous = instant


def _dedupe(batch: list[dict[str, Any]]) -> dict[tuple[str, str], dict[str, Any]]:
    out: dict[tuple[str, str], dict[str, Any]] = {}
    for row in batch:  # later wins ties, larger ts wins
        key = (row["city"], row["uuid"])
        if key not in out or out[key]["ts"] <= row["ts"]:
            out[key] = row
    return out


def to_arrow(rows: list[dict[str, Any]]) -> pa.Table:
    return pa.table({
        "uuid": pa.array([r["uuid"] for r in rows], pa.string()),
        "city": pa.array([r["city"] for r in rows], pa.string()),
        "ts": pa.array([r["ts"] for r in rows], pa.int64()),
        "fare": pa.array([r["fare"] for r in rows], pa.float64()),
        "note": pa.array([r["note"] for r in rows], pa.string()),
    })


def table_rows(t: pa.Table) -> dict[tuple[str, str], dict[str, Any]]:
    return {(r["city"], r["uuid"]): {k: r[k] for k in ("uuid", "city", "ts", "fare", "note")} for r in t.to_pylist()}


def random_batch(
    rng: random.Random,
    model: Model,
    next_id: list[int],
    ts_floor: int = 0,
    *,
    max_updates: int = 40,
    max_inserts: int = 120,
    update_ts: Callable[[int], int] | None = None,
    insert_ts: Callable[[], int] | None = None,
) -> tuple[str, list[dict[str, Any]]]:
    """A random write: an upsert mixing updates and inserts (with in-batch duplicates), a
    delete (including a key never written), or a plain insert of new keys. Ordering values
    are ``ts_floor`` + 0..100 unless ``update_ts`` (from the stored record's) and
    ``insert_ts`` say otherwise: a rising floor makes every update win against stored rows."""
    existing = list(model.rows)
    kind = rng.choices(["upsert", "delete", "insert"], weights=[6, 2, 1])[0]
    if kind == "delete" and existing:
        victims = rng.sample(existing, min(len(existing), rng.randint(1, 15)))
        rows = [{"uuid": u, "city": c, "ts": 0, "fare": 0.0, "note": None} for c, u in victims]
        rows.append({"uuid": "never-written", "city": "sf", "ts": 0, "fare": 0.0, "note": None})
        return "delete", rows
    rows = []
    if kind != "insert":
        for c, u in rng.sample(existing, min(len(existing), rng.randint(0, max_updates))):
            ts = update_ts(model.rows[(c, u)]["ts"]) if update_ts else ts_floor + rng.randint(0, 100)
            rows.append({"uuid": u, "city": c, "ts": ts, "fare": rng.random(), "note": rng.choice([None, "upd"])})
    for _ in range(rng.randint(1, max_inserts)):
        next_id[0] += 1
        ts = insert_ts() if insert_ts else ts_floor + rng.randint(0, 100)
        rows.append({"uuid": f"id-{next_id[0]:06d}", "city": rng.choice(CITIES), "ts": ts, "fare": rng.random(), "note": "new"})
    if rows and kind != "insert":  # duplicates within the batch are pre-combined
        rows.extend(dict(r, ts=r["ts"] + rng.choice([-1, 0, 1]), note="dup") for r in rng.sample(rows, min(len(rows), 5)))
    rng.shuffle(rows)
    return ("insert" if kind == "insert" else "upsert"), rows


def model_options(index_type: str, table_type: str = "COPY_ON_WRITE") -> dict[str, str]:
    return {
        "hoodie.table.name": "model",
        "hoodie.datasource.write.recordkey.field": "uuid",
        "hoodie.datasource.write.partitionpath.field": "city",
        "hoodie.datasource.write.precombine.field": "ts",
        "hoodie.datasource.write.table.type": table_type,
        "hoodie.index.type": index_type,
        # small files so that inserts are packed into small files and split into groups
        "hoodie.index.bloom.num_entries": "500",
        "hoodie.parquet.max.file.size": "12000",
        "hoodie.parquet.small.file.limit": "8000",
        "hoodie.copyonwrite.record.size.estimate": "60",
        "hoodie.parquet.compression.codec": "snappy",
    }
