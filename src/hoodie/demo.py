"""The demo pipeline: a trips table ingested in batches of inserts, updates and deletes,
through PySpark (``df.write.format("hoodie")``) on a local Spark, or in this process with
``--in-process``; then the timeline and an incremental pull.

Run with ``python -m hoodie.demo [--path DIR] [--in-process] [--batches N]``.

Each run starts a new table at ``--path``. The demo deletes only a table it created
itself: it marks its table with ``.hoodie/.aux/hoodie-demo`` before the first write, and
replaces a folder only when that mark is there and everything else in it is what the demo
writes (the trips partitions with their base files, and the table's ``.hoodie`` folder),
with no symbolic link anywhere. Any other non-empty folder (CSV files, a Delta table, a
Hudi table of someone else) is refused with one line and exit code 1, untouched.
"""
from __future__ import annotations

import argparse
import os
import random
import shutil
import sys
import uuid
from pathlib import Path

import pyarrow as pa
from rich.console import Console
from rich.table import Table

import hoodie
from hoodie.layout import (
    AUX_FOLDER,
    HOODIE_FOLDER,
    METADATA_FOLDER,
    PARTITION_METAFILE_PREFIX,
    SCHEMA_FOLDER,
    TEMP_FOLDER,
    parse_base_file_name,
    parse_log_file_name,
)
from hoodie.storage.local import LocalStorage
from hoodie.table.home import foreign_contents
from hoodie.table.properties_file import BACKUP_FILE, PROPERTIES_FILE
from hoodie.table.table import HoodieTable
from hoodie.timeline.instant import parse_timeline_file_name

DEMO_ROWS_SHOWN = 10  # rows of the incremental pull printed
CITIES = ["san_francisco", "sao_paulo", "chennai", "new_york", "london"]
OPTIONS = {
    "hoodie.table.name": "trips",
    "hoodie.datasource.write.recordkey.field": "uuid",
    "hoodie.datasource.write.partitionpath.field": "city",
    "hoodie.datasource.write.precombine.field": "ts",
    "hoodie.datasource.write.hive_style_partitioning": "true",
}


class TripGenerator:
    """Random trips; remembers keys so later batches can update and delete them."""

    def __init__(self, seed: int = 7) -> None:
        self.rng = random.Random(seed)
        self.keys: list[tuple[str, str]] = []
        self.ts = 1_695_000_000_000

    def _trip(self, key: str, city: str) -> dict:
        self.ts += self.rng.randint(1, 1000)
        return {
            "uuid": key,
            "ts": self.ts,
            "rider": f"rider-{self.rng.choice('ABCDEFGHIJ')}",
            "driver": f"driver-{self.rng.choice('KLMNOPQRST')}",
            "fare": round(self.rng.uniform(5, 100), 2),
            "city": city,
        }

    def inserts(self, n: int) -> pa.Table:
        rows = []
        for _ in range(n):
            key = str(uuid.UUID(int=self.rng.getrandbits(128)))
            city = self.rng.choice(CITIES)
            self.keys.append((key, city))
            rows.append(self._trip(key, city))
        return pa.Table.from_pylist(rows)

    def updates(self, n: int) -> pa.Table:
        return pa.Table.from_pylist([self._trip(k, c) for k, c in self.rng.sample(self.keys, min(n, len(self.keys)))])

    def deletes(self, n: int) -> pa.Table:
        victims = self.rng.sample(self.keys, min(n, len(self.keys)))
        for v in victims:
            self.keys.remove(v)
        return pa.Table.from_pylist([{"uuid": k, "city": c, "ts": self.ts} for k, c in victims])


def run(path: str, in_process: bool, batches: int, console: Console, master: str | None = None) -> None:
    gen = TripGenerator()
    plan = [("insert", lambda: gen.inserts(200))]
    for i in range(batches - 1):
        plan.append(("delete", lambda: gen.deletes(10)) if i % 3 == 2 else ("upsert", lambda: pa.concat_tables([gen.updates(40), gen.inserts(20)])))
    spark = None
    if not in_process:
        from hoodie.spark import local_session

        spark = local_session("hoodie-demo", master=master)
    instants = []
    with console.status("writing") as status:
        for op, make in plan:
            data = make()
            status.update(f"{op} of {data.num_rows} records")
            opts = {**OPTIONS, "hoodie.datasource.write.operation": op}
            if spark is None:
                instants.append(hoodie.write(data, path, opts))
            else:
                spark.createDataFrame(data.to_pandas()).write.format("hoodie").options(**opts).mode("append").save(path)
                instants.append(HoodieTable.open(path).timeline.completed_writes()[-1].timestamp)
            console.print(f"  {op:<7} {data.num_rows:>4} records -> commit {instants[-1]}")
    show_timeline(path, console)
    begin, end = instants[-3], instants[-1]
    incr_opts = {
        "hoodie.datasource.query.type": "incremental",
        "hoodie.datasource.read.begin.instanttime": begin,
        "hoodie.datasource.read.end.instanttime": end,
    }
    if spark is None:
        pulled = hoodie.read(path, incr_opts)
        total = hoodie.read(path).num_rows
    else:
        reader = spark.read.format("hoodie")
        pulled = pa.Table.from_pandas(reader.options(**incr_opts).load(path).toPandas(), preserve_index=False)
        total = spark.read.format("hoodie").load(path).count()
    console.print(f"\nsnapshot: {total} trips ({len(gen.keys)} expected)")
    console.print(f"incremental pull of ({begin}, {end}]: {pulled.num_rows} records")
    shown = min(pulled.num_rows, DEMO_ROWS_SHOWN)
    which = f"the first {shown} of {pulled.num_rows}" if shown < pulled.num_rows else f"all {shown}"
    t = Table("_hoodie_commit_time", "uuid", "city", "fare", "rider", title=f"{which} pulled records, oldest commit first")
    for r in pulled.sort_by("_hoodie_commit_time").slice(0, shown).to_pylist():
        t.add_row(r["_hoodie_commit_time"], r["uuid"][:8], r["city"], f"{r['fare']:.2f}", r["rider"])
    console.print(t)
    if spark is not None:
        spark.stop()


def show_timeline(path: str, console: Console) -> None:
    """The same listing as ``hoodie timeline --all``."""
    from hoodie.cli.timeline import list_timeline, print_timeline

    table = HoodieTable.open(path)
    console.print()
    print_timeline(table, list_timeline(table, include_all=True), as_json=False)


# --- the demo's own table: the only folder it deletes -------------------------------------

DEMO_MARK = (HOODIE_FOLDER, AUX_FOLDER, "hoodie-demo")
DEMO_MARK_TEXT = "a table of the hoodie demo (python -m hoodie.demo), which replaces it on its next run at this path\n"
# what a Hudi table's .hoodie folder holds besides its timeline files
_HOODIE_ENTRIES = {PROPERTIES_FILE, BACKUP_FILE, AUX_FOLDER, TEMP_FOLDER, SCHEMA_FOLDER, METADATA_FOLDER, "archived", ".heartbeat"}
_SHOWN = 3  # names shown before "and N more"


def _names(found: list[str]) -> str:
    more = f" and {len(found) - _SHOWN} more" if len(found) > _SHOWN else ""
    return ", ".join(sorted(found)[:_SHOWN]) + more


def _links(path: Path) -> list[str]:
    """Symbolic links anywhere under ``path`` (never followed)."""
    found = []
    for folder, dirs, files in os.walk(path):
        found += [os.path.relpath(os.path.join(folder, n), path) for n in dirs + files if os.path.islink(os.path.join(folder, n))]
    return found


def _is_demo_data_file(name: str) -> bool:
    return name.startswith(PARTITION_METAFILE_PREFIX) or parse_base_file_name(name) is not None or parse_log_file_name(name) is not None


def _foreign_entries(path: Path) -> list[str]:
    """What is in ``path`` that the demo does not write: anything beside ``.hoodie`` and the
    trips partitions, anything in a partition but Hudi data files, anything at the top of
    ``.hoodie`` that is not a Hudi table's."""
    partitions = {f"city={c}" for c in CITIES}
    found = []
    for entry in path.iterdir():
        if entry.name == HOODIE_FOLDER:
            continue
        if entry.name not in partitions or not entry.is_dir():
            found.append(entry.name)
            continue
        found += [f"{entry.name}/{f.name}" for f in entry.iterdir() if not (f.is_file() and _is_demo_data_file(f.name))]
    for entry in (path / HOODIE_FOLDER).iterdir():
        if entry.name not in _HOODIE_ENTRIES and parse_timeline_file_name(entry.name) is None:
            found.append(f"{HOODIE_FOLDER}/{entry.name}")
    return found


def not_demo_table(path: Path) -> str | None:
    """Why the demo must not delete the non-empty folder ``path``, or ``None`` when it
    holds a table the demo created and nothing else."""
    if path.is_symlink():
        return "a symbolic link"
    if not path.is_dir():
        return "a file"
    links = _links(path)
    if links:
        return f"symbolic links ({_names(links)})"
    mark = path.joinpath(*DEMO_MARK)
    if not mark.is_file() or mark.read_text(errors="replace") != DEMO_MARK_TEXT:
        if (path / HOODIE_FOLDER / PROPERTIES_FILE).is_file():
            return f"a Hudi table the demo did not create (no {'/'.join(DEMO_MARK)})"
        return foreign_contents(str(path), LocalStorage()) or f"a {HOODIE_FOLDER} folder the demo did not create"
    foreign = _foreign_entries(path)
    if foreign:
        return f"the demo's table and other files ({_names(foreign)})"
    return None


def prepare_table_folder(path: Path) -> None:
    """Make ``path`` an empty folder marked as the demo's: a folder that is missing or
    empty is used, the demo's own table is deleted first, anything else is refused (a
    one-line message and exit code 1; nothing is touched)."""
    if path.is_symlink() or path.exists() and (not path.is_dir() or any(path.iterdir())):
        why = not_demo_table(path)
        if why is not None:
            sys.exit(f"hoodie demo: refusing to use {path}: it holds {why}; the demo replaces only a table it created (choose another --path)")
        shutil.rmtree(path)
    path.mkdir(parents=True, exist_ok=True)
    mark = path.joinpath(*DEMO_MARK)
    mark.parent.mkdir(parents=True, exist_ok=True)
    mark.write_text(DEMO_MARK_TEXT)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument(
        "--path", default="demo-output/trips",
        help="table directory: missing or empty, or a table an earlier run of the demo created there (replaced)",
    )
    parser.add_argument("--in-process", action="store_true", help="no Spark: write and read in this process")
    parser.add_argument("--batches", type=int, default=6)
    parser.add_argument("--master", help="a Spark cluster to run on, e.g. spark://127.0.0.1:7077 (default: local Spark)")
    args = parser.parse_args(argv)
    prepare_table_folder(Path(args.path))
    console = Console(width=None if Console().is_terminal else 140)
    where = "in-process" if args.in_process else (f"Spark at {args.master}" if args.master else "local Spark")
    console.print(f"[bold]hoodie demo[/bold]: table at {Path(args.path).resolve()} ({where})")
    run(str(Path(args.path).resolve()), args.in_process, max(3, args.batches), console, args.master)


if __name__ == "__main__":
    main()
