"""The timeline server's file-system views, per view store (MEMORY, SPILLABLE_DISK,
EMBEDDED_KV_STORE):

(b) latency of view calls (``GET /v1/hoodie/view/slices/partition/latest/`` for a random
    partition) sent at ``--rate`` requests a second in all, open loop, from ``--clients``
    client processes, after every partition was listed once: p50 and p99;
(c) the server's memory: resident size of a server process before and after its view of
    a table with ``--memory-partitions`` partitions is built (every partition listed, its
    latest slices answered, the listings and what the commits wrote kept in the store),
    against the store's bound (``hoodie.filesystem.view.spillable.mem``, ``--spillable-mb``).
    That table is made by ``--commits`` real commits (``hoodie.write``, bulk inserts of a
    row into every partition: each commit adds one file group to each), so the server
    reads real commit metadata: ``--commits`` x partitions write stats.

The latency table is real too (one commit), but its partitions but one are listed by a
storage that makes them up: ``--groups`` base files of the commit each, as a listing of
object storage would return them. Each store runs in a process of its own.

Targets: p99 under 10 ms; SPILLABLE_DISK and EMBEDDED_KV_STORE within their bound plus a
fixed overhead (MEMORY grows with the table).

    python bench/views.py [--rate 1000] [--clients 4] [--seconds 10] [--partitions 1000] [--groups 10]
                          [--memory-partitions 20000] [--commits 5] [--spillable-mb 1]
"""
from __future__ import annotations

import argparse
import contextlib
import ctypes
import gc
import http.client
import json
import multiprocessing as mp
import random
import shutil
import tempfile
import time
import tracemalloc
import urllib.parse
from pathlib import Path

import psutil
import pyarrow as pa

import hoodie
from hoodie.layout import base_file_name, write_token
from hoodie.server_calls import ServerAddress
from hoodie.storage.base import FileInfo
from hoodie.storage.local import LocalStorage
from hoodie.table import HoodieTable
from hoodie.table.remote_view import LATEST_SLICES, RemoteFileSystemView
from hoodie.table.view_stores import STORE_TYPES, StoreSettings
from hoodie.timeline_server import TimelineServer

TOKEN = "bench-token"


class MadeUpPartitions(LocalStorage):
    """The real table, plus partitions ``p00001``.. that exist only in listings."""

    def __init__(self, base: str, partitions: int, groups: int, instant: str) -> None:
        super().__init__()
        self.base, self.partitions, self.groups, self.instant = base, partitions, groups, instant

    def list_dir(self, path: str) -> list[FileInfo]:
        if path == self.base:
            real = super().list_dir(path)
            return real + [FileInfo(f"{self.base}/p{i:05d}", f"p{i:05d}", 0, True) for i in range(1, self.partitions)]
        name = path.rsplit("/", 1)[-1]
        if path.rsplit("/", 1)[0] == self.base and name.startswith("p") and name != "p00000":
            files = [".hoodie_partition_metadata"] + [
                base_file_name(f"{name}-{g:04d}-0000-0000-0000-000000000000-0", write_token(g, 1, g), self.instant) for g in range(self.groups)
            ]
            return [FileInfo(f"{path}/{f}", f, 440_000 + i, False) for i, f in enumerate(files)]
        return super().list_dir(path)


def make_table(root: Path) -> tuple[str, str]:
    path = str(root / "table")
    batch = pa.table({"uuid": ["a"], "part": ["p00000"], "ts": [1]})
    instant = hoodie.write(batch, path, {
        "hoodie.table.name": "bench", "hoodie.datasource.write.recordkey.field": "uuid",
        "hoodie.datasource.write.partitionpath.field": "part", "hoodie.datasource.write.precombine.field": "ts",
    })
    return HoodieTable.open(path).base_path, instant


def make_wide_table(where: Path, partitions: int, commits: int) -> str:
    """A table of ``partitions`` partitions made by ``commits`` bulk inserts of a row into
    every partition (a file group each)."""
    path = str(where)
    options = {
        "hoodie.table.name": "wide", "hoodie.datasource.write.recordkey.field": "uuid",
        "hoodie.datasource.write.partitionpath.field": "part", "hoodie.datasource.write.precombine.field": "ts",
        "hoodie.datasource.write.operation": "bulk_insert", "hoodie.clean.automatic": "false",
        "hoodie.embed.timeline.server": "false",
    }
    for c in range(commits):
        batch = pa.table({"uuid": [f"k{c}-{p}" for p in range(partitions)], "part": [f"p{p:05d}" for p in range(partitions)],
                          "ts": [c] * partitions})
        started = time.perf_counter()
        hoodie.write(batch, path, options)
        print(f"  commit {c + 1} of {commits}: {partitions} partitions in {time.perf_counter() - started:.1f} s", flush=True)
    return HoodieTable.open(path).base_path


def serve(kind: str, base: str, instant: str, partitions: int, groups: int, spillable_mb: float, rocksdb: str, ready: mp.Queue, stop: mp.Event) -> None:
    """A server of the made-up partitions (latency runs)."""
    server = TimelineServer(token=TOKEN).start()
    settings = StoreSettings(kind, spillable_memory_bytes=int(spillable_mb * 1024 * 1024), rocksdb_base_path=rocksdb)
    server.add_table(base, MadeUpPartitions(base, partitions, groups, instant), settings)
    views = server.tables.views(base)
    views.view().all_partition_paths()  # the walk lists every partition into the store
    ready.put({"port": server.port})
    stop.wait()
    server.stop()


def release_freed() -> None:
    """Hand the C heap's freed pages back to the system (glibc), so that the resident size
    shows what the process keeps rather than the peak of a commit's metadata decoded and
    dropped."""
    with contextlib.suppress(OSError, AttributeError):  # not glibc: the resident size includes freed pages
        ctypes.CDLL("libc.so.6").malloc_trim(0)


def ask_all(port: int, base: str) -> tuple[int, int]:
    """(partitions, latest slices) of every partition of ``base``, as the server answers."""
    remote = RemoteFileSystemView(ServerAddress("127.0.0.1", port, TOKEN, timeout_s=3600), base, HoodieTable.open(base).timeline)
    listed = remote.all_partition_paths()
    remote.prefetch_latest(listed)
    return len(listed), sum(len(remote.latest_slices(p)) for p in listed)


def measure_memory(kind: str, small: str, base: str, spillable_mb: float, rocksdb: str, asks: mp.Queue, out: mp.Queue) -> None:
    """A server process: its resident size and the Python objects it keeps, before and
    after the bench process asks it every partition's latest slices of the real table
    ``base``; after it answered the same of the ``small`` table, so that what any server
    holds once (imported modules, threads, the first requests' buffers) is not counted."""
    process = psutil.Process()
    server = TimelineServer(token=TOKEN).start()
    settings = StoreSettings(kind, spillable_memory_bytes=int(spillable_mb * 1024 * 1024), rocksdb_base_path=rocksdb)
    server.add_table(small, views=settings)
    server.add_table(base, views=settings)
    out.put(server.port)
    assert asks.get() == "small asked"
    gc.collect()
    release_freed()
    before = process.memory_info().rss
    tracemalloc.start()
    out.put("measuring")
    assert asks.get() == "asked"
    gc.collect()
    kept = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    release_freed()
    out.put({"rss_before": before, "rss_after": process.memory_info().rss, "python_kept": kept,
             "store_memory": server.tables.views(base).listings.store.memory_bytes()})
    server.stop()


def client(port: int, base: str, partitions: int, rate: float, seconds: float, seed: int, out: mp.Queue, go: mp.Event) -> None:
    timeline = HoodieTable.open(base).timeline
    params = {"basepath": base, "lastinstantts": timeline.last_instant().timestamp, "timelinehash": timeline.timeline_hash()}
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    rng = random.Random(seed)
    latencies = []
    for _ in range(200):  # warm-up, not measured: connections, imports, first answers
        query = urllib.parse.urlencode({**params, "partition": f"p{rng.randrange(partitions):05d}"})
        conn.request("GET", f"{LATEST_SLICES}?{query}", headers={"X-Hoodie-Token": TOKEN})
        conn.getresponse().read()
    out.put(None)  # ready
    go.wait()
    start = time.perf_counter()
    for n in range(int(rate * seconds)):
        due = start + n / rate
        wait = due - time.perf_counter()
        if wait > 0:
            time.sleep(wait)
        query = urllib.parse.urlencode({**params, "partition": f"p{rng.randrange(partitions):05d}"})
        conn.request("GET", f"{LATEST_SLICES}?{query}", headers={"X-Hoodie-Token": TOKEN})
        response = conn.getresponse()
        body = response.read()
        # open loop: latency from when the request was due, so a stall counts for every request behind it
        latencies.append(time.perf_counter() - due)
        assert response.status == 200 and json.loads(body), body[:200]
    out.put(latencies)


def run_store(kind: str, base: str, instant: str, partitions: int, args: argparse.Namespace, root: Path) -> dict:
    ctx = mp.get_context("spawn")
    ready, stop = ctx.Queue(), ctx.Event()
    rocksdb = str(root / f"rocksdb-{kind}")
    server = ctx.Process(target=serve, args=(kind, base, instant, partitions, args.groups, args.spillable_mb, rocksdb, ready, stop))
    server.start()
    info = ready.get(timeout=1800)
    out, go = ctx.Queue(), ctx.Event()
    clients = [
        ctx.Process(target=client, args=(info["port"], base, partitions, args.rate / args.clients, args.seconds, i, out, go))
        for i in range(args.clients)
    ]
    for c in clients:
        c.start()
    for _ in clients:
        assert out.get(timeout=600) is None  # warmed up
    go.set()
    latencies = sorted(x for _ in clients for x in out.get(timeout=600))
    for c in clients:
        c.join()
    info["p50_ms"] = latencies[len(latencies) // 2] * 1000
    info["p99_ms"] = latencies[int(len(latencies) * 0.99)] * 1000
    info["requests"] = len(latencies)
    stop.set()
    server.join(timeout=60)
    return info


def run_memory(kind: str, base: str, small: str, args: argparse.Namespace, root: Path) -> dict:
    """A server process per store; its questions come from this process, so that the
    answers' copies are not counted as the server's."""
    ctx = mp.get_context("spawn")
    asks, out = ctx.Queue(), ctx.Queue()
    server = ctx.Process(target=measure_memory, args=(kind, small, base, args.spillable_mb, str(root / f"rocksdb-memory-{kind}"), asks, out))
    server.start()
    port = out.get(timeout=600)
    ask_all(port, small)
    asks.put("small asked")
    assert out.get(timeout=600) == "measuring"
    started = time.perf_counter()
    partitions, slices = ask_all(port, base)
    built = time.perf_counter() - started
    asks.put("asked")
    info = out.get(timeout=7200)
    server.join(timeout=60)
    return {**info, "partitions": partitions, "slices": slices, "build_seconds": built}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rate", type=float, default=1000.0)
    ap.add_argument("--clients", type=int, default=4)
    ap.add_argument("--seconds", type=float, default=10.0)
    ap.add_argument("--partitions", type=int, default=1000, help="partitions of the latency runs")
    ap.add_argument("--groups", type=int, default=10, help="file groups a made-up partition of the latency runs holds")
    ap.add_argument("--memory-partitions", type=int, default=20_000)
    ap.add_argument("--commits", type=int, default=5, help="commits that make the table of the memory runs")
    ap.add_argument("--spillable-mb", type=float, default=1.0)
    ap.add_argument("--skip-latency", action="store_true")
    ap.add_argument("--wide-table", default="", help="where the memory runs' table is made and kept (made if missing): "
                    "runs of other builds of hoodie can measure the same table")
    ap.add_argument("--repeat", type=int, default=3, help="latency runs per store, interleaved; the median run counts")
    args = ap.parse_args()
    root = Path(tempfile.mkdtemp(prefix="hoodie-views-bench-"))
    try:
        base, instant = make_table(root)
        if not args.skip_latency:
            print(f"(b) view calls: {args.rate:g} requests/s from {args.clients} processes for {args.seconds:g} s, "
                  f"{args.partitions} partitions x {args.groups} file groups")
            runs: dict[str, list[dict]] = {kind: [] for kind in STORE_TYPES}
            for _ in range(args.repeat):
                for kind in STORE_TYPES:
                    runs[kind].append(run_store(kind, base, instant, args.partitions, args, root))
            for kind, done in runs.items():
                median = sorted(done, key=lambda r: r["p99_ms"])[len(done) // 2]
                every = ", ".join(f"{r['p99_ms']:.2f}" for r in done)
                print(f"  {kind:>17}: p50 {median['p50_ms']:6.2f} ms, p99 {median['p99_ms']:6.2f} ms (median run; p99 of each run: {every}) "
                      f"over {median['requests']} requests (target: p99 < 10 ms)")
        if args.wide_table and Path(args.wide_table, ".hoodie").exists():
            wide = HoodieTable.open(args.wide_table).base_path
            made = f"the table in {args.wide_table}"
        else:
            print(f"(c) making a table of {args.memory_partitions} partitions by {args.commits} commits", flush=True)
            wide = make_wide_table(Path(args.wide_table) if args.wide_table else root / "wide", args.memory_partitions, args.commits)
            made = f"{args.memory_partitions} partitions made by {args.commits} commits"
        print(f"(c) server memory: {made}, spillable bound {args.spillable_mb:g} MiB")
        for kind in STORE_TYPES:
            r = run_memory(kind, wide, base, args, root)
            grown = (r["rss_after"] - r["rss_before"]) / 2**20
            print(f"  {kind:>17}: resident {r['rss_before'] / 2**20:7.1f} -> {r['rss_after'] / 2**20:7.1f} MiB (+{grown:6.1f} MiB), "
                  f"Python objects kept {r['python_kept'] / 2**20:6.1f} MiB, "
                  f"listings and records in memory {r['store_memory'] / 2**20:6.1f} MiB, {r['partitions']} partitions "
                  f"({r['slices']} latest slices) answered in {r['build_seconds']:.1f} s", flush=True)
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
