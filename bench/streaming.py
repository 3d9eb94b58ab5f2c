"""Streaming ingest: micro-batches of upserts (70% updates) into a merge-on-read table
with async compaction, in process and through Structured Streaming.

The table starts with ``--rows`` keys (one untimed bulk insert, ``datagen``'s columns, 10
partitions); then ``--batches`` micro-batches of ``--rows`` rows each: ``--updates`` of
them update keys drawn from every key written so far, the rest are new keys, so the table
grows by a third of a batch each time. Compaction is asynchronous in both modes: after a
batch commits, a compaction is scheduled when due (``hoodie.compact.inline.max.delta.commits``,
5) and runs while the next batches go on; only its completion and a batch's commit
exclude each other (the table's commit lock).

* ``in-process``: ``hoodie.write`` per batch (no JVM), the compaction by the same rule as
  the sink's (``hoodie.services.async_compaction.AsyncCompactor``), in a process of its
  own (the in-process engine's default; ``--compaction thread``: on a thread of the
  batches' process; ``none``: never, to see what the batches alone cost; ``--niceness``:
  the compaction process at a lower CPU priority, ``AsyncCompactor``'s ``niceness``;
  ``--background``: under Linux's ``SCHED_IDLE``, ``AsyncCompactor``'s ``background``);
* ``spark``: the batches land as Parquet files and ``spark.readStream.parquet(...)
  .writeStream.format("hoodie")`` takes one a micro-batch (``maxFilesPerTrigger=1``,
  ``Trigger.AvailableNow``); a batch's latency is Spark's ``triggerExecution`` time of it
  (reading the file, the write, scheduling the compaction). One read of the base table
  through Spark first warms the JVM and its Python workers up; the compaction runs on a
  thread of the driver through Spark.

``--index``: the writes' index, ``BUCKET`` (the default: a fixed number of file groups per
partition, a key's group a hash of the key, so tagging reads no file, as an ingest of
updates spread over every key is set up) or ``BLOOM`` (Apache Hudi 0.x's default index:
each batch reads the keys of every file group its updates hit). ``--clean-async`` (both
modes): ``hoodie.clean.async``, each batch's clean on a thread beside it instead of after
its commit.

Reported per mode: records per second (the rows over the sum of the batch latencies),
batch latency p50/p99, and the growth: the median latency of the last five batches over
that of the first five (target: at most 1.3x, so that the table's growth does not slow
ingest).

    python bench/streaming.py [--batches 20] [--rows 100000] [--updates 0.7] [--modes in-process,spark] [--quick]
                              [--compaction process|thread|none] [--niceness 0] [--background] [--clean-async]
                              [--index BUCKET|BLOOM] [--buckets 2]
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import pyarrow as pa  # noqa: E402
import pyarrow.parquet as pq  # noqa: E402
from datagen import base_table, micro_batch  # noqa: E402
from upsert import KEY_OPTS  # noqa: E402

import hoodie  # noqa: E402
from hoodie.services.async_compaction import AsyncCompactor  # noqa: E402
from hoodie.table.table import HoodieTable  # noqa: E402

OUT = HERE / "out" / "streaming"
PARTITIONS = 10
OPTIONS = {
    **KEY_OPTS,
    "hoodie.table.name": "stream_bench",
    "hoodie.datasource.write.table.type": "MERGE_ON_READ",
    "hoodie.compact.inline.max.delta.commits": "5",
    # updates go to log files and inserts to new file groups (with small-file packing, a
    # merge-on-read slice without logs takes a batch's inserts and is rewritten whole,
    # updates included: every batch would rewrite every file, as copy-on-write does)
    "hoodie.parquet.small.file.limit": "0",
}
# BUCKET: buckets per partition. The stream writes 2,000,000 rows (about 90 bytes a row in
# Parquet), 200,000 of them per partition; 2 buckets keep each file group's base file near
# 10 MB even if every row were a new key, well under hoodie.parquet.max.file.size (120 MB),
# and give the compaction 20 file groups to spread over the cores. Every bucket takes
# updates in every batch (they are drawn from every key), so each bucket more is a log file
# more per batch.
BUCKETS = 2


def index_options(index: str, buckets: int) -> dict[str, str]:
    if index == "BUCKET":
        return {"hoodie.index.type": "BUCKET", "hoodie.bucket.index.num.buckets": str(buckets)}
    return {"hoodie.index.type": index}


def batches(count: int, rows: int, updates: float) -> list[pa.Table]:
    """The micro-batches: each ``rows`` rows, ``updates`` of them updates of keys written
    before (the base's and earlier batches' new keys), the rest new keys."""
    out, existing = [], rows
    for i in range(count):
        n_updates = int(rows * updates)
        out.append(micro_batch(existing, n_updates, rows - n_updates, PARTITIONS, seed=100 + i, ts=i + 2))
        existing += rows - n_updates
    return out


def fresh_table(path: Path, rows: int, options: dict[str, str]) -> None:
    shutil.rmtree(path, ignore_errors=True)
    hoodie.write(base_table(rows, PARTITIONS), str(path), {**options, "hoodie.datasource.write.operation": "bulk_insert"})


def run_in_process(
    path: Path, data: list[pa.Table], options: dict[str, str], compaction: str = "process", niceness: int = 0, background: bool = False
) -> list[float]:
    options = {**options, "hoodie.compact.inline": "false"}
    never = {**options, "hoodie.compact.inline.max.delta.commits": str(10**6)}
    compactor = AsyncCompactor(
        str(path), never if compaction == "none" else options, separate_process=compaction == "process", niceness=niceness, background=background
    )
    latencies = []
    with compactor:  # leaving it waits for the last compaction
        for batch in data:
            t0 = time.perf_counter()
            hoodie.write(batch, str(path), options)
            t1 = time.perf_counter()
            compactor.after_batch()
            latencies.append(time.perf_counter() - t0)
            print(f"  in-process batch {len(latencies)}: {latencies[-1]:.2f}s (write {t1 - t0:.2f}s)", file=sys.stderr)
    if compactor.last_error is not None:
        raise SystemExit(f"{path}: the last compaction failed: {compactor.last_error!r}")
    return latencies


def run_spark(path: Path, data: list[pa.Table], options: dict[str, str]) -> list[float]:
    from hoodie.spark import local_session
    from hoodie.spark.stream_sink import wait_for_compaction

    spark = local_session("stream-bench")
    spark.sparkContext.setLogLevel("ERROR")
    spark.conf.set("spark.sql.streaming.numRecentProgressUpdates", str(len(data) + 10))
    landing = path.parent / "landing"
    shutil.rmtree(landing, ignore_errors=True)
    landing.mkdir(parents=True)
    for i, batch in enumerate(data):
        pq.write_table(batch, landing / f"batch-{i:03d}.parquet")
    spark.read.format("hoodie").load(str(path)).count()  # warm-up: the JVM, Python workers, hoodie's imports
    checkpoint = path.parent / "checkpoint"
    shutil.rmtree(checkpoint, ignore_errors=True)
    stream = spark.readStream.schema(spark.read.parquet(str(landing / "batch-000.parquet")).schema).option("maxFilesPerTrigger", 1).parquet(str(landing))
    query = (
        stream.writeStream.format("hoodie").options(**options).option("checkpointLocation", str(checkpoint))
        .trigger(availableNow=True).start(str(path))
    )
    query.awaitTermination()
    wait_for_compaction(str(path))
    progress = sorted((p for p in query.recentProgress if p["numInputRows"]), key=lambda p: p["batchId"])
    spark.stop()
    return [p["durationMs"]["triggerExecution"] / 1000 for p in progress]


def check(path: Path, base_rows: int, data: list[pa.Table]) -> None:
    """The table holds each key once, at its latest ts (the figures measure correct work)."""
    written = pa.concat_tables([base_table(base_rows, PARTITIONS).select(["key", "ts"]), *(b.select(["key", "ts"]) for b in data)])
    expected = written.group_by("key").aggregate([("ts", "max")]).group_by("ts_max").aggregate([("key", "count")])
    read = hoodie.read(str(path)).select(["key", "ts"])
    got = read.group_by("ts").aggregate([("key", "count")])
    want = sorted(zip(expected["ts_max"].to_pylist(), expected["key_count"].to_pylist()))
    have = sorted(zip(got["ts"].to_pylist(), got["key_count"].to_pylist()))
    if read.num_rows != sum(n for _, n in want) or have != want:
        raise SystemExit(f"{path}: the table is not what the batches make: {have} != {want}")


def summary(latencies: list[float], rows: int, path: Path) -> dict[str, Any]:
    ordered = sorted(latencies)
    first, last = statistics.median(latencies[:5]), statistics.median(latencies[-5:])
    timeline = HoodieTable.open(str(path)).timeline
    return {
        "batches": len(latencies),
        "records_per_s": round(rows * len(latencies) / sum(latencies)),
        "p50_s": round(statistics.median(ordered), 3),
        "p99_s": round(ordered[min(len(ordered) - 1, round(0.99 * (len(ordered) - 1)))], 3),
        "first5_median_s": round(first, 3),
        "last5_median_s": round(last, 3),
        "growth": round(last / first, 2),
        "compactions": sum(1 for i in timeline.completed_writes() if i.action == "commit"),
        "latencies_s": [round(x, 3) for x in latencies],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batches", type=int, default=20)
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--updates", type=float, default=0.7)
    parser.add_argument("--modes", default="in-process,spark")
    parser.add_argument("--quick", action="store_true", help="5,000 rows a batch")
    parser.add_argument("--compaction", choices=["process", "thread", "none"], default="process",
                        help="in process: the compaction in a process of its own (the default), on a thread of the batches' process, or none")
    parser.add_argument("--niceness", type=int, default=0, help="in process: the compaction process's niceness (0-19: lower CPU priority)")
    parser.add_argument("--background", action="store_true", help="in process: the compaction process under SCHED_IDLE (Linux)")
    parser.add_argument("--clean-async", action="store_true", help="hoodie.clean.async: each batch's clean beside it, not after its commit")
    parser.add_argument("--index", choices=["BLOOM", "BUCKET"], default="BUCKET", help="the writes' index")
    parser.add_argument("--buckets", type=int, default=BUCKETS, help="BUCKET: buckets per partition")
    args = parser.parse_args()
    rows = 5_000 if args.quick else args.rows
    data = batches(args.batches, rows, args.updates)
    options = {**OPTIONS, **index_options(args.index, args.buckets), "hoodie.clean.async": str(args.clean_async).lower()}
    results = {}
    for mode in args.modes.split(","):
        path = OUT / mode / "table"
        fresh_table(path, rows, options)
        # the page cache's dirty data written out first: a kernel throttles writers once a
        # share of memory is dirty, and a run must not pay for what ran before it (the
        # previous run's 0.5-1 GB of files, written within the last 30 s)
        os.sync()
        if mode == "in-process":
            latencies = run_in_process(path, data, options, args.compaction, args.niceness, args.background)
        else:
            latencies = run_spark(path, data, options)
        check(path, rows, data)
        results[mode] = summary(latencies, rows, path)
        print(f"{mode}: {json.dumps({k: v for k, v in results[mode].items() if k != 'latencies_s'})}", file=sys.stderr)
    report = {
        "rows_per_batch": rows, "batches": args.batches, "updates": args.updates, "index": args.index,
        "buckets": args.buckets if args.index == "BUCKET" else None, "compaction": args.compaction,
        "niceness": args.niceness, "background": args.background, "clean_async": args.clean_async, "results": results,
    }
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
