"""The timeline server's file-system views, per view store (MEMORY, SPILLABLE_DISK,
EMBEDDED_KV_STORE):

(b) latency of view calls (``GET /v1/hoodie/view/slices/partition/latest/`` for a random
    partition) sent at ``--rate`` requests a second in all, open loop, from ``--clients``
    client processes, after every partition was listed once: p50 and p99;
(c) the server's memory: resident size of a server process before and after its view of
    a table with ``--memory-partitions`` partitions x ``--groups`` file groups is built
    (every partition listed and kept in the store), against the store's bound
    (``hoodie.filesystem.view.spillable.mem``, ``--spillable-mb``).

The table is real (``.hoodie``, its timeline and one commit), but its partitions but one
are listed by a storage that makes them up: ``--groups`` base files of the commit each,
as a listing of object storage would return them, so that 100,000 partitions cost no disk.
Each store runs in a process of its own.

Targets: p99 under 10 ms; SPILLABLE_DISK and EMBEDDED_KV_STORE within their bound plus a
fixed overhead (MEMORY grows with the table).

    python bench/views.py [--rate 1000] [--clients 4] [--seconds 10] [--partitions 1000]
                          [--memory-partitions 100000] [--groups 10] [--spillable-mb 16]
"""
from __future__ import annotations

import argparse
import http.client
import json
import multiprocessing as mp
import random
import shutil
import tempfile
import time
import urllib.parse
from pathlib import Path

import psutil
import pyarrow as pa

import hoodie
from hoodie.layout import base_file_name, write_token
from hoodie.storage.base import FileInfo
from hoodie.storage.local import LocalStorage
from hoodie.table import HoodieTable
from hoodie.table.remote_view import LATEST_SLICES
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


def serve(kind: str, base: str, instant: str, partitions: int, groups: int, spillable_mb: int, rocksdb: str, ready: mp.Queue, stop: mp.Event) -> None:
    process = psutil.Process()
    server = TimelineServer(token=TOKEN).start()
    settings = StoreSettings(kind, spillable_memory_bytes=spillable_mb * 1024 * 1024, rocksdb_base_path=rocksdb)
    server.add_table(base, MadeUpPartitions(base, partitions, groups, instant), settings)
    before = process.memory_info().rss
    views = server.tables.views(base)
    started = time.perf_counter()
    listed = views.view().all_partition_paths()  # the walk lists every partition into the store
    built = time.perf_counter() - started
    ready.put({"port": server.port, "partitions": len(listed), "rss_before": before, "rss_after": process.memory_info().rss,
               "store_memory": views.listings.store.memory_bytes(), "build_seconds": built})
    stop.wait()
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


def run_store(kind: str, base: str, instant: str, partitions: int, args: argparse.Namespace, root: Path, measure_latency: bool) -> dict:
    ctx = mp.get_context("spawn")
    ready, stop = ctx.Queue(), ctx.Event()
    rocksdb = str(root / f"rocksdb-{kind}")
    server = ctx.Process(target=serve, args=(kind, base, instant, partitions, args.groups, args.spillable_mb, rocksdb, ready, stop))
    server.start()
    info = ready.get(timeout=1800)
    if measure_latency:
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


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rate", type=float, default=1000.0)
    ap.add_argument("--clients", type=int, default=4)
    ap.add_argument("--seconds", type=float, default=10.0)
    ap.add_argument("--partitions", type=int, default=1000, help="partitions of the latency runs")
    ap.add_argument("--memory-partitions", type=int, default=100_000)
    ap.add_argument("--groups", type=int, default=10)
    ap.add_argument("--spillable-mb", type=int, default=16)
    ap.add_argument("--repeat", type=int, default=3, help="latency runs per store, interleaved; the median run counts")
    args = ap.parse_args()
    root = Path(tempfile.mkdtemp(prefix="hoodie-views-bench-"))
    try:
        base, instant = make_table(root)
        print(f"(b) view calls: {args.rate:g} requests/s from {args.clients} processes for {args.seconds:g} s, "
              f"{args.partitions} partitions x {args.groups} file groups")
        runs: dict[str, list[dict]] = {kind: [] for kind in STORE_TYPES}
        for _ in range(args.repeat):
            for kind in STORE_TYPES:
                runs[kind].append(run_store(kind, base, instant, args.partitions, args, root, measure_latency=True))
        for kind, done in runs.items():
            median = sorted(done, key=lambda r: r["p99_ms"])[len(done) // 2]
            every = ", ".join(f"{r['p99_ms']:.2f}" for r in done)
            print(f"  {kind:>17}: p50 {median['p50_ms']:6.2f} ms, p99 {median['p99_ms']:6.2f} ms (median run; p99 of each run: {every}) "
                  f"over {median['requests']} requests (target: p99 < 10 ms)")
        print(f"(c) server memory: {args.memory_partitions} partitions x {args.groups} file groups, spillable bound {args.spillable_mb} MiB")
        for kind in STORE_TYPES:
            r = run_store(kind, base, instant, args.memory_partitions, args, root, measure_latency=False)
            grown = (r["rss_after"] - r["rss_before"]) / 2**20
            print(f"  {kind:>17}: resident {r['rss_before'] / 2**20:7.1f} -> {r['rss_after'] / 2**20:7.1f} MiB (+{grown:6.1f} MiB), "
                  f"listings in memory {r['store_memory'] / 2**20:6.1f} MiB, {r['partitions']} partitions listed in {r['build_seconds']:.1f} s")
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
