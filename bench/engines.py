"""DuckDB and Polars over ``hoodie.dataset`` against the same engine reading the same
Parquet files directly.

The table is the upsert benchmark's base table (``datagen.base_table``: ``--rows`` rows in
``--partitions`` partitions, bulk-inserted with ``upsert.py``'s options), made once and
kept in ``bench/out/engines``. Each query has a selective filter: one partition and a
range of one column. "hoodie.dataset" times ``hoodie.dataset(path)`` (planning through
the metadata table: timeline, ``files`` partition) and the engine's query over it, "made
once" the query over a dataset planned before (a session querying it again); "direct"
times the engine over the latest base files, listed in advance: DuckDB's
``read_parquet(files)`` and a ``pyarrow.dataset.dataset(files)``, Polars'
``scan_parquet(files)`` and ``scan_pyarrow_dataset`` of that dataset. Each query runs
``--repeat`` times, the contenders interleaved, after one untimed warm-up each; the
median counts. Target: ``hoodie.dataset`` (planning included) within 1.2x of the fastest
direct read.

    python bench/engines.py [--rows 2000000] [--partitions 100] [--repeat 7]
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import duckdb  # noqa: E402
import polars as pl  # noqa: E402
import pyarrow.dataset as ds  # noqa: E402
from datagen import base_table  # noqa: E402
from upsert import KEY_OPTS  # noqa: E402

import hoodie  # noqa: E402

OUT = HERE / "out" / "engines"
PART = "part-007"
C_INT_BELOW = 1 << 27  # an eighth of c_int's range


def table_path(rows: int, partitions: int) -> str:
    """The benchmark table, written on first use (a piece at a time, one bulk insert)."""
    path = OUT / f"bench-{rows}-{partitions}"
    if not (path / ".hoodie" / "hoodie.properties").exists():
        t0 = time.perf_counter()
        hoodie.write(base_table(rows, partitions), str(path), {**KEY_OPTS, "hoodie.datasource.write.operation": "bulk_insert"})
        print(f"wrote {path} in {time.perf_counter() - t0:.1f}s", file=sys.stderr)
    return str(path)


def duckdb_query(source: str) -> str:
    return f"SELECT count(*), avg(c_double), max(c_str1) FROM {source} WHERE part = '{PART}' AND c_int < {C_INT_BELOW}"


def queries(path: str, files: list[str]) -> dict[str, dict[str, Callable[[], object]]]:
    listed = ", ".join(f"'{f}'" for f in files)
    planned = hoodie.dataset(path)

    def duck_hoodie() -> object:
        trips = hoodie.dataset(path)  # noqa: F841 (DuckDB finds it by its name)
        return duckdb.sql(duckdb_query("trips")).fetchall()

    def duck_planned() -> object:
        trips = planned  # noqa: F841
        return duckdb.sql(duckdb_query("trips")).fetchall()

    def duck_arrow() -> object:
        trips = ds.dataset(files)  # noqa: F841
        return duckdb.sql(duckdb_query("trips")).fetchall()

    def duck_parquet() -> object:
        return duckdb.sql(duckdb_query(f"read_parquet([{listed}])")).fetchall()

    def polars_of(frame: pl.LazyFrame) -> object:
        q = frame.filter((pl.col("part") == PART) & (pl.col("c_int") < C_INT_BELOW))
        return q.select(pl.len(), pl.col("c_double").mean(), pl.col("c_str1").max()).collect().rows()

    return {
        "duckdb": {
            "hoodie.dataset": duck_hoodie,
            "hoodie.dataset, made once": duck_planned,
            "pyarrow dataset of the files": duck_arrow,
            "read_parquet(files)": duck_parquet,
        },
        "polars": {
            "hoodie.dataset": lambda: polars_of(pl.scan_pyarrow_dataset(hoodie.dataset(path))),
            "hoodie.dataset, made once": lambda: polars_of(pl.scan_pyarrow_dataset(planned)),
            "pyarrow dataset of the files": lambda: polars_of(pl.scan_pyarrow_dataset(ds.dataset(files))),
            "scan_parquet(files)": lambda: polars_of(pl.scan_parquet(files)),
        },
    }


def measure(contenders: dict[str, Callable[[], object]], repeat: int) -> dict[str, float]:
    answers = {name: run() for name, run in contenders.items()}  # warm-up, and every answer must agree
    first = next(iter(answers.values()))
    for name, answer in answers.items():
        assert _close(answer, first), (name, answer, first)
    times: dict[str, list[float]] = {name: [] for name in contenders}
    for _ in range(repeat):
        for name, run in contenders.items():
            t0 = time.perf_counter()
            run()
            times[name].append(time.perf_counter() - t0)
    return {name: statistics.median(ts) for name, ts in times.items()}


def _close(a: object, b: object) -> bool:
    (ra,), (rb,) = a, b  # type: ignore[misc]
    return ra[0] == rb[0] and abs(ra[1] - rb[1]) < 1e-9 and ra[2] == rb[2]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", type=int, default=2_000_000)
    ap.add_argument("--partitions", type=int, default=100)
    ap.add_argument("--repeat", type=int, default=7)
    args = ap.parse_args()
    path = table_path(args.rows, args.partitions)
    files = sorted(hoodie.dataset(path).files)  # the latest base files (the direct readers get the list for free)
    results = {}
    for engine, contenders in queries(path, files).items():
        medians = measure(contenders, args.repeat)
        direct = min(t for name, t in medians.items() if not name.startswith("hoodie"))
        results[engine] = {"median_s": medians, "hoodie_vs_fastest_direct": medians["hoodie.dataset"] / direct}
        for name, t in medians.items():
            print(f"{engine:7s} {name:30s} {t * 1000:8.1f} ms")
        print(f"{engine:7s} hoodie / fastest direct: {results[engine]['hoodie_vs_fastest_direct']:.2f}x (target <= 1.2x)")
    print(json.dumps({"rows": args.rows, "partitions": args.partitions, "files": len(files), "results": results}, indent=1))


if __name__ == "__main__":
    main()
