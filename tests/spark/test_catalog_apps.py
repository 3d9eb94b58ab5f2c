"""Catalog registration and format("hoodie") seen from NEW Spark applications (each a
subprocess: its own JVM, the shared session of the other tests cannot have Hive support).

The catalog apps share one embedded Derby metastore and warehouse under tmp_path: one
writes with hoodie.datasource.meta.sync.enable, a later one queries trips, trips_ro and
trips_rt with SQL and sees what hoodie.read returns, their partitions, and then a column
and a partition a write added. The discovery app never calls register: PySpark finds the
pyspark_hoodie package on its path."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import hoodie

APP = Path(__file__).parent / "apps" / "catalog_app.py"
SRC = Path(hoodie.__file__).resolve().parents[1]  # the folder holding hoodie and pyspark_hoodie


def run_app(step: str, work: Path) -> dict[str, Any]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(SRC), os.environ.get("PYTHONPATH", "")]), "PYSPARK_PYTHON": sys.executable}
    done = subprocess.run([sys.executable, str(APP), step, str(work)], cwd=work, env=env, capture_output=True, text=True, timeout=540)
    assert done.returncode == 0, done.stderr[-4000:]
    return json.loads((work / f"{step}.json").read_text())


def canonical(rows: list[dict[str, Any]]) -> list[str]:
    return sorted(json.dumps(r, sort_keys=True, default=str) for r in rows)


def read(path: Path, **options: str) -> list[str]:
    return canonical(hoodie.read(str(path), options).to_pylist())


@pytest.mark.slow
def test_a_new_application_queries_the_registered_tables(tmp_path: Path) -> None:
    run_app("write", tmp_path)
    table = tmp_path / "trips"
    snapshot, optimized = read(table), read(table, **{"hoodie.datasource.query.type": "read_optimized"})
    out = run_app("query", tmp_path)
    seen = out["before"]
    assert seen["tables"] == ["trips", "trips_ro", "trips_rt"]
    assert canonical(seen["trips_rt"]) == canonical(seen["trips"]) == snapshot
    assert canonical(seen["trips_ro"]) == optimized
    assert optimized != snapshot  # the update lives in a log file
    assert out["filtered"] == [{"uuid": "a", "fare": 10.0}, {"uuid": "c", "fare": 3.0}]
    # partition columns last, as Hive and Spark keep them
    assert seen["trips_rt.columns"][-3:] == ["ts", "fare", "city"]
    assert seen["trips_rt.partitions"] == seen["trips_ro.partitions"] == ["city=la", "city=sf"]
    # nothing of the registration landed in the working folder
    assert sorted(p.name for p in tmp_path.iterdir()) == ["catalog", "query.json", "trips", "write.json"]

    # a write that added a column and a partition, synced
    after = out["after"]
    assert after["trips_rt.columns"][-4:] == ["ts", "fare", "tip", "city"]
    assert canonical(after["trips_rt"]) == canonical(after["trips"]) == read(table)
    assert canonical(after["trips_ro"]) == read(table, **{"hoodie.datasource.query.type": "read_optimized"})
    assert after["trips_rt.partitions"] == after["trips.partitions"] == after["trips_ro.partitions"] == ["city=la", "city=nyc", "city=sf"]


@pytest.mark.slow
def test_format_hoodie_without_register_in_a_new_application(tmp_path: Path) -> None:
    seen = run_app("discover", tmp_path)
    table = tmp_path / "trips"
    assert seen["registered"] is False
    # the app overwrote the table at the end: compare with the table as of its second write
    second = max(r["_hoodie_commit_time"] for r in seen["snapshot"])
    assert canonical(seen["snapshot"]) == read(table, **{"as.of.instant": second})
    assert canonical(seen["read_optimized"]) == read(table, **{"as.of.instant": second, "hoodie.datasource.query.type": "read_optimized"})
    begin = seen["first_instants"][0]
    incremental = {
        "hoodie.datasource.query.type": "incremental",
        "hoodie.datasource.read.begin.instanttime": begin,
        "hoodie.datasource.read.end.instanttime": second,
    }
    assert canonical(seen["incremental"]) == read(table, **incremental)
    assert {r["uuid"] for r in seen["incremental"]} == {"a", "c"}
    # two writes, two commits; their staging folders are gone
    assert len({r["_hoodie_commit_time"] for r in seen["snapshot"]}) == 2
    assert seen["temp"] == []
    assert "needs the Spark session after the commit" in seen["sync_refused"]
    assert "needs the Spark session after the commit" in seen["stream_sync_refused"]
    assert not (tmp_path / "streamed").exists() or not list((tmp_path / "streamed").glob("*/*.parquet"))
    assert seen["overwritten"] == [{"uuid": "z", "city": "la", "ts": 5, "fare": 9.0}]
    assert canonical(seen["overwritten"]) == canonical(hoodie.read(str(table)).select(["uuid", "city", "ts", "fare"]).to_pylist())
