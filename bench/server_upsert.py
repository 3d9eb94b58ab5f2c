"""Spark upserts with the embedded timeline server against without it, on local disk and
through a storage that adds a fixed latency to every call (what object storage costs).

One Spark application writes a table of ``--rows`` rows over ``--partitions`` partitions
(bulk insert, untimed), then ``--commits`` upserts of ``--updates`` rows touching every
partition, timed one by one. "server" is Spark's default: file-system views from the
application's embedded server (which keeps its views across the commits, brought up to date
incrementally), and timeline-server-based markers, except on a local disk, where Spark's
default is direct markers (a hard link each); "server, its markers" forces timeline-server
markers there too. "no server" is ``hoodie.embed.timeline.server=false``: direct markers and
views listed by the driver and tasks. The storage, with its
latency, is the driver's and travels to the executors and to the server; Parquet bytes go
through Arrow without it. The modes alternate within each round (``--repeat`` rounds), and
the steady state is the median of every round's upserts after the first (a long-running
application's commits); the first upsert, when the server's view is still cold, is shown
apart.

Targets: with the server, the upsert is no slower on local disk (at most 1.05x) and at
least 2x faster at 20 ms a call.

    python bench/server_upsert.py [--rows 200000] [--partitions 100] [--updates 20000]
                                  [--commits 4] [--latency-ms 20] [--repeat 2]
"""
from __future__ import annotations

import argparse
import shutil
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np
import pyarrow as pa

from hoodie.spark import local_session, write_dataframe
from hoodie.storage import LatencyStorage, Storage
from hoodie.storage.local import LocalStorage

KEYS = {
    "hoodie.table.name": "bench",
    "hoodie.datasource.write.recordkey.field": "uuid",
    "hoodie.datasource.write.partitionpath.field": "part",
    "hoodie.datasource.write.precombine.field": "ts",
}
MODES = {"server": {}, "no server": {"hoodie.embed.timeline.server": "false"}}
SERVER_MARKERS = "server, its markers"
LOCAL_MODES = {**MODES, SERVER_MARKERS: {"hoodie.write.markers.type": "TIMELINE_SERVER_BASED"}}


def rows(keys: np.ndarray, partitions: int, ts: int) -> pa.Table:
    return pa.table({
        "uuid": pa.array([f"k{k:09d}" for k in keys]),
        "part": pa.array([f"p{k % partitions:04d}" for k in keys]),
        "ts": pa.array(np.full(len(keys), ts, dtype=np.int64)),
        "fare": pa.array(keys.astype(np.float64) * ts),
    })


def run(spark, root: Path, mode: str, latency: float, args: argparse.Namespace, round_no: int) -> list[float]:  # type: ignore[no-untyped-def]
    path = str(root / f"{mode.replace(' ', '-')}-{latency * 1000:g}ms-{round_no}")
    storage: Storage = LatencyStorage(LocalStorage(), latency) if latency else LocalStorage()
    opts = {**KEYS, **LOCAL_MODES[mode]}
    base = spark.createDataFrame(rows(np.arange(args.rows), args.partitions, 1))
    write_dataframe(base, path, {**opts, "hoodie.datasource.write.operation": "bulk_insert"}, storage=storage)
    rng = np.random.default_rng(round_no)
    seconds = []
    for commit in range(args.commits):
        keys = rng.choice(args.rows, args.updates, replace=False)
        df = spark.createDataFrame(rows(keys, args.partitions, 2 + commit)).cache()
        df.count()
        t0 = time.perf_counter()
        write_dataframe(df, path, {**opts, "hoodie.datasource.write.operation": "upsert"}, storage=storage)
        seconds.append(time.perf_counter() - t0)
        df.unpersist()
    shutil.rmtree(path, ignore_errors=True)
    return seconds


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=200_000)
    ap.add_argument("--partitions", type=int, default=100)
    ap.add_argument("--updates", type=int, default=20_000)
    ap.add_argument("--commits", type=int, default=4)
    ap.add_argument("--latency-ms", type=float, default=20.0)
    ap.add_argument("--repeat", type=int, default=2)
    args = ap.parse_args()
    spark = local_session("hoodie-server-bench")
    root = Path(tempfile.mkdtemp(prefix="hoodie-server-bench-"))
    try:
        run(spark, root, "server", 0.0, argparse.Namespace(**{**vars(args), "rows": 20_000, "updates": 2_000, "commits": 1}), 99)  # warm-up
        for label, latency in (("local disk", 0.0), (f"{args.latency_ms:g} ms a call", args.latency_ms / 1000)):
            modes = list(LOCAL_MODES if not latency else MODES)
            times: dict[str, list[list[float]]] = {mode: [] for mode in modes}
            for round_no in range(args.repeat):
                for mode in modes if round_no % 2 == 0 else reversed(modes):
                    times[mode].append(run(spark, root, mode, latency, args, round_no))
            steady = {mode: statistics.median(t for r in runs for t in r[1:]) for mode, runs in times.items()}
            first = {mode: statistics.median(r[0] for r in runs) for mode, runs in times.items()}
            for mode in modes:
                every = "; ".join(", ".join(f"{t:.2f}" for t in r) for r in times[mode])
                print(f"{label:>14} {mode:>19}: upsert {steady[mode]:6.2f} s (median after the first), first {first[mode]:6.2f} s  [{every}]")
            for mode in (m for m in modes if m != "no server"):
                print(f"{label:>14} no server / {mode}: {steady['no server'] / steady[mode]:5.2f}x "
                      f"(first upsert {first['no server'] / first[mode]:5.2f}x)", flush=True)
    finally:
        shutil.rmtree(root, ignore_errors=True)
        spark.stop()


if __name__ == "__main__":
    main()
