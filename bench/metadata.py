"""The metadata table (issue 29): what it saves and what it costs, in process.

Five sections (``--sections``), each comparing modes in interleaved rounds (``--repeat``)
in this one process, the median of the rounds counting:

- ``listing``: every partition's latest file slices of a table of ``--partitions`` (each
  count of the list) partitions of ``--files`` base files each, listed through storage and
  through the metadata table's ``files`` partition, on local disk and through
  ``LatencyStorage`` at ``--latency-ms`` a call. Opening the table is counted apart from
  the listing; storage calls are counted.
- ``tagging``: the upsert batch of ``bench/upsert.py`` (``--updates`` updates spread over
  every partition and as many new keys) tagged against its ``--rows``-row table with the
  footer bloom index, the bloom index reading ``bloom_filters``
  (``hoodie.bloom.index.use.metadata``) and ``RECORD_INDEX``: the write pipeline's own
  tagging step (the record flow's ``tag``) on a prepared upsert, timed alone.
- ``point``: an upsert of one existing row into a ``--point-rows``-row table (loaded
  ``--chunk-rows`` rows a commit) with ``RECORD_INDEX`` and with the footer bloom index,
  each on a fresh copy of the table: time, Parquet files opened for reading and written,
  file groups in the commit.
- ``skipping``: a range filter on a data column (``c_date``) of a table written in
  ``--skip-commits`` commits, each its own range of dates in new file groups, read with
  and without data skipping: time and Parquet files opened.
- ``upsert``: the upsert of ``bench/upsert.py`` into a fresh copy of its loaded table with
  the metadata table off, on (its default partition, ``files``) and with all four
  partitions, on local disk.

``--quick`` runs every section at a small scale (a check that the benchmark runs, not a
measurement). The figures and targets are recorded in docs/benchmarks.md.

    python bench/metadata.py [--quick] [--sections listing,tagging,point,skipping,upsert] [--repeat 3]
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.fs as pafs

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from datagen import base_table, upsert_batch  # noqa: E402

import hoodie  # noqa: E402
from hoodie.config import options as o  # noqa: E402
from hoodie.engine.local import LocalEngine  # noqa: E402
from hoodie.metadata_table.listing import MetadataListing, listed_through_metadata  # noqa: E402
from hoodie.services.for_writers import WRITER_SERVICES  # noqa: E402
from hoodie.storage import LatencyStorage, Storage  # noqa: E402
from hoodie.storage.local import LocalStorage  # noqa: E402
from hoodie.table.table import HoodieTable  # noqa: E402
from hoodie.writer import steps  # noqa: E402
from hoodie.writer.client import ArrowRecordFlow  # noqa: E402
from hoodie.writer.prepare import add_keys  # noqa: E402
from hoodie.writer.schema import FILE_ID_COLUMN, normalize_batch  # noqa: E402
from hoodie.writer.table_setup import prepare_write  # noqa: E402

OUT = HERE / "out" / "metadata"
KEY_OPTS = {
    "hoodie.table.name": "bench",
    "hoodie.datasource.write.recordkey.field": "key",
    "hoodie.datasource.write.partitionpath.field": "part",
    "hoodie.datasource.write.precombine.field": "ts",
    "hoodie.parquet.compression.codec": "snappy",
}
MDT_FILES = {"hoodie.metadata.enable": "true"}
MDT_ALL = {
    **MDT_FILES,
    "hoodie.metadata.index.column.stats.enable": "true",
    "hoodie.metadata.index.bloom.filter.enable": "true",
    "hoodie.metadata.record.index.enable": "true",
}
HAS_RECORD_INDEX = "RECORD_INDEX" in o.OPTIONS["hoodie.index.type"].choices
HAS_BLOOM_FROM_METADATA = "hoodie.bloom.index.use.metadata" in o.OPTIONS


# --- counting Parquet files ------------------------------------------------------------------
class _CountingHandler(pafs.FileSystemHandler):
    """The local file system, counting the files opened for reading and for writing."""

    def __init__(self) -> None:
        self.fs = pafs.LocalFileSystem()
        self.read: set[str] = set()
        self.written: set[str] = set()

    def get_type_name(self) -> str:
        return "counting-local"

    def equals(self, other: Any) -> bool:
        return self is other

    def normalize_path(self, path: str) -> str:
        return self.fs.normalize_path(path)

    def get_file_info(self, paths: list[str]) -> list[pafs.FileInfo]:
        return self.fs.get_file_info(paths)

    def get_file_info_selector(self, selector: pafs.FileSelector) -> list[pafs.FileInfo]:
        return self.fs.get_file_info(selector)

    def create_dir(self, path: str, recursive: bool) -> None:
        self.fs.create_dir(path, recursive=recursive)

    def delete_dir(self, path: str) -> None:
        self.fs.delete_dir(path)

    def delete_dir_contents(self, path: str, missing_dir_ok: bool = False) -> None:
        self.fs.delete_dir_contents(path, missing_dir_ok=missing_dir_ok)

    def delete_root_dir_contents(self) -> None:
        raise OSError("not deleting a root")

    def delete_file(self, path: str) -> None:
        self.fs.delete_file(path)

    def move(self, src: str, dest: str) -> None:
        self.fs.move(src, dest)

    def copy_file(self, src: str, dest: str) -> None:
        self.fs.copy_file(src, dest)

    def open_input_stream(self, path: str) -> Any:
        self.read.add(path)
        return self.fs.open_input_stream(path)

    def open_input_file(self, path: str) -> Any:
        self.read.add(path)
        return self.fs.open_input_file(path)

    def open_output_stream(self, path: str, metadata: Any = None) -> Any:
        self.written.add(path)
        return self.fs.open_output_stream(path, metadata=metadata)

    def open_append_stream(self, path: str, metadata: Any = None) -> Any:
        self.written.add(path)
        return self.fs.open_append_stream(path, metadata=metadata)


class CountingStorage(LocalStorage):
    """Local storage whose Parquet I/O (its pyarrow file system) is counted by file."""

    def __init__(self) -> None:
        super().__init__()
        self.handler = _CountingHandler()
        self._fs = pafs.PyFileSystem(self.handler)

    def arrow_filesystem(self) -> tuple[pafs.FileSystem, str]:
        return self._fs, "file://"

    def reset(self) -> None:
        self.handler.read.clear()
        self.handler.written.clear()

    def parquet_files(self) -> tuple[int, int]:
        """Parquet files opened for reading and written since the last reset."""
        return (sum(p.endswith(".parquet") for p in self.handler.read), sum(p.endswith(".parquet") for p in self.handler.written))


# --- helpers -----------------------------------------------------------------------------------
def sync() -> None:
    os.sync()


def fresh_copy(src: Path, dst: Path) -> None:
    shutil.rmtree(dst, ignore_errors=True)
    subprocess.run(["cp", "-a", str(src), str(dst)], check=True)
    sync()


def median(values: list[float]) -> float:
    return statistics.median(values)


def rounds(modes: list[str], repeat: int, run: Callable[[str, int], dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    """``run(mode, round)`` for every mode in every round, the order rotating from round
    to round; every result kept."""
    out: dict[str, list[dict[str, Any]]] = {m: [] for m in modes}
    for r in range(repeat):
        for mode in modes[r % len(modes):] + modes[: r % len(modes)]:
            out[mode].append(run(mode, r))
    return out


def med(results: list[dict[str, Any]], key: str) -> float:
    return median([x[key] for x in results])


def load(path: Path, rows: int, partitions: int, chunk: int, opts: Mapping[str, str], operation: str = "bulk_insert") -> None:
    """A table of ``rows`` base rows, ``chunk`` rows a commit (kept from an earlier run
    with ``--keep-tables``)."""
    if (path / ".hoodie" / "hoodie.properties").exists():
        return
    shutil.rmtree(path, ignore_errors=True)
    for i, start in enumerate(range(0, rows, chunk)):
        n = min(chunk, rows - start)
        hoodie.write(base_table(n, partitions, seed=1 + i, start=start), str(path), {**KEY_OPTS, **opts, "hoodie.datasource.write.operation": operation})


# --- listing -------------------------------------------------------------------------------------
def listing_table(path: Path, partitions: int, files: int) -> None:
    """``files`` commits, each inserting one row into every partition as a new file group."""
    if (path / ".hoodie" / "hoodie.properties").exists():
        return
    shutil.rmtree(path, ignore_errors=True)
    opts = {**KEY_OPTS, **MDT_FILES, "hoodie.datasource.write.operation": "insert", "hoodie.parquet.small.file.limit": "0"}
    for f in range(files):
        keys = np.arange(partitions) + f * partitions
        rows = pa.table({
            "key": pa.array([f"key-{k:09d}" for k in keys.tolist()]),
            "part": pa.array([f"part-{k % partitions:04d}" for k in keys.tolist()]),
            "ts": pa.array(np.ones(partitions, dtype=np.int64)),
            "value": pa.array(keys),
        })
        hoodie.write(rows, str(path), opts)


def list_once(path: Path, through_metadata: bool, latency: float, expected: int) -> dict[str, Any]:
    inner = LocalStorage()
    storage: Storage = LatencyStorage(inner, latency) if latency else inner
    inner.counters.reset()
    t0 = time.perf_counter()
    table = HoodieTable.open(str(path), storage)
    if through_metadata:
        table = listed_through_metadata(table, MetadataListing())
    opened = time.perf_counter()
    open_calls = sum(inner.counters.by_kind().values())
    slices = table.local_view().latest_slices_all()
    done = time.perf_counter()
    assert len(slices) == expected, (len(slices), expected)
    calls = inner.counters.by_kind()
    return {
        "seconds": done - opened, "open_seconds": opened - t0,
        "calls": sum(calls.values()) - open_calls, "open_calls": open_calls, "by_kind": calls,
    }


def section_listing(args: argparse.Namespace) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for partitions in args.partitions:
        path = args.out / "tables" / f"listing-{partitions}x{args.files}"
        t0 = time.perf_counter()
        listing_table(path, partitions, args.files)
        print(f"listing table {partitions} x {args.files}: ready in {time.perf_counter() - t0:.1f} s", flush=True)
        for label, latency in (("local", 0.0), (f"{args.latency_ms:g}ms", args.latency_ms / 1000)):
            modes = ["storage", "metadata"]
            runs = rounds(modes, args.repeat, lambda m, _r, path=path, latency=latency, n=partitions * args.files: list_once(path, m == "metadata", latency, n))
            row = {m: {"seconds": med(runs[m], "seconds"), "open_seconds": med(runs[m], "open_seconds"),
                       "calls": runs[m][0]["calls"], "open_calls": runs[m][0]["open_calls"], "runs": runs[m]} for m in modes}
            row["speedup"] = row["storage"]["seconds"] / row["metadata"]["seconds"]
            result[f"{partitions}/{label}"] = row
            print(f"listing {partitions:>5} partitions x {args.files} files, {label:>5}: "
                  f"storage {row['storage']['seconds']:.3f} s ({row['storage']['calls']} calls), "
                  f"metadata {row['metadata']['seconds']:.3f} s ({row['metadata']['calls']} calls), "
                  f"{row['speedup']:.1f}x; opening the table {row['storage']['open_seconds']:.3f} / "
                  f"{row['metadata']['open_seconds']:.3f} s ({row['storage']['open_calls']} / {row['metadata']['open_calls']} calls)", flush=True)
    return result


# --- tagging -------------------------------------------------------------------------------------
TAG_MODES = {
    "bloom (footers)": {"hoodie.index.type": "BLOOM"},
    "bloom (bloom_filters)": {"hoodie.index.type": "BLOOM", "hoodie.bloom.index.use.metadata": "true"},
    "record index": {"hoodie.index.type": "RECORD_INDEX"},
}


def tag_modes() -> list[str]:
    modes = ["bloom (footers)"]
    if HAS_BLOOM_FROM_METADATA:
        modes.append("bloom (bloom_filters)")
    if HAS_RECORD_INDEX:
        modes.append("record index")
    return modes


def tag_once(path: Path, batch: pa.Table, mode: str) -> dict[str, Any]:
    """The write pipeline's tagging step of an upsert of ``batch``, timed alone (the
    table opened, the write prepared and the batch keyed before the clock starts)."""
    storage = CountingStorage()
    options = {**KEY_OPTS, **MDT_ALL, **TAG_MODES[mode]}
    batch = normalize_batch(batch)
    prepared = prepare_write(str(path), options, "upsert", batch.schema, storage, WRITER_SERVICES, lambda keygen: add_keys(batch, keygen, False))
    flow = ArrowRecordFlow(prepared, batch, LocalEngine())
    partitions = flow.partitions()  # keys the batch (flow.records) too
    view = prepared.table.view()
    view.prefetch_latest(partitions)
    refs = {p: steps.file_refs(view.latest_slices(p)) for p in partitions}
    storage.counters.reset()
    storage.reset()
    t0 = time.perf_counter()
    tagged = flow.tag(refs)
    seconds = time.perf_counter() - t0
    found = tagged.num_rows - tagged.column(FILE_ID_COLUMN).null_count
    return {"seconds": seconds, "tagged": found, "parquet_read": storage.parquet_files()[0], "calls": storage.counters.by_kind()}


def section_tagging(args: argparse.Namespace) -> dict[str, Any]:
    path = args.out / "tables" / f"tagging-{args.rows}"
    t0 = time.perf_counter()
    load(path, args.rows, args.partitions_data, args.rows, MDT_ALL)
    print(f"tagging table {args.rows} rows (metadata table with all four partitions): loaded in {time.perf_counter() - t0:.1f} s", flush=True)
    batch = upsert_batch(args.rows, args.partitions_data, args.updates)
    modes = tag_modes()
    tag_once(path, batch, modes[0])  # untimed: modules, first buffers
    runs = rounds(modes, args.repeat, lambda m, _r: tag_once(path, batch, m))
    result: dict[str, Any] = {"pending": [m for m in TAG_MODES if m not in modes]}
    base = med(runs[modes[0]], "seconds")
    for m in modes:
        tagged = {r["tagged"] for r in runs[m]}
        assert tagged == {args.updates}, (m, tagged)
        s = med(runs[m], "seconds")
        result[m] = {"seconds": s, "ratio": s / base, "parquet_read": runs[m][0]["parquet_read"], "calls": runs[m][0]["calls"], "runs": runs[m]}
        print(f"tagging {len(batch)} keys ({args.updates} found) against {args.rows} rows, {m:>22}: {s:.3f} s, "
              f"{s / base:.2f}x the footer bloom index; {runs[m][0]['parquet_read']} Parquet files opened, "
              f"storage calls {runs[m][0]['calls']}", flush=True)
    for m in result["pending"]:
        print(f"tagging, {m}: pending (not on this branch)", flush=True)
    return result


# --- point upsert ----------------------------------------------------------------------------------
POINT_MODES = {"record index": {"hoodie.index.type": "RECORD_INDEX"}, "bloom (footers)": {"hoodie.index.type": "BLOOM"}}


def point_once(src: Path, work: Path, row: pa.Table, mode: str) -> dict[str, Any]:
    fresh_copy(src, work)
    storage = CountingStorage()
    storage.reset()
    storage.counters.reset()
    t0 = time.perf_counter()
    hoodie.write(row, str(work), {**KEY_OPTS, **MDT_ALL, **POINT_MODES[mode]}, storage=storage)
    seconds = time.perf_counter() - t0
    read, written = storage.parquet_files()
    table = HoodieTable.open(str(work))
    stats = table.commit_metadata(table.timeline.completed_writes()[-1]).write_stats()
    groups = {(s.partitionPath, s.fileId) for s in stats}
    return {"seconds": seconds, "parquet_read": read, "parquet_written": written, "calls": storage.counters.by_kind(), "file_groups": len(groups)}


def section_point(args: argparse.Namespace) -> dict[str, Any]:
    src = args.out / "tables" / f"point-{args.point_rows}"
    t0 = time.perf_counter()
    load(src, args.point_rows, args.partitions_data, args.chunk_rows, MDT_ALL)
    print(f"point table {args.point_rows} rows: ready in {time.perf_counter() - t0:.1f} s", flush=True)
    key = args.point_rows // 2 + 7
    row = base_table(1, args.partitions_data, seed=99, start=key)
    row = row.set_column(row.schema.get_field_index("ts"), "ts", pa.array([2], pa.int64()))
    modes = [m for m in POINT_MODES if m != "record index" or HAS_RECORD_INDEX]
    work = args.out / "tables" / "point-work"
    point_once(src, work, row, modes[-1])  # untimed
    runs = rounds(modes, args.repeat, lambda m, _r: point_once(src, work, row, m))
    shutil.rmtree(work, ignore_errors=True)
    result: dict[str, Any] = {"pending": [m for m in POINT_MODES if m not in modes]}
    for m in modes:
        r = {"seconds": med(runs[m], "seconds"), **{k: runs[m][0][k] for k in ("parquet_read", "parquet_written", "file_groups", "calls")}, "runs": runs[m]}
        result[m] = r
        print(f"upsert of one row into {args.point_rows} rows, {m:>16}: {r['seconds']:.3f} s, Parquet files read {r['parquet_read']}, "
              f"written {r['parquet_written']}, file groups in the commit {r['file_groups']}, storage calls {r['calls']}", flush=True)
    for m in result["pending"]:
        print(f"point upsert, {m}: pending (not on this branch)", flush=True)
    return result


# --- data skipping -----------------------------------------------------------------------------------
DAYS_PER_COMMIT = 30
FIRST_DAY = 18000


def skipping_table(path: Path, rows: int, partitions: int, commits: int) -> None:
    if (path / ".hoodie" / "hoodie.properties").exists():
        return
    shutil.rmtree(path, ignore_errors=True)
    per = rows // commits
    opts = {**KEY_OPTS, **MDT_FILES, "hoodie.metadata.index.column.stats.enable": "true",
            "hoodie.datasource.write.operation": "insert", "hoodie.parquet.small.file.limit": "0"}
    for c in range(commits):
        rng = np.random.default_rng(100 + c)
        chunk = base_table(per, partitions, seed=10 + c, start=c * per)
        days = FIRST_DAY + c * DAYS_PER_COMMIT + rng.integers(0, DAYS_PER_COMMIT, per, dtype=np.int32)
        chunk = chunk.set_column(chunk.schema.get_field_index("c_date"), "c_date", pa.array(days).cast(pa.date32()))
        hoodie.write(chunk, str(path), opts)


def skip_once(path: Path, filters: list[Any], skipping: bool) -> dict[str, Any]:
    storage = CountingStorage()
    storage.reset()
    t0 = time.perf_counter()
    rows = hoodie.read(str(path), {"hoodie.enable.data.skipping": str(skipping).lower()}, filters=filters, storage=storage)
    seconds = time.perf_counter() - t0
    return {"seconds": seconds, "rows": rows.num_rows, "parquet_read": storage.parquet_files()[0]}


def section_skipping(args: argparse.Namespace) -> dict[str, Any]:
    path = args.out / "tables" / f"skipping-{args.rows}x{args.skip_commits}"
    t0 = time.perf_counter()
    skipping_table(path, args.rows, args.partitions_data, args.skip_commits)
    print(f"skipping table {args.rows} rows in {args.skip_commits} commits: ready in {time.perf_counter() - t0:.1f} s", flush=True)
    import datetime as dt

    lo = dt.date(1970, 1, 1) + dt.timedelta(days=FIRST_DAY + 3 * DAYS_PER_COMMIT + 5)
    hi = lo + dt.timedelta(days=10)
    filters = [("c_date", ">=", lo), ("c_date", "<", hi)]
    modes = ["without skipping", "with skipping"]
    for m in modes:
        skip_once(path, filters, m == "with skipping")  # untimed: the page cache
    runs = rounds(modes, args.repeat, lambda m, _r: skip_once(path, filters, m == "with skipping"))
    result: dict[str, Any] = {"filter": f"{lo} <= c_date < {hi}"}
    for m in modes:
        assert len({r["rows"] for r in runs[m]}) == 1
        result[m] = {"seconds": med(runs[m], "seconds"), "rows": runs[m][0]["rows"], "parquet_read": runs[m][0]["parquet_read"], "runs": runs[m]}
    assert result[modes[0]]["rows"] == result[modes[1]]["rows"]
    result["ratio"] = result["with skipping"]["seconds"] / result["without skipping"]["seconds"]
    for m in modes:
        print(f"range filter {result['filter']} ({result[m]['rows']} rows), {m:>16}: {result[m]['seconds']:.3f} s, "
              f"{result[m]['parquet_read']} Parquet files read", flush=True)
    print(f"with / without skipping: {result['ratio']:.2f}x", flush=True)
    return result


# --- the benchmark upsert ------------------------------------------------------------------------------
UPSERT_MODES = {"off": {}, "on (files)": MDT_FILES, "on (all four)": MDT_ALL}


def upsert_once(src: Path, work: Path, batch: pa.Table, mode: str) -> dict[str, Any]:
    fresh_copy(src, work)
    t0 = time.perf_counter()
    hoodie.write(batch, str(work), {**KEY_OPTS, **UPSERT_MODES[mode]})
    return {"seconds": time.perf_counter() - t0}


def section_upsert(args: argparse.Namespace) -> dict[str, Any]:
    modes = list(UPSERT_MODES)
    srcs = {m: args.out / "tables" / f"upsert-{args.rows}-{i}" for i, m in enumerate(modes)}
    t0 = time.perf_counter()
    for m, src in srcs.items():
        load(src, args.rows, args.partitions_data, args.rows, UPSERT_MODES[m])
    print(f"upsert tables {args.rows} rows: loaded in {time.perf_counter() - t0:.1f} s", flush=True)
    batch = upsert_batch(args.rows, args.partitions_data, args.updates)
    work = args.out / "tables" / "upsert-work"
    for m in modes:
        upsert_once(srcs[m], work, batch, m)  # untimed: each mode's first write
    runs = rounds(modes, args.repeat, lambda m, _r: upsert_once(srcs[m], work, batch, m))
    shutil.rmtree(work, ignore_errors=True)
    base = med(runs["off"], "seconds")
    result: dict[str, Any] = {}
    for m in modes:
        s = med(runs[m], "seconds")
        result[m] = {"seconds": s, "ratio": s / base, "runs": [r["seconds"] for r in runs[m]]}
        print(f"upsert {len(batch)} rows into {args.rows}, metadata table {m:>13}: {s:.3f} s "
              f"({'/'.join(f'{r:.2f}' for r in result[m]['runs'])}), {s / base:.2f}x off", flush=True)
    return result


SECTIONS = {"listing": section_listing, "tagging": section_tagging, "point": section_point, "skipping": section_skipping, "upsert": section_upsert}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="every section at a small scale: a check that it runs")
    ap.add_argument("--sections", default=",".join(SECTIONS))
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--partitions", default="100,1000", help="listing: partition counts")
    ap.add_argument("--files", type=int, default=10, help="listing: base files a partition")
    ap.add_argument("--latency-ms", type=float, default=20.0)
    ap.add_argument("--rows", type=int, default=2_000_000, help="tagging, skipping, upsert: rows of the table")
    ap.add_argument("--partitions-data", type=int, default=100, help="tagging, point, skipping, upsert: partitions")
    ap.add_argument("--updates", type=int, default=100_000, help="tagging, upsert: updates (and as many inserts)")
    ap.add_argument("--point-rows", type=int, default=10_000_000)
    ap.add_argument("--chunk-rows", type=int, default=1_000_000, help="point: rows a commit of the load")
    ap.add_argument("--skip-commits", type=int, default=10)
    ap.add_argument("--keep-tables", action="store_true", help="keep bench/out/metadata/tables for the next run")
    args = ap.parse_args()
    if args.quick:
        args.partitions, args.files, args.rows, args.updates = "10,50", 3, 50_000, 2_500
        args.point_rows, args.chunk_rows, args.partitions_data, args.repeat = 100_000, 50_000, 10, min(args.repeat, 2)
    args.out = OUT / "quick" if args.quick else OUT
    args.partitions = [int(p) for p in str(args.partitions).split(",")]
    args.out.mkdir(parents=True, exist_ok=True)
    results: dict[str, Any] = {"args": {k: v for k, v in vars(args).items()}}
    try:
        for name in args.sections.split(","):
            results[name] = SECTIONS[name](args)
    finally:
        if args.quick or not args.keep_tables:
            shutil.rmtree(args.out / "tables", ignore_errors=True)
    (args.out / "last_run.json").write_text(json.dumps(results, indent=1, default=str))


if __name__ == "__main__":
    main()
