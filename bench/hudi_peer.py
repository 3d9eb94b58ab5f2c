"""hoodie against Apache Hudi 0.15 itself: a bulk load, an upsert and a snapshot read of
the same data, copy-on-write and merge-on-read, through Apache Hudi on Spark ``local[2]``
(``hudi``), hoodie on Spark ``local[2]`` (``spark``) and hoodie in process (``hoodie``).

The data (``bench/datagen.py``: ``--rows`` rows in ``--partitions`` partitions, and an
upsert batch of ``--upsert-rows`` rows, half updates spread over every partition, half
new keys) is generated once and written to Parquet; every contender loads those files.
Each contender is one long-lived process, started once (Apache Hudi's by the interpreter
and Spark bundle of ``scripts/oracle_setup.sh``, as the oracle tests run it), that does one
step per request, so its JVM stays warm across steps as in a working application; each
first does the whole workload untimed on a small table of each table type (JIT and
Python-worker warm-up). While a step runs the parent samples the resident memory of that
contender's process tree every 50 ms (the JVM and Python workers included) and reports
its peak and the JVM's part of it. Before each step the parent syncs the disk, so no step
pays for another's writeback.

Rounds (``--repeat``) go through the table types, and within each through the steps in
order, each step done by every contender in turn (the order rotating round to round), so
that a slow spell of the machine does not fall on one contender only; a step's figure is
the median of its rounds (peak memory: the largest). A read step reads the table once
untimed (the page cache), then times READS_PER_STEP full scans and keeps their median.
Apache Hudi and hoodie run with their write defaults (only the key, partition and
ordering fields are set, and ``hoodie.metadata.enable=true``, the default of both: each
keeps its metadata table; both write gzip Parquet by default) and the two Spark
contenders with the same Spark settings (hoodie's ``local_session``'s, plus the ones
Hudi's quick start requires: Kryo, its session extension and catalog). The last round's
tables stay for the storage count: data files, timeline files and metadata table, each
system's, for the same commits.

Targets: hoodie on Spark at most 0.5x Apache Hudi's upsert time and at most 1.0x its
snapshot-read time, copy-on-write and merge-on-read; hoodie in process at most 0.25x
Apache Hudi's upsert time.

    python bench/hudi_peer.py [--rows 2000000] [--partitions 100] [--upsert-rows 200000]
                              [--repeat 3] [--table-type cow,mor]

The child side (``--child``) imports only the standard library and PySpark (and hoodie
for hoodie's contenders): Apache Hudi's interpreter has nothing else.
"""
from __future__ import annotations

import argparse
import contextlib
import json
import os
import queue
import shutil
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
OUT = HERE / "out" / "hudi_peer"
CONTENDERS = ("hudi", "spark", "hoodie")
LABELS = {"hudi": "Apache Hudi 0.15, Spark local[2]", "spark": "hoodie, Spark local[2]", "hoodie": "hoodie, in process"}
TABLE_TYPES = {"cow": "COPY_ON_WRITE", "mor": "MERGE_ON_READ"}
STEPS = ("load", "upsert", "read")
KEY_OPTS = {
    "hoodie.table.name": "bench",
    "hoodie.datasource.write.recordkey.field": "key",
    "hoodie.datasource.write.partitionpath.field": "part",
    "hoodie.datasource.write.precombine.field": "ts",
    # both keep a metadata table (files partition), as both do by default: said here so
    # that the comparison stays like for like whatever either default becomes
    "hoodie.metadata.enable": "true",
}
READS_PER_STEP = 3
WARM_ROWS = 50_000
# (contender, step, target ratio to Apache Hudi's time)
TARGETS = (("spark", "upsert", 0.5), ("spark", "read", 1.0), ("hoodie", "upsert", 0.25))
# hoodie's local_session's Spark settings that are not about its Python workers: Apache
# Hudi's session gets them too, so that both Spark contenders run on the same Spark
HUDI_SPARK_CONF = {
    "spark.driver.memory": "2g",
    "spark.executor.memory": "1g",
    "spark.driver.extraJavaOptions": "-XX:+UseSerialGC -Xms384m",
    "spark.sql.shuffle.partitions": "4",
    "spark.default.parallelism": "4",
    "spark.ui.enabled": "false",
    "spark.ui.showConsoleProgress": "false",
    "spark.sql.session.timeZone": "UTC",
    "spark.driver.host": "127.0.0.1",
    "spark.driver.bindAddress": "127.0.0.1",
    # what Apache Hudi's quick start requires of a session
    "spark.serializer": "org.apache.spark.serializer.KryoSerializer",
    "spark.kryo.registrator": "org.apache.spark.HoodieSparkKryoRegistrar",
    "spark.sql.extensions": "org.apache.spark.sql.hudi.HoodieSparkSessionExtension",
    "spark.sql.catalog.spark_catalog": "org.apache.spark.sql.hudi.catalog.HoodieCatalog",
}


# --- child side: one contender, one step per request ---------------------------------------------
def _options(table_type: str, operation: str | None = None) -> dict[str, str]:
    opts = {**KEY_OPTS, "hoodie.datasource.write.table.type": TABLE_TYPES[table_type]}
    if operation:
        opts["hoodie.datasource.write.operation"] = operation
    return opts


class SparkSteps:
    """The steps through a Spark data source (``fmt``: ``hudi`` or ``hoodie``)."""

    def __init__(self, spark: Any, fmt: str) -> None:
        self.spark, self.fmt = spark, fmt

    def load(self, source: str, path: str, table_type: str) -> dict[str, Any]:
        t0 = time.perf_counter()
        self.spark.read.parquet(source).write.format(self.fmt).options(**_options(table_type, "bulk_insert")).mode("append").save(path)
        return {"seconds": time.perf_counter() - t0}

    def upsert(self, source: str, path: str, table_type: str) -> dict[str, Any]:
        df = self.spark.read.parquet(source).cache()
        df.count()  # the batch is in memory before the clock starts
        t0 = time.perf_counter()
        df.write.format(self.fmt).options(**_options(table_type)).mode("append").save(path)
        seconds = time.perf_counter() - t0
        df.unpersist()
        return {"seconds": seconds}

    def scan(self, path: str) -> None:
        # every column of every row, nothing collected to the driver
        self.spark.read.format(self.fmt).load(path).write.format("noop").mode("overwrite").save()

    def count(self, path: str) -> int:
        return int(self.spark.read.format(self.fmt).load(path).count())

    def warm(self, source: str, path: str, table_type: str) -> None:
        small = self.spark.read.parquet(source).limit(WARM_ROWS)
        small.write.format(self.fmt).options(**_options(table_type, "bulk_insert")).mode("append").save(path)
        small.write.format(self.fmt).options(**_options(table_type)).mode("append").save(path)
        self.scan(path)


class InProcessSteps:
    """The steps through hoodie's Python API."""

    def __init__(self) -> None:
        import pyarrow as pa

        import hoodie

        pa.array([0])  # pyarrow's first conversion imports pandas: not the work measured
        self.hoodie = hoodie

    def load(self, source: str, path: str, table_type: str) -> dict[str, Any]:
        import pyarrow.parquet as pq

        data = pq.read_table(source)
        t0 = time.perf_counter()
        self.hoodie.write(data, path, _options(table_type, "bulk_insert"))
        return {"seconds": time.perf_counter() - t0}

    def upsert(self, source: str, path: str, table_type: str) -> dict[str, Any]:
        import pyarrow.parquet as pq

        data = pq.read_table(source)
        t0 = time.perf_counter()
        self.hoodie.write(data, path, _options(table_type))
        return {"seconds": time.perf_counter() - t0}

    def scan(self, path: str) -> None:
        self.hoodie.read(path)

    def count(self, path: str) -> int:
        return int(self.hoodie.read(path).num_rows)

    def warm(self, source: str, path: str, table_type: str) -> None:
        import pyarrow.parquet as pq

        small = pq.read_table(source).slice(0, WARM_ROWS)
        self.hoodie.write(small, path, _options(table_type, "bulk_insert"))
        self.hoodie.write(small, path, _options(table_type))
        self.scan(path)


def _hudi_session(jar: str, work: Path) -> Any:
    from pyspark.sql import SparkSession

    builder = SparkSession.builder.master("local[2]").appName("hudi-peer-bench").config("spark.jars", jar)
    for key, value in {**HUDI_SPARK_CONF, "spark.local.dir": str(work / "spark-local")}.items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def run_child(contender: str, jar: str | None, work: Path) -> None:
    """Answers one JSON line on stdout per request line on stdin (see :class:`Child`)."""
    # answers get a copy of stdout; fd 1 becomes stderr, so nothing the JVM prints mixes in
    answers = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)
    steps: SparkSteps | InProcessSteps
    if contender == "hudi":
        assert jar is not None
        steps = SparkSteps(_hudi_session(jar, work), "hudi")
    elif contender == "spark":
        from hoodie.spark import local_session

        steps = SparkSteps(local_session("hoodie-peer-bench"), "hoodie")
    else:
        steps = InProcessSteps()
    answers.write(json.dumps({"ready": True}) + "\n")
    for line in sys.stdin:
        req = json.loads(line)
        op, path, table_type = req["op"], req.get("path", ""), req.get("table_type", "cow")
        if op == "stop":
            break
        if op == "warm":
            steps.warm(req["source"], path, table_type)
            answer: dict[str, Any] = {}
        elif op == "read":
            steps.scan(path)  # the page cache, and the plan's first compilation
            times = []
            for _ in range(READS_PER_STEP):
                t0 = time.perf_counter()
                steps.scan(path)
                times.append(time.perf_counter() - t0)
            answer = {"seconds": statistics.median(times), "all_read_seconds": times, "rows": steps.count(path)}
        else:
            answer = getattr(steps, op)(req["source"], path, table_type)
        answers.write(json.dumps(answer) + "\n")


# --- parent side ---------------------------------------------------------------------------------
class Child:
    """One contender's long-lived process: :meth:`request` a step, with its process tree's
    peak resident memory (and the JVM's part of it) while the step ran."""

    def __init__(self, contender: str, argv: list[str], env: dict[str, str], work: Path) -> None:
        work.mkdir(parents=True, exist_ok=True)
        self.contender = contender
        self.stderr_path = work / f"{contender}.stderr"
        with open(self.stderr_path, "wb") as stderr:
            self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=stderr, text=True, env=env,
                                         cwd=work, start_new_session=True)
        self.answers: queue.Queue[str | None] = queue.Queue()
        threading.Thread(target=self._pump, daemon=True).start()
        self._wait("start")

    def _pump(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.answers.put(line)
        self.answers.put(None)

    def _wait(self, what: str, sample: Any = None) -> dict[str, Any]:
        while True:
            try:
                line = self.answers.get(timeout=0.05)
            except queue.Empty:
                if sample:
                    sample()
                continue
            if line is None:
                tail = "\n".join(self.stderr_path.read_text(errors="replace").splitlines()[-30:])
                raise SystemExit(f"{self.contender} died during {what} (exit {self.proc.wait()}):\n{tail}")
            answer: dict[str, Any] = json.loads(line)
            return answer

    def request(self, req: dict[str, Any]) -> dict[str, Any]:
        import psutil

        os.sync()  # the previous step's files reach the disk now, not during this one
        root = psutil.Process(self.proc.pid)
        peak: dict[str, Any] = {"total": 0, "jvm": 0, "processes": []}

        def sample() -> None:
            try:
                procs = [root, *root.children(recursive=True)]
            except psutil.Error:
                return
            sizes = []
            for p in procs:
                with contextlib.suppress(psutil.Error):  # gone since the listing
                    sizes.append((p.name(), p.exe(), p.ppid() == root.pid, p.memory_info().rss))
            # The JVM: the java child of the contender's process. A process it forks
            # (Hadoop's local file system runs commands) is the java program until it runs
            # its own, with the JVM's pages resident: they are the JVM's, shared, and not
            # counted twice.
            jvm_exe = {exe for name, exe, direct, _ in sizes if name == "java" and direct}
            total = sum(rss for _, exe, direct, rss in sizes if direct or exe not in jvm_exe)
            if total > peak["total"]:
                jvm = sum(rss for name, _, direct, rss in sizes if name == "java" and direct)
                # each process's share at the peak, to explain an unusual one later
                peak.update(total=total, jvm=jvm, processes=[[name, round(rss / 2**20)] for name, _, _, rss in sizes])

        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(req) + "\n")
        self.proc.stdin.flush()
        sample()
        answer = self._wait(f"{req['op']} of {req.get('path')}", sample)
        return {**answer, "peak_mb": peak["total"] / 2**20, "jvm_peak_mb": peak["jvm"] / 2**20, "peak_processes_mb": peak["processes"]}

    def close(self) -> None:
        if self.proc.poll() is None:
            assert self.proc.stdin is not None
            try:
                self.proc.stdin.write(json.dumps({"op": "stop"}) + "\n")
                self.proc.stdin.close()
                self.proc.wait(60)
            except (OSError, subprocess.TimeoutExpired):
                os.killpg(self.proc.pid, 9)  # its own process group: the JVM goes with it
                self.proc.wait()


def start_children(contenders: list[str]) -> dict[str, Child]:
    sys.path.insert(0, str(ROOT))
    from tests.oracle.hudi_oracle import HUDI_0_15, _child_env, set_up

    children = {}
    for contender in contenders:
        work = OUT / "work" / contender
        argv = [sys.executable, __file__, "--child", contender, "--work", str(work)]
        env = dict(os.environ)
        if contender == "hudi":
            setup = set_up(HUDI_0_15)
            argv = [str(setup.python), __file__, "--child", contender, "--work", str(work), "--jar", str(setup.jar)]
            env = _child_env()
        children[contender] = Child(contender, argv, env, work)
    return children


def storage_footprint(path: Path) -> dict[str, dict[str, int]]:
    """Files and bytes a table holds: data files (base and log files), other files in the
    partitions (partition metadata), timeline files (``.hoodie`` itself, with
    ``hoodie.properties``), the metadata table (``.hoodie/metadata``), the rest of
    ``.hoodie`` (temporary, auxiliary, archive) and Hadoop's ``.crc`` checksum files."""
    out: dict[str, dict[str, int]] = {}
    meta = path / ".hoodie"
    for f in path.rglob("*"):
        if not f.is_file():
            continue
        if f.name.endswith(".crc"):
            kind = "checksums (.crc)"  # Hadoop's local file system writes one beside each file
        elif f.parent == meta:
            kind = "timeline"
        elif meta / "metadata" in f.parents:
            kind = "metadata table"
        elif meta in f.parents:
            kind = ".hoodie, other"
        elif f.name.endswith(".parquet") or ".log." in f.name:
            kind = "data files"
        else:
            kind = "partitions, other"
        entry = out.setdefault(kind, {"files": 0, "bytes": 0})
        entry["files"] += 1
        entry["bytes"] += f.stat().st_size
    return out


def rounds(children: dict[str, Child], table_types: list[str], repeat: int) -> dict[str, dict[str, dict[str, list[dict[str, Any]]]]]:
    """runs[table type][contender][step]: one result a round."""
    data = OUT / "data"
    runs: dict[str, dict[str, dict[str, list[dict[str, Any]]]]] = {
        tt: {c: {s: [] for s in STEPS} for c in children} for tt in table_types}
    for tt in table_types:
        for contender, child in children.items():
            warm = OUT / "tables" / f"warm-{contender}-{tt}"
            shutil.rmtree(warm, ignore_errors=True)
            child.request({"op": "warm", "source": str(data / "upsert.parquet"), "path": str(warm), "table_type": tt})
            shutil.rmtree(warm, ignore_errors=True)
    names = list(children)
    for r in range(repeat):
        order = names[r % len(names):] + names[:r % len(names)]
        for tt in table_types:
            for step in STEPS:
                for contender in order:
                    path = OUT / "tables" / f"{contender}-{tt}"
                    if step == "load":
                        shutil.rmtree(path, ignore_errors=True)
                    source = {"load": "base.parquet", "upsert": "upsert.parquet"}.get(step, "")
                    result = children[contender].request({"op": step, "source": str(data / source), "path": str(path), "table_type": tt})
                    runs[tt][contender][step].append(result)
                    print(f"  round {r + 1} {tt} {step:>6} {contender:>6}: {result['seconds']:7.2f} s  peak {result['peak_mb']:6.0f} MB", flush=True)
    return runs


def summarize(runs: dict[str, dict[str, dict[str, list[dict[str, Any]]]]]) -> dict[str, Any]:
    summary: dict[str, Any] = {}
    for tt, by_contender in runs.items():
        for contender, by_step in by_contender.items():
            for step, results in by_step.items():
                summary.setdefault(tt, {}).setdefault(contender, {})[step] = {
                    "seconds": statistics.median(r["seconds"] for r in results),
                    "all_seconds": [r["seconds"] for r in results],
                    "peak_mb": max(r["peak_mb"] for r in results),
                    "jvm_peak_mb": max(r["jvm_peak_mb"] for r in results),
                    **({"rows": results[-1]["rows"]} if "rows" in results[-1] else {}),
                }
    return summary


def report(summary: dict[str, Any], footprint: dict[str, Any]) -> None:
    for tt, by_contender in summary.items():
        print(f"\n{TABLE_TYPES[tt]}")
        for contender, s in by_contender.items():
            cells = "   ".join(f"{step} {s[step]['seconds']:7.2f} s (peak {s[step]['peak_mb']:5.0f} MB, JVM {s[step]['jvm_peak_mb']:5.0f})" for step in STEPS)
            print(f"  {LABELS[contender]:>32}: {cells}   rows read {s['read'].get('rows')}")
        hudi = by_contender.get("hudi")
        for contender in ("spark", "hoodie"):
            if hudi and contender in by_contender:
                s = by_contender[contender]
                ratios = "   ".join(f"{step} {s[step]['seconds'] / hudi[step]['seconds']:5.2f}x" for step in STEPS)
                memory = "   ".join(f"{step} {s[step]['peak_mb'] / hudi[step]['peak_mb']:5.2f}x" for step in STEPS)
                print(f"  {LABELS[contender]:>32} / Apache Hudi: time {ratios};  peak memory {memory}")
        for contender, step, target in TARGETS:
            if hudi and contender in by_contender:
                ratio = by_contender[contender][step]["seconds"] / hudi[step]["seconds"]
                verdict = "met" if ratio <= target else "NOT met"
                print(f"  target: {LABELS[contender]} {step} <= {target}x Apache Hudi's: {ratio:.2f}x ({verdict})")
        for contender, kinds in footprint.get(tt, {}).items():
            cells = ";  ".join(f"{kind} {v['files']} files {v['bytes'] / 2**20:.1f} MiB" for kind, v in sorted(kinds.items()))
            print(f"  on storage, {contender:>6}: {cells}")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=2_000_000)
    ap.add_argument("--partitions", type=int, default=100)
    ap.add_argument("--upsert-rows", type=int, default=200_000, help="half updates, half new keys")
    ap.add_argument("--repeat", type=int, default=3, help="rounds; each step's figure is the median")
    ap.add_argument("--table-type", default="cow,mor", help="cow, mor or cow,mor")
    ap.add_argument("--contenders", default=",".join(CONTENDERS))
    ap.add_argument("--child")
    ap.add_argument("--work", type=Path)
    ap.add_argument("--jar")
    args = ap.parse_args()
    if args.child:
        run_child(args.child, args.jar, args.work)
        return
    table_types = args.table_type.split(",")
    for tt in table_types:
        if tt not in TABLE_TYPES:
            raise SystemExit(f"--table-type: unknown table type {tt!r} (known: cow, mor)")
    sys.path.insert(0, str(HERE))
    import pyarrow.parquet as pq
    from datagen import base_table, upsert_batch

    (OUT / "data").mkdir(parents=True, exist_ok=True)
    stamp = OUT / "data" / "params.json"
    params = {"rows": args.rows, "partitions": args.partitions, "upsert_rows": args.upsert_rows}
    if not stamp.exists() or json.loads(stamp.read_text()) != params:
        print(f"generating {args.rows:,} rows in {args.partitions} partitions, upsert of {args.upsert_rows:,}", flush=True)
        pq.write_table(base_table(args.rows, args.partitions), OUT / "data" / "base.parquet")
        pq.write_table(upsert_batch(args.rows, args.partitions, args.upsert_rows // 2), OUT / "data" / "upsert.parquet")
        stamp.write_text(json.dumps(params))
    children = start_children(args.contenders.split(","))
    try:
        runs = rounds(children, table_types, args.repeat)
    finally:
        for child in children.values():
            child.close()
    summary = summarize(runs)
    footprint = {tt: {c: storage_footprint(OUT / "tables" / f"{c}-{tt}") for c in children} for tt in table_types}
    report(summary, footprint)
    (OUT / "last_run.json").write_text(json.dumps({"params": params, "summary": summary, "storage": footprint, "runs": runs}, indent=2))


if __name__ == "__main__":
    main()
