"""Writers in turns: one table written by hoodie and Apache Hudi alternately, commit by
commit, as when a pipeline moves from one to the other without rewriting its table.

With Apache Hudi 0.15 (table version 6, like hoodie), over copy-on-write and
merge-on-read, partitioned hive-style and not: upserts, deletes, inserts and an
insert_overwrite from either side, with compaction (merge-on-read) and cleaning run
inline by each side, and Apache Hudi's metadata table (on by default) created on a table
hoodie wrote and dropped by hoodie's next write (with ``hoodie.metadata.enable=false``). After every write hoodie's reads equal
Apache Hudi's, and both equal the model. Each side rolls back a write the other left
unfinished (killed).

With Apache Hudi 1.2 told to keep the table's version (``hoodie.write.table.version=6``,
``hoodie.write.auto.upgrade=false``) the same turns, fewer of them: the table stays
version 6 (timeline layout 1) after every write, and each side compacts and cleans.
Without those options Apache Hudi 1.2 upgrades the table to version 9 when it writes to
it: hoodie then refuses to write it, naming the version, and changes no file.
"""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest
from hudi_oracle import HUDI_0_15, HUDI_1, Completed, HudiOracle, OracleError
from oracle_reads import check_reads, table_version
from sequences import SERVICES, Layout, Model, batch, record

import hoodie
from hoodie.config.properties import parse_properties
from hoodie.errors import UnsupportedTableError
from hoodie.services.cleaning import run_clean
from hoodie.table.table import HoodieTable

HOODIE, HUDI = "hoodie", "Apache Hudi"
Turn = tuple[str, str, list[dict[str, Any]]]  # (writer, operation, records)


def turns() -> list[Turn]:
    """Each writer upserts, deletes and inserts in turn; every update carries a larger
    ``ts`` than the stored record (so commit-time and event-time merging agree: Apache
    Hudi 0.15 merges by its write's payload, hoodie by the table's). With compaction every
    two delta commits, hoodie compacts after the 4th and 6th write, Apache Hudi after
    the 2nd; cleaning keeps two commits, so both sides clean."""
    return [
        (HOODIE, "bulk_insert", [record(n, 1) for n in range(24)]),
        (HUDI, "upsert", [record(n, 2) for n in range(0, 24, 3)] + [record(n, 1) for n in range(24, 28)]),
        (HOODIE, "delete", [record(n, 9) for n in (2, 5, 24, 99)]),
        (HOODIE, "upsert", [record(n, 3) for n in (0, 1, 4, 7, 25)] + [record(1, 4)]),
        (HUDI, "delete", [record(n, 9) for n in (8, 9, 25)]),
        (HOODIE, "insert", [record(n, 1) for n in range(30, 34)]),
        (HUDI, "upsert", [record(n, 5) for n in (0, 3, 30, 31)] + [record(n, 1) for n in (40, 41)]),
        (HOODIE, "upsert", [record(n, 6) for n in (0, 6, 12, 40)]),
        (HUDI, "insert_overwrite", [record(n, 7) for n in (1, 4, 31, 34)]),
        (HOODIE, "upsert", [record(n, 8) for n in (0, 3, 10, 34)]),
    ]


def timeline(path: Path) -> dict[str, str]:
    """Completed instants of a version-6 table: file name -> action."""
    folder = path / ".hoodie"
    if not folder.is_dir():
        return {}
    out = {}
    for p in folder.iterdir():
        stem, _, action = p.name.partition(".")
        if stem.isdigit() and action in ("commit", "deltacommit", "replacecommit", "clean", "rollback"):
            out[p.name] = action
    return out


def metadata_partitions(path: Path) -> str | None:
    props = parse_properties((path / ".hoodie" / "hoodie.properties").read_text())
    return props.get("hoodie.table.metadata.partitions")


def stays_version_6(path: Path) -> None:
    props = parse_properties((path / ".hoodie" / "hoodie.properties").read_text())
    assert (props["hoodie.table.version"], props["hoodie.timeline.layout.version"]) == ("6", "1"), props
    assert not (path / ".hoodie" / "timeline").exists(), "a layout-2 timeline folder appeared"


LAYOUTS = [Layout("COPY_ON_WRITE", "hive"), Layout("MERGE_ON_READ", "none")]
#: Apache Hudi 1.x writes a version-6 table as version 6, with these options; without
#: them its first write upgrades the table (see the last test)
KEEP_VERSION_6 = {"hoodie.write.table.version": "6", "hoodie.write.auto.upgrade": "false"}
#: how many of the turns each version takes: with 1.x the first five, the fewest in
#: which each side runs its services (hoodie compacts at the 3rd and cleans at the 3rd
#: on merge-on-read, the 4th on copy-on-write; Apache Hudi does both at the 5th); with
#: 0.15 all of them
TURNS = {HUDI_0_15: 10, HUDI_1: 5}
#: hoodie's turns drop the metadata table Apache Hudi's turns build (what this test is
#: about); with it on, hoodie keeps it (test_hudi_reads_our_metadata_table.py)
HOODIE_WITHOUT_MDT = {"hoodie.metadata.enable": "false"}


@pytest.mark.parametrize("layout", LAYOUTS, ids=[x.id for x in LAYOUTS])
@pytest.mark.parametrize("version", [HUDI_0_15, HUDI_1])
def test_hoodie_and_apache_hudi_write_in_turns(version: str, layout: Layout, hudi_oracle: Callable[[str], HudiOracle], tmp_path: Path) -> None:
    oracle = hudi_oracle(version)
    path = tmp_path / "table"
    # (Apache Hudi refuses hoodie.compact.inline on copy-on-write: "Compaction is not
    # supported on a CopyOnWrite table")
    extra = SERVICES if layout.is_mor else {k: v for k, v in SERVICES.items() if "compact" not in k}
    options = layout.options("in_turns", **extra)
    hudi_options = {**options, **(KEEP_VERSION_6 if version == HUDI_1 else {})}
    model = Model.of(layout)
    writes: list[Completed] = []
    services: dict[str, set[str]] = {HOODIE: set(), HUDI: set()}  # the services each side ran

    for n, (writer, op, records) in enumerate(turns()[: TURNS[version]]):
        before = timeline(path)
        if writer == HOODIE:
            instant = hoodie.write(batch(records), str(path), {**options, **HOODIE_WITHOUT_MDT, "hoodie.datasource.write.operation": op})
            done = Completed(instant, "", instant)  # (table version 6: completion is the instant)
            # hoodie leaves no metadata table for Apache Hudi to trust after its write
            assert not (path / ".hoodie" / "metadata").exists() and not metadata_partitions(path)
        else:
            completed = oracle.write(path, batch(records), {**hudi_options, "hoodie.datasource.write.operation": op})
            assert completed, f"Apache Hudi completed no instant for write {n} ({op})"
            done = completed[0]  # (an inline compaction completes after it)
            # Apache Hudi writes its metadata table by default, also on hoodie's table
            assert (path / ".hoodie" / "metadata").is_dir() and metadata_partitions(path)
        stays_version_6(path)
        ran = {action for name, action in timeline(path).items() if name not in before and not name.startswith(done.instant)}
        services[writer] |= ran
        model.apply(done.instant, op, records)
        writes.append(done)
        check_reads(oracle, path, layout, model, writes, f"write {n} ({op}) by {writer}")

    for writer, ran in services.items():
        assert "clean" in ran, f"{writer} cleaned nothing: it ran {sorted(ran)}"
        if layout.is_mor:
            assert "commit" in ran, f"{writer} compacted nothing: it ran {sorted(ran)}"


KILLED_WRITE = """
import os, signal, sys
import pyarrow.parquet as pq
import hoodie
from hoodie.timeline.active import ActiveTimeline

# killed after its files are written, before its instant completes
ActiveTimeline.transition_to_completed = lambda *a, **k: os.kill(os.getpid(), signal.SIGKILL)
hoodie.write(pq.read_table(sys.argv[2]), sys.argv[1], eval(sys.argv[3]))
"""


def pending(path: Path) -> list[str]:
    """The inflight writes of a version-6 table (an instant keeps its inflight file when
    it completes: ``<t>.inflight`` becomes ``<t>.commit``, ``<t>.<action>.inflight``
    ``<t>.<action>``)."""
    names = {p.name for p in (path / ".hoodie").iterdir()}
    completed = {n.removesuffix(".inflight") if n.count(".") == 2 else n.replace(".inflight", ".commit") for n in names if n.endswith(".inflight")}
    return sorted(n for n in completed if n not in names)


@pytest.mark.parametrize("version", [HUDI_0_15])
def test_each_side_rolls_back_the_others_killed_write(version: str, hudi_oracle: Callable[[str], HudiOracle], tmp_path: Path) -> None:
    """A hoodie write killed before it completes is rolled back by Apache Hudi's next
    write, and an Apache Hudi write killed midway (its JVM) by hoodie's next write; the
    killed writes' rows are never read. (Copy-on-write: on merge-on-read Apache Hudi
    0.15's own reads miss its next commit's log records after such a rollback, see
    docs/apache-hudi.md.)"""
    layout = Layout("COPY_ON_WRITE", "hive")
    oracle = hudi_oracle(version)
    path = tmp_path / "table"
    options = layout.options("killed")
    model = Model.of(layout)
    writes: list[Completed] = []

    def upsert(writer: str, records: list[dict[str, Any]]) -> None:
        step = {**options, "hoodie.datasource.write.operation": "upsert"}
        if writer == HOODIE:
            instant = hoodie.write(batch(records), str(path), step)
            done = Completed(instant, "", instant)
        else:
            done = hudi_oracle(version).write(path, batch(records), step)[0]
        model.apply(done.instant, "upsert", records)
        writes.append(done)
        check_reads(hudi_oracle(version), path, layout, model, writes, f"upsert {len(writes)} by {writer}")
        assert not pending(path)

    upsert(HOODIE, [record(n, 1) for n in range(12)])

    # hoodie killed: its log files are written, its instant is left inflight
    data = tmp_path / "killed.parquet"
    pq.write_table(batch([record(n, 5) for n in range(0, 12, 2)] + [record(50, 5)]), data)
    step = {**options, "hoodie.datasource.write.operation": "upsert"}
    killed = subprocess.run([sys.executable, "-c", KILLED_WRITE, str(path), str(data), repr(step)], env=_env(), capture_output=True, text=True, timeout=300)
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    assert pending(path), "the killed hoodie write left nothing pending"
    upsert(HUDI, [record(n, 2) for n in (1, 3, 20)])
    assert any(p.name.endswith(".rollback") for p in (path / ".hoodie").iterdir()), "Apache Hudi rolled nothing back"

    # Apache Hudi killed midway: its JVM is killed once its write is inflight
    results: list[BaseException | list[Completed]] = []
    writer = threading.Thread(target=lambda: _catch(results, lambda: oracle.write(path, batch([record(n, 6) for n in range(6)] + [record(60, 6)]), step)))
    writer.start()
    deadline = time.monotonic() + 240
    while not pending(path) and writer.is_alive() and time.monotonic() < deadline:
        time.sleep(0.05)
    oracle.kill()
    writer.join()
    assert pending(path), f"Apache Hudi's write was not caught inflight: {results}"
    assert isinstance(results[0], OracleError)
    rollbacks = len([p for p in (path / ".hoodie").iterdir() if p.name.endswith(".rollback")])
    upsert(HOODIE, [record(n, 7) for n in (2, 4, 21)])  # (a new Apache Hudi process reads)
    assert len([p for p in (path / ".hoodie").iterdir() if p.name.endswith(".rollback")]) == rollbacks + 1, "hoodie rolled nothing back"


def _catch(results: list[BaseException | list[Completed]], call: Callable[[], list[Completed]]) -> None:
    try:
        results.append(call())
    except BaseException as exc:  # (reported by the test's thread)
        results.append(exc)


def _env() -> dict[str, str]:
    src = str(Path(hoodie.__file__).resolve().parents[1])
    return {**os.environ, "PYTHONPATH": src + os.pathsep + os.environ.get("PYTHONPATH", "")}


def files(path: Path) -> dict[str, bytes]:
    return {str(p.relative_to(path)): p.read_bytes() for p in sorted(path.rglob("*")) if p.is_file()}


@pytest.mark.parametrize("version", [HUDI_1])
def test_hoodie_refuses_to_write_a_table_apache_hudi_1_upgraded(version: str, hudi_oracle: Callable[[str], HudiOracle], tmp_path: Path) -> None:
    """Apache Hudi 1.x upgrades the version-6 table hoodie wrote to version 9 when it writes
    to it; hoodie then refuses to write or clean it, naming the version, and changes no
    file; both still read it as the model says."""
    layout = Layout("MERGE_ON_READ", "hive")
    oracle = hudi_oracle(version)
    path = tmp_path / "table"
    options = {**layout.options("upgraded"), "hoodie.datasource.write.operation": "upsert"}
    model = Model.of(layout)
    writes: list[Completed] = []
    for writer, records in ((HOODIE, [record(n, 1) for n in range(12)]), (HUDI, [record(n, 2) for n in (0, 4, 20)])):
        if writer == HOODIE:
            instant = hoodie.write(batch(records), str(path), options)
            done = Completed(instant, "", instant)
        else:
            done = oracle.write(path, batch(records), options)[0]
        model.apply(done.instant, "upsert", records)
        writes.append(done)
        check_reads(oracle, path, layout, model, writes[-1:], f"upsert {len(writes)} by {writer}")
    assert table_version(path) == 9

    before = files(path)
    with pytest.raises(UnsupportedTableError, match="version 9 table; hoodie writes version 6 only"):
        hoodie.write(batch([record(n, 3) for n in (1, 2)]), str(path), options)
    with pytest.raises(UnsupportedTableError, match="version 9 table and hoodie writes version 6 tables only"):
        run_clean(HoodieTable.open(str(path)))
    assert files(path) == before, "hoodie changed the table it refused"
    check_reads(oracle, path, layout, model, writes[-1:], "the refused write")
