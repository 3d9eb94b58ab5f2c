"""Markers of one commit writing many data files: direct markers against timeline-server
markers, on local disk and through a storage that adds a fixed latency to every call (what
object storage costs: ``--latency-ms``, 20 by default).

The write's tasks are threads of this process (``--tasks``, each its own share of the
files, spread over ``--partitions`` partitions), making their markers as the write handles
do: direct markers one by one; timeline-server markers all of a task's at once
(``create_all``) through a timeline server in this process, which writes the names into
``--threads`` ``MARKERS<n>`` files. Then the commit's side: every marker read
(``DirectMarkers.entries``) and the marker folder deleted. Marker time is all of that; the
files created in the marker folder and the storage calls are counted too. Each mode runs
``--repeat`` times (interleaved) and the fastest counts.

Targets: timeline-server markers use at most ``threads + 1`` files, and take at least 10x
less marker time than direct markers at 20 ms a call.

    python bench/markers.py [--files 10000] [--tasks 32] [--partitions 100] [--latency-ms 20]
"""
from __future__ import annotations

import argparse
import shutil
import tempfile
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from hoodie.markers import DirectMarkers, ServerClient, TimelineServerMarkers
from hoodie.storage import LatencyStorage, Storage
from hoodie.storage.local import LocalStorage
from hoodie.timeline_server import MarkerBatching, TimelineServer

INSTANT = "20261125000000000"


def task_markers(task: int, files: int, tasks: int, partitions: int) -> list[tuple[str, str, str]]:
    return [(f"p{(task * 7 + i) % partitions:03d}", f"{uuid.uuid4()}-0_{task}-1-{task}_{INSTANT}.parquet", "CREATE") for i in range(task, files, tasks)]


def run(mode: str, storage: Storage, base: str, args: argparse.Namespace) -> dict:
    work = [task_markers(t, args.files, args.tasks, args.partitions) for t in range(args.tasks)]
    direct = DirectMarkers(storage, base, INSTANT)
    server = None
    if mode == "timeline-server":
        server = TimelineServer(batching=MarkerBatching(threads=args.threads)).start()
        server.add_table(base, storage)
    storage.counters.reset()
    t0 = time.perf_counter()
    with ThreadPoolExecutor(args.tasks) as pool:
        if server is None:
            list(pool.map(lambda markers: [direct.create(*m) for m in markers], work))
        else:
            remote = TimelineServerMarkers(storage, base, INSTANT, ServerClient(server.address))
            list(pool.map(remote.create_all, work))
    created = time.perf_counter() - t0
    files = sum(1 for p in Path(direct.marker_dir).rglob("*") if p.is_file())
    entries = direct.entries()
    assert len(entries) == args.files, (mode, len(entries))
    direct.delete_all()
    total = time.perf_counter() - t0
    calls = storage.counters.by_kind()
    if server is not None:
        server.stop()
    return {"seconds": total, "create_seconds": created, "files": files, "calls": sum(calls.values()), "by_kind": calls}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--files", type=int, default=10_000)
    ap.add_argument("--tasks", type=int, default=32)
    ap.add_argument("--partitions", type=int, default=100)
    ap.add_argument("--threads", type=int, default=20, help="hoodie.markers.timeline_server_based.batch.num_threads")
    ap.add_argument("--latency-ms", type=float, default=20.0)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    root = Path(tempfile.mkdtemp(prefix="hoodie-markers-bench-"))
    try:
        for label, latency in (("local disk", 0.0), (f"{args.latency_ms:g} ms a call", args.latency_ms / 1000)):
            best: dict[str, dict] = {}
            for _ in range(args.repeat):
                for mode in ("direct", "timeline-server"):
                    base = str(root / mode)
                    inner = LocalStorage()
                    storage: Storage = LatencyStorage(inner, latency) if latency else inner
                    result = run(mode, storage, base, args)
                    shutil.rmtree(base, ignore_errors=True)
                    if mode not in best or result["seconds"] < best[mode]["seconds"]:
                        best[mode] = result
            d, t = best["direct"], best["timeline-server"]
            for mode, r in best.items():
                print(f"{label:>12} {mode:>15}: marker time {r['seconds']:7.3f} s (creating {r['create_seconds']:7.3f} s), "
                      f"{r['files']:6d} marker files, {r['calls']:6d} storage calls {r['by_kind']}")
            print(f"{label:>12} direct / timeline-server marker time: {d['seconds'] / t['seconds']:6.1f}x; "
                  f"files {d['files']} / {t['files']} (target: at most {args.threads + 1})")
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
