"""Upserts and snapshot reads: hoodie copy-on-write (in-process and Spark local[2]) and
merge-on-read (with and without small-file packing; snapshot with logs, read-optimized,
compaction) against deltalake's merge and a plain pyarrow rewrite of the touched
partitions.

Each measured step runs in its own subprocess; the parent samples the resident memory of
that process tree (JVM and Python workers included) to report its peak. Table set-up
(the initial load) happens in a separate, unmeasured subprocess. Printed ratios compare
contenders measured in the same run, because absolute times on shared machines are noisy.

Each upsert runs ``--repeat`` times (5 by default, as ``timeit.repeat``), each time on a fresh copy of the
set-up table, in rounds through all cases, and the fastest run counts (peak memory: the
largest of the runs), as ``timeit`` does: these machines are noisy, and noise only ever
adds time. The reads are repeated the same way (each read step times READS_PER_STEP reads,
interleaved where a case compares two), and so are the compactions, last, each of a
fresh copy of the upserted table, with the copy-on-write upsert they are compared with
run again in the same rounds.

    python bench/upsert.py [--rows 2000000] [--partitions 100] [--updates 100000] [--repeat 5]
"""
from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
OUT = HERE / "out"
KEY_OPTS = {
    "hoodie.table.name": "bench",
    "hoodie.datasource.write.recordkey.field": "key",
    "hoodie.datasource.write.partitionpath.field": "part",
    "hoodie.datasource.write.precombine.field": "ts",
    # every contender writes snappy Parquet, so the comparison is about the engines
    "hoodie.parquet.compression.codec": "snappy",
}


# Timed reads per read step (each step is run --repeat times too): reads take about a
# second, so a few more samples cost little and a noisy spell rarely spans them all.
READS_PER_STEP = 3


def best_reads(*reads):
    """Run each of ``reads`` (callables returning a row count) READS_PER_STEP times,
    interleaved: (the fastest time of each, the row count of the first)."""
    best = [float("inf")] * len(reads)
    rows = None
    for _ in range(READS_PER_STEP):
        for i, read in enumerate(reads):
            t0 = time.perf_counter()
            n = read()
            best[i] = min(best[i], time.perf_counter() - t0)
            rows = n if rows is None else rows
    return best, rows


# --- steps (run inside a child process) --------------------------------------------------------
def load(name: str):
    import pyarrow.parquet as pq

    return pq.read_table(OUT / "data" / f"{name}.parquet")


def step(case: str, phase: str) -> dict:  # noqa: C901 (one branch per benchmark case and phase)
    import pyarrow as pa
    import pyarrow.parquet as pq

    # pyarrow imports pandas (~0.4 s) on its first conversion of Python values: not the
    # work being measured, so every contender's process pays it before the clock starts
    pa.array([0])
    if case.startswith("hoodie"):
        # imported before the clock starts, like every other contender's library
        import hoodie.query  # noqa: F401
        import hoodie.writer.client  # noqa: F401

    root = OUT / "tables"
    if case == "hoodie":
        import hoodie

        path = str(root / "hoodie")
        if phase == "setup":
            shutil.rmtree(path, ignore_errors=True)
            hoodie.write(load("base"), path, {**KEY_OPTS, "hoodie.datasource.write.operation": "bulk_insert"})
            return {}
        if phase == "upsert":
            batch = load("upsert")
            t0 = time.perf_counter()
            hoodie.write(batch, path, KEY_OPTS)
            return {"seconds": time.perf_counter() - t0}
        hoodie.read(path)  # warm the page cache: every contender's timed read finds its files cached
        # the target's baseline, pyarrow reading the same base files, interleaved in this
        # step: reads of different steps minutes apart differed by 20% on one machine
        files = [s.base_file.path for s in hoodie.HoodieTable.open(path).view().latest_slices_all()]
        (seconds, direct), n = best_reads(lambda: hoodie.read(path).num_rows, lambda: pq.read_table(files).num_rows)
        return {"seconds": seconds, "direct_parquet_seconds": direct, "rows": n}
    if case in ("hoodie-mor", "hoodie-mor-logs", "hoodie-mor-parquet-logs"):
        import hoodie
        from hoodie.services.compaction import UNBOUNDED_STRATEGY, CompactionSettings, compact
        from hoodie.table.table import HoodieTable

        path = str(root / case)
        opts = {**KEY_OPTS, "hoodie.datasource.write.table.type": "MERGE_ON_READ"}
        if case != "hoodie-mor":
            # no small-file packing: updates append logs, inserts open new file groups
            opts["hoodie.parquet.small.file.limit"] = "0"
        if case == "hoodie-mor-parquet-logs":
            opts["hoodie.logfile.data.block.format"] = "parquet"
        if phase == "setup":
            shutil.rmtree(path, ignore_errors=True)
            hoodie.write(load("base"), path, {**opts, "hoodie.datasource.write.operation": "bulk_insert"})
            return {}
        if phase == "upsert":
            batch = load("upsert")
            t0 = time.perf_counter()
            hoodie.write(batch, path, opts)
            return {"seconds": time.perf_counter() - t0}
        if phase == "compact":
            t0 = time.perf_counter()
            compact(HoodieTable.open(path), CompactionSettings(strategy=UNBOUNDED_STRATEGY, parquet=_parquet_settings()), require_threshold=False)
            return {"seconds": time.perf_counter() - t0}
        ro = {"hoodie.datasource.query.type": "read_optimized"}
        hoodie.read(path, ro)  # warm the page cache, so neither timed read pays for it
        (snapshot, read_optimized), n = best_reads(lambda: hoodie.read(path).num_rows, lambda: hoodie.read(path, ro).num_rows)
        return {"seconds": snapshot, "read_optimized_seconds": read_optimized, "rows": n}
    if case in ("spark", "spark-direct"):
        from hoodie.spark import local_session

        # "spark": Spark's default timeline-server-based markers (the application's
        # embedded server); "spark-direct": a marker file per data file, no server
        opts = {**KEY_OPTS, "hoodie.write.markers.type": "DIRECT"} if case == "spark-direct" else KEY_OPTS
        path = str(root / case)
        spark = local_session("hoodie-bench")
        if phase == "setup":
            shutil.rmtree(path, ignore_errors=True)
            spark.read.parquet(str(OUT / "data" / "base.parquet")).write.format("hoodie").options(**opts).option(
                "hoodie.datasource.write.operation", "bulk_insert").mode("append").save(path)
            return {}
        # warm the session: JIT, Python workers, Arrow paths. Enough rows for the shuffle
        # to stay two tasks or more (adaptive execution merges a small one into a single
        # task), so that both Python workers exist, as in a session that has been working.
        warm = str(root / f"{case}-warm")
        shutil.rmtree(warm, ignore_errors=True)
        small = spark.read.parquet(str(OUT / "data" / "upsert.parquet")).limit(50_000)
        small.write.format("hoodie").options(**opts).mode("append").save(warm)
        small.write.format("hoodie").options(**opts).mode("append").save(warm)
        spark.read.format("hoodie").load(warm).count()
        if phase == "upsert":
            df = spark.read.parquet(str(OUT / "data" / "upsert.parquet")).cache()
            df.count()
            # JIT warm-up, as a benchmark of a JVM warms up (JMH's warm-up iterations): the
            # same upsert once, untimed, into a copy of the table; a session that has been
            # writing for a while has compiled these code paths for batches of this size.
            rehearsal = str(root / f"{case}-rehearsal")
            shutil.rmtree(rehearsal, ignore_errors=True)
            shutil.copytree(path, rehearsal)
            df.write.format("hoodie").options(**opts).mode("append").save(rehearsal)
            shutil.rmtree(rehearsal, ignore_errors=True)
            os.sync()  # the warm-up's files reach the disk now, not during the timed write
            t0 = time.perf_counter()
            df.write.format("hoodie").options(**opts).mode("append").save(path)
            return {"seconds": time.perf_counter() - t0}
        # a full scan of every column (noop sink), through hoodie and straight from the files
        import hoodie

        files = [sl.base_file.path for sl in hoodie.HoodieTable.open(path).view().latest_slices_all()]
        spark.read.parquet(*files).write.format("noop").mode("overwrite").save()

        def through_hoodie() -> None:
            spark.read.format("hoodie").load(path).write.format("noop").mode("overwrite").save()

        def direct_parquet() -> None:
            spark.read.parquet(*files).write.format("noop").mode("overwrite").save()

        (seconds, direct), _ = best_reads(through_hoodie, direct_parquet)
        return {"seconds": seconds, "direct_parquet_seconds": direct}
    if case == "deltalake":
        from deltalake import DeltaTable, write_deltalake

        path = str(root / "delta")
        if phase == "setup":
            shutil.rmtree(path, ignore_errors=True)
            write_deltalake(path, load("base"), partition_by=["part"])
            return {}
        if phase == "upsert":
            batch = load("upsert")
            t0 = time.perf_counter()
            (DeltaTable(path).merge(batch, "t.key = s.key AND t.part = s.part", source_alias="s", target_alias="t")
             .when_matched_update_all().when_not_matched_insert_all().execute())
            return {"seconds": time.perf_counter() - t0}
        # through a pyarrow dataset: DeltaTable.to_pyarrow_table aborts the interpreter at
        # exit in deltalake 1.6 ("terminate called without an active exception")
        DeltaTable(path).to_pyarrow_dataset().to_table()  # warm the page cache
        (seconds,), n = best_reads(lambda: DeltaTable(path).to_pyarrow_dataset().to_table().num_rows)
        return {"seconds": seconds, "rows": n}
    if case == "pyarrow":
        # the floor: rewrite each touched partition with plain pyarrow, no index, no metadata
        import pyarrow.compute as pc

        path = root / "plain"
        if phase == "setup":
            shutil.rmtree(path, ignore_errors=True)
            base = load("base")
            for part, idx in _groups(base.column("part")):
                (path / part).mkdir(parents=True)
                pq.write_table(base.take(idx), path / part / "data-0.parquet", compression="snappy")
            return {}
        if phase == "upsert":
            batch = load("upsert")
            t0 = time.perf_counter()
            for part, idx in _groups(batch.column("part")):
                incoming = batch.take(idx)
                current = pq.read_table(path / part) if (path / part).exists() else incoming.slice(0, 0)
                keep = pc.invert(pc.is_in(current.column("key"), value_set=incoming.column("key")))
                (path / part).mkdir(parents=True, exist_ok=True)
                pq.write_table(pa.concat_tables([current.filter(keep), incoming]), path / part / "data-1.parquet.tmp", compression="snappy")
                for old in (path / part).glob("*.parquet"):
                    old.unlink()
                os.replace(path / part / "data-1.parquet.tmp", path / part / "data-1.parquet")
            return {"seconds": time.perf_counter() - t0}
        # reading the latest base files of the hoodie table directly: the snapshot-read floor
        import hoodie

        table = hoodie.HoodieTable.open(str(root / "hoodie"))
        files = [s.base_file.path for s in table.view().latest_slices_all()]
        pq.read_table(files)  # warm the page cache
        (seconds,), n = best_reads(lambda: pq.read_table(files).num_rows)  # pyarrow's multi-threaded dataset read
        return {"seconds": seconds, "rows": n}
    raise SystemExit(f"unknown case {case}")


def _parquet_settings():
    from hoodie.formats.parquet import ParquetSettings

    return ParquetSettings(codec=KEY_OPTS["hoodie.parquet.compression.codec"])


def _groups(col):
    import numpy as np

    enc = col.combine_chunks().dictionary_encode()
    codes = enc.indices.to_numpy()
    for code, name in enumerate(enc.dictionary.to_pylist()):
        yield name, np.nonzero(codes == code)[0]


# --- driver ----------------------------------------------------------------------------------
def table_dir(case: str) -> Path:
    """Where a case keeps its table (as ``step`` names it)."""
    return OUT / "tables" / {"spark": "spark", "deltalake": "delta", "pyarrow": "plain"}.get(case, case)


def pristine_dir(case: str) -> Path:
    """Where a case's set-up table is kept while its upserts run on copies of it."""
    return table_dir(case).with_name(table_dir(case).name + ".pristine")


def upserts(cases: list[str], repeat: int, keep: set[str]) -> dict[str, dict]:
    """Per case, the fastest of ``repeat`` upserts, each into a fresh copy of its set-up
    table (peak memory: the largest of its runs). The rounds go through every case in
    turn, so that a slow spell of the machine does not fall on one contender only. The
    set-up tables of the ``keep`` cases stay (see :func:`compactions`)."""
    pristine = {case: pristine_dir(case) for case in cases}
    for case in cases:
        run_child(case, "setup")
        shutil.rmtree(pristine[case], ignore_errors=True)
        shutil.copytree(table_dir(case), pristine[case])
    runs = _rounds_on_copies(cases, pristine, "upsert", repeat)
    out = {}
    for case in cases:
        if case not in keep:
            shutil.rmtree(pristine[case])
        best = min(runs[case], key=lambda r: r["seconds"])
        largest = max(runs[case], key=lambda r: r["peak_mb"])
        out[case] = {
            **best,
            "peak_mb": largest["peak_mb"],
            "peak_processes_mb": largest["peak_processes_mb"],
            "all_seconds": [r["seconds"] for r in runs[case]],
        }
    return out


def reads(cases: list[str], repeat: int) -> dict[str, dict]:
    """Per case, each read time the fastest of ``repeat`` read steps, in rounds through the
    cases (reads change nothing, so every step reads the table the last upsert left)."""
    runs: dict[str, list[dict]] = {case: [] for case in cases}
    for _ in range(repeat):
        for case in cases:
            runs[case].append(run_child(case, "read"))
    out = {}
    for case, results in runs.items():
        best = {k: min(r[k] for r in results) for k in results[0] if k.endswith("seconds")}
        largest = max(results, key=lambda r: r["peak_mb"])
        out[case] = {**results[0], **best, "peak_mb": largest["peak_mb"], "peak_processes_mb": largest["peak_processes_mb"]}
    return out


def compactions(cases: list[str], repeat: int) -> dict[str, dict]:
    """Per merge-on-read case, the fastest of ``repeat`` compactions, each of a fresh copy
    of the table its last upsert left, in rounds through the cases (as the upserts).

    The copy-on-write upsert the compaction target compares with (case ``hoodie``) runs
    again in the same rounds, on copies of its set-up table: the compactions come last,
    minutes after the upserts, and the machine's speed drifts more than that. Its times
    are returned under ``hoodie``."""
    mor = [case for case in cases if case.startswith("hoodie-mor")]
    sources = {case: table_dir(case).with_name(table_dir(case).name + ".upserted") for case in mor}
    for case in mor:
        shutil.rmtree(sources[case], ignore_errors=True)
        shutil.copytree(table_dir(case), sources[case])
    phases = dict.fromkeys(mor, "compact")
    if mor and "hoodie" in cases:
        sources["hoodie"], phases["hoodie"] = pristine_dir("hoodie"), "upsert"
    runs = _rounds_on_copies(list(sources), sources, phases, repeat)
    for source in sources.values():
        shutil.rmtree(source)
    return {case: {"seconds": min(r["seconds"] for r in rs), "all_seconds": [r["seconds"] for r in rs]} for case, rs in runs.items()}


def _rounds_on_copies(cases: list[str], source: dict[str, Path], phase: str | dict[str, str], repeat: int) -> dict[str, list[dict]]:
    """``repeat`` rounds through ``cases``, each step (``phase``, or the case's phase) run
    on a fresh copy of the case's ``source`` table, so that a slow spell of the machine
    does not fall on one case only."""
    runs: dict[str, list[dict]] = {case: [] for case in cases}
    for _ in range(repeat):
        for case in cases:
            shutil.rmtree(table_dir(case))
            shutil.copytree(source[case], table_dir(case))
            runs[case].append(run_child(case, phase if isinstance(phase, str) else phase[case]))
    return runs


def run_child(case: str, phase: str) -> dict:
    import psutil

    # the previous step's files reach the disk now, not in the background of this one
    os.sync()
    proc = subprocess.Popen([sys.executable, __file__, "--child", case, phase], stdout=subprocess.PIPE, text=True)
    peak = 0
    breakdown: list[tuple[str, int]] = []
    ps = psutil.Process(proc.pid)

    def sample() -> None:
        nonlocal peak, breakdown
        while proc.poll() is None:
            try:
                procs = [ps] + ps.children(recursive=True)
            except psutil.Error:
                procs = []
            sizes = []
            for p in procs:
                with contextlib.suppress(psutil.Error):  # gone, or a zombie, since the listing
                    sizes.append((_process_label(p), p.memory_info().rss))
            total = sum(rss for _, rss in sizes)
            if total > peak:
                # what each process held at the peak, to explain an unusual one later
                peak, breakdown = total, sizes
            time.sleep(0.05)

    t = threading.Thread(target=sample, daemon=True)
    t.start()
    out, _ = proc.communicate()
    t.join()
    if proc.returncode != 0:
        raise SystemExit(f"{case} {phase} failed with exit code {proc.returncode}")
    result = json.loads(out.strip().splitlines()[-1])
    result["peak_mb"] = peak / 2**20
    result["peak_processes_mb"] = [[label, round(rss / 2**20)] for label, rss in breakdown]
    return result


def _process_label(p) -> str:  # type: ignore[no-untyped-def]
    """``java``, ``python pyspark.daemon``, ``python pyspark.worker`` or ``python`` (the step)."""
    import psutil

    try:
        module = next((c for c in p.cmdline() if c.startswith("pyspark.")), "")
    except psutil.Error:
        module = ""
    return f"{p.name()} {module}".strip()


def main() -> None:  # noqa: C901 (one branch per command-line mode)
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=2_000_000)
    ap.add_argument("--partitions", type=int, default=100)
    ap.add_argument("--updates", type=int, default=100_000)
    ap.add_argument("--cases", default="hoodie,hoodie-mor,hoodie-mor-logs,hoodie-mor-parquet-logs,spark,deltalake,pyarrow")
    ap.add_argument("--repeat", type=int, default=5, help="upserts per case; the fastest counts")
    ap.add_argument("--child", nargs=2)
    args = ap.parse_args()
    if args.child:
        print(json.dumps(step(*args.child)), flush=True)
        # skip interpreter teardown: deltalake 1.6's threads sometimes abort it
        # ("terminate called without an active exception") after the work is done
        os._exit(0)
    sys.path.insert(0, str(HERE))
    import pyarrow.parquet as pq
    from datagen import base_table, upsert_batch

    (OUT / "data").mkdir(parents=True, exist_ok=True)
    stamp = OUT / "data" / "params.json"
    params = {"rows": args.rows, "partitions": args.partitions, "updates": args.updates}
    if not stamp.exists() or json.loads(stamp.read_text()) != params:
        print(f"generating {args.rows:,} rows in {args.partitions} partitions, upsert of {2 * args.updates:,}")
        base = base_table(args.rows, args.partitions)
        pq.write_table(base, OUT / "data" / "base.parquet", compression="snappy")
        pq.write_table(upsert_batch(args.rows, args.partitions, args.updates), OUT / "data" / "upsert.parquet", compression="snappy")
        print(f"about {base.nbytes / args.rows:.0f} bytes a row in memory")
        stamp.write_text(json.dumps(params))
    cases = args.cases.split(",")
    results: dict[str, dict[str, dict]] = {}
    upserted = upserts(cases, args.repeat, keep={"hoodie"})  # its set-up table: see compactions
    read = reads(cases, args.repeat)
    compacted = compactions(cases, args.repeat)  # last: compaction rewrites the table the reads read
    shutil.rmtree(pristine_dir("hoodie"), ignore_errors=True)
    for case in cases:
        results[case] = {"upsert": upserted[case], "read": read[case]}
        if case == "hoodie" and case in compacted:
            results[case]["upsert"]["beside_compactions_seconds"] = compacted[case]["seconds"]
            results[case]["upsert"]["beside_compactions_all_seconds"] = compacted[case]["all_seconds"]
        elif case in compacted:
            results[case]["read"]["compaction_seconds"] = compacted[case]["seconds"]
            results[case]["read"]["compaction_all_seconds"] = compacted[case]["all_seconds"]
        runs = "/".join(f"{x:.2f}" for x in results[case]["upsert"]["all_seconds"])
        print(f"{case:>10}: upsert {results[case]['upsert']['seconds']:7.2f} s (runs {runs}; peak {results[case]['upsert']['peak_mb']:7.0f} MB)"
              f"   snapshot read {results[case]['read']['seconds']:6.2f} s (peak {results[case]['read']['peak_mb']:7.0f} MB)")
        if "beside_compactions_seconds" in results[case]["upsert"]:
            again = "/".join(f"{x:.2f}" for x in results[case]["upsert"]["beside_compactions_all_seconds"])
            print(f"{'':>10}  upsert again, in the compactions' rounds {results[case]['upsert']['beside_compactions_seconds']:7.2f} s (runs {again})")
    print()
    if "deltalake" in results:
        d = results["deltalake"]
        for case in ("hoodie", "spark", "pyarrow"):
            if case in results:
                r = results[case]
                print(f"{case:>10} / deltalake:  upsert time {r['upsert']['seconds'] / d['upsert']['seconds']:5.2f}x   "
                      f"upsert peak memory {r['upsert']['peak_mb'] / d['upsert']['peak_mb']:5.2f}x")
    for case in ("hoodie-mor", "hoodie-mor-logs", "hoodie-mor-parquet-logs"):
        if case in results:
            r = results[case]
            print(f"{case:>16}: snapshot read with logs / read-optimized read: {r['read']['seconds'] / r['read']['read_optimized_seconds']:5.2f}x   "
                  f"compaction {r['read']['compaction_seconds']:.2f} s")
            if "deltalake" in results:
                print(f"{case:>16} / deltalake:  upsert time {r['upsert']['seconds'] / results['deltalake']['upsert']['seconds']:5.2f}x")
            if "hoodie" in results:
                cow = results["hoodie"]["upsert"]
                print(f"{case:>16}: compaction / COW upsert in the same rounds: {r['read']['compaction_seconds'] / cow['beside_compactions_seconds']:5.2f}x"
                      f"   (/ the upsert rounds' COW upsert: {r['read']['compaction_seconds'] / cow['seconds']:5.2f}x)")
    if "spark" in results and "spark-direct" in results:
        print(f"     spark upsert, timeline-server markers / direct markers: "
              f"{results['spark']['upsert']['seconds'] / results['spark-direct']['upsert']['seconds']:5.2f}x")
    if "spark" in results:
        r = results["spark"]["read"]
        print(f"     spark snapshot read / Spark's direct Parquet read of the same base files: {r['seconds'] / r['direct_parquet_seconds']:5.2f}x")
    if "hoodie" in results:
        r = results["hoodie"]["read"]
        print(f"    hoodie snapshot read / pyarrow's read of the same base files (interleaved): {r['seconds'] / r['direct_parquet_seconds']:5.2f}x")
    if "pyarrow" in results:
        floor = results["pyarrow"]["read"]["seconds"]
        for case in ("hoodie", "deltalake"):
            if case in results:
                print(f"{case:>10} snapshot read / the pyarrow step's read of hoodie's base files: {results[case]['read']['seconds'] / floor:5.2f}x")
    (OUT / "last_run.json").write_text(json.dumps({"params": params, "results": results}, indent=2))


if __name__ == "__main__":
    main()
