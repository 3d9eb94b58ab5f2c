"""Writers that ignore the one-writer-at-a-time rule get the truth: three processes write
to one table at once in the default single-writer mode. Each write either lands, or fails
with :class:`ConcurrentWriteError` saying another writer rolled it back; the table then
reads exactly the rows of the writes that landed, and nothing of the others is left (no
pending instant, data file, marker or claim)."""
from __future__ import annotations

import json
import re
import socket
import subprocess
import sys
import time
from pathlib import Path

import pyarrow as pa
import pytest
from table_options import trip_options

import hoodie
from hoodie.errors import ConcurrentWriteError
from hoodie.index.bucket import BucketSpec, bucket_ids, bucket_of_file_id
from hoodie.metadata_table.validate import validate_metadata_table
from hoodie.services.for_writers import WRITER_SERVICES
from hoodie.table.table import HoodieTable
from hoodie.timeline import write_claims
from hoodie.writer.transaction import WriteTransaction

pytestmark = pytest.mark.slow

WRITERS, COMMITS, ROWS = 3, 4, 3000
BUCKETS = 4

CHILD = """
import json, sys, time
import pyarrow as pa
import hoodie
path, writer, commits, rows, start = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), float(sys.argv[5])
options = json.loads(sys.argv[6])
while time.time() < start:
    time.sleep(0.005)
for n in range(commits):
    keys = [f"w{writer}-c{n}-{k}" for k in range(rows)]
    batch = pa.table({"uuid": keys, "city": [("sf", "nyc", "la")[k % 3] for k in range(rows)], "ts": [n] * rows, "fare": [float(k) for k in range(rows)]})
    try:
        instant = hoodie.write(batch, path, options)
        print(json.dumps({"batch": [writer, n], "instant": instant}), flush=True)
    except Exception as e:
        print(json.dumps({"batch": [writer, n], "error": type(e).__name__, "message": str(e)}), flush=True)
"""

LOST = (
    r"write \d{17} \(upsert\) to .* ("
    r"was rolled back by another writer, which found it unfinished and treated it as failed"
    r"|was not committed: write \d{17} of another writer completed while it ran and "
    r"(changed the same file groups|wrote to the same buckets) \([^)]*\)"
    r"); a table takes one writer at a time \(hoodie.write.concurrency.mode=SINGLE_WRITER, the only mode hoodie supports\)\. "
    r"Nothing of this write was committed and its files were removed; run it again once the other writer is done"
)


@pytest.mark.parametrize("table_type, index", [("COPY_ON_WRITE", "BLOOM"), ("MERGE_ON_READ", "BLOOM"), ("COPY_ON_WRITE", "BUCKET")])
def test_concurrent_single_mode_writers_land_or_say_they_were_rolled_back(tmp_path: Path, table_type: str, index: str) -> None:
    path = str(tmp_path / "t")
    # the metadata table on (the default), compacting itself every few delta commits: its
    # delta commits, compactions and cleans race as much as the data commits do; with the
    # bucket index, the writers also race to create the first file group of every bucket
    buckets = {"hoodie.index.type": index, "hoodie.bucket.index.num.buckets": str(BUCKETS)} if index == "BUCKET" else {}
    options = trip_options(**{"hoodie.datasource.write.table.type": table_type, "hoodie.metadata.compact.max.delta.commits": "3", **buckets})
    start = time.time() + 3
    children = [
        subprocess.Popen(
            [sys.executable, "-c", CHILD, path, str(w), str(COMMITS), str(ROWS), str(start), json.dumps(options)],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )
        for w in range(WRITERS)
    ]
    outcomes = []
    for child in children:
        out, err = child.communicate(timeout=300)
        assert child.returncode == 0, err
        outcomes += [json.loads(line) for line in out.splitlines()]
    assert len(outcomes) == WRITERS * COMMITS
    landed = [o for o in outcomes if "instant" in o]
    failed = [o for o in outcomes if "error" in o]
    for o in failed:
        assert o["error"] == ConcurrentWriteError.__name__, o
        assert re.fullmatch(LOST, o["message"]), o["message"]
    assert landed and failed, outcomes  # both ways out were taken

    table = hoodie.read(path)
    expected = sorted(f"w{w}-c{n}-{k}" for w, n in (o["batch"] for o in landed) for k in range(ROWS))
    got = sorted(table.column("uuid").to_pylist())
    missing, extra = sorted(set(expected) - set(got)), sorted(set(got) - set(expected))
    assert (missing[:3], extra[:3], len(got)) == ([], [], len(expected)), (outcomes, sorted({k.rsplit("-", 1)[0] for k in missing + extra}))
    assert sorted(set(table.column("_hoodie_commit_time").to_pylist())) == sorted(o["instant"] for o in landed)
    if index == "BUCKET":  # one file group a bucket, holding only its keys
        spec = BucketSpec(BUCKETS, ("uuid",))
        placed = zip(table.column("_hoodie_file_name").to_pylist(), bucket_ids(table.column("_hoodie_record_key"), spec).tolist())
        assert all(bucket_of_file_id(name) == b for name, b in placed)
        view = HoodieTable.open(path).view()
        for city in view.all_partition_paths():
            ids = [g.file_id for g in view.file_groups(city)]
            assert len({bucket_of_file_id(f) for f in ids}) == len(ids), (city, ids)

    # nothing of the failed writes is left
    hoodie_dir = Path(path) / ".hoodie"
    pending = [p.name for p in hoodie_dir.iterdir() if p.name.endswith((".requested", ".inflight")) and not _completed(hoodie_dir, p.name)]
    assert pending == []
    landed_instants = {o["instant"] for o in landed}
    base_files = [p for p in Path(path).rglob("*.parquet") if ".hoodie" not in p.parts]
    assert {p.name.rsplit("_", 1)[-1].split(".")[0] for p in base_files} <= landed_instants
    assert not any((hoodie_dir / ".temp").iterdir())
    claims = hoodie_dir / ".aux" / ".claims"
    assert not claims.exists() or not any(claims.iterdir())
    # the metadata table holds exactly what storage does
    report = validate_metadata_table(HoodieTable.open(path))
    assert report.ok, (report.differences[:5], report.out_of_sync)


def _completed(hoodie_dir: Path, name: str) -> bool:
    stem, action = name.split(".")[0], name.split(".")[1]
    return (hoodie_dir / f"{stem}.{action}").exists() or (hoodie_dir / f"{stem}.commit").exists()


def _inflight_write(path: str) -> tuple[HoodieTable, WriteTransaction]:
    hoodie.write(pa.table({"uuid": ["a"], "city": ["sf"], "ts": [1], "fare": [1.0]}), path, trip_options())
    table = HoodieTable.open(path)
    txn = WriteTransaction.begin(table, "upsert", WRITER_SERVICES)
    txn.mark_inflight()
    return table, txn


def test_a_rolled_back_write_is_named_before_its_commit(tmp_path: Path) -> None:
    """The commit step itself refuses when another writer has taken the instant for a
    rollback: the completed instant is never written."""
    path = str(tmp_path / "t")
    table, txn = _inflight_write(path)
    assert write_claims.claim(table.storage, path, txn.instant_time, write_claims.ROLLBACK).ours
    with pytest.raises(ConcurrentWriteError, match=f"write {txn.instant_time} \\(upsert\\) to .* was rolled back by another writer"):
        txn.commit([], table.data_schema())
    assert txn.instant_time not in {i.timestamp for i in table.timeline.reload().completed()}


def test_a_commit_never_takes_over_the_claim_of_a_rollback_that_died(tmp_path: Path) -> None:
    """A rollback killed midway may have deleted files of the instant: its claim, though
    abandoned, still keeps the instant's writer from committing (another rollback resumes
    it instead)."""
    path = str(tmp_path / "t")
    table, txn = _inflight_write(path)
    claims = Path(path) / ".hoodie" / ".aux" / ".claims"
    claims.mkdir(parents=True, exist_ok=True)
    (claims / txn.instant_time).write_text(f"rollback {time.time():.3f} {socket.gethostname()} 999999999")  # no such process
    with pytest.raises(ConcurrentWriteError, match=f"write {txn.instant_time} \\(upsert\\) to .* was rolled back by another writer"):
        txn.commit([], table.data_schema())
    assert txn.instant_time not in {i.timestamp for i in table.timeline.reload().completed()}
    assert write_claims.claim(table.storage, path, txn.instant_time, write_claims.ROLLBACK).ours  # a rollback does take it over


CLEANER = """
import json, sys, time
from pathlib import Path
from hoodie.metadata_table.services import MetadataServiceSettings, run_table_services
from hoodie.config.options import HoodieConfig
from hoodie.services.clean_plan import CleanPolicy, CleanSettings
from hoodie.services.cleaning import clean
from hoodie.services.for_metadata import METADATA_SERVICES
from hoodie.services.opening import open_for_services
path, done, options = sys.argv[1], Path(sys.argv[2]), json.loads(sys.argv[3])
settings = CleanSettings(policy=CleanPolicy("KEEP_LATEST_COMMITS"), commits_retained=1)
while not (Path(path) / ".hoodie" / "metadata" / ".hoodie" / "hoodie.properties").exists():
    time.sleep(0.01)
cleans = services = 0
while not done.exists():
    table = open_for_services(path, options)
    cleans += bool(getattr(clean(table, settings), "ran", False))
    services += len(run_table_services(table, MetadataServiceSettings.of(HoodieConfig.of(options)), METADATA_SERVICES).compactions)
print(json.dumps({"cleans": cleans, "compactions": services}), flush=True)
"""

WRITER = """
import json, sys
import pyarrow as pa
import hoodie
path, done, commits, options = sys.argv[1], sys.argv[2], int(sys.argv[3]), json.loads(sys.argv[4])
instants = []
for n in range(commits):
    # the same keys each time: every commit leaves older slices for the cleaner
    batch = pa.table({"uuid": [f"k{k}" for k in range(600)], "city": [("sf", "nyc", "la")[k % 3] for k in range(600)],
                      "ts": [n] * 600, "fare": [float(n)] * 600})
    instants.append(hoodie.write(batch, path, options))
open(done, "w").close()
print(json.dumps(instants), flush=True)
"""


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_a_writer_and_a_cleaner_in_two_processes_keep_the_metadata_table_valid(tmp_path: Path, table_type: str) -> None:
    """A writer and a process cleaning the table (and running the metadata table's own
    services) at the same time: every change of the metadata table is made under the
    commit lock, so neither fails on a delta commit or log file of the other, and the
    metadata table afterwards holds exactly what storage holds."""
    path, done = str(tmp_path / "t"), str(tmp_path / "writer-done")
    options = trip_options(**{
        "hoodie.datasource.write.table.type": table_type,
        "hoodie.clean.automatic": "false",  # the other process cleans
        "hoodie.metadata.compact.max.delta.commits": "2",
        "hoodie.metadata.index.column.stats.enable": "true",
        "hoodie.metadata.record.index.enable": "true",
        "hoodie.compact.inline.max.delta.commits": "2",
    })
    hoodie.write(pa.table({"uuid": ["k0"], "city": ["sf"], "ts": [0], "fare": [0.0]}), path, options)  # the table and its metadata table
    cleaner = subprocess.Popen([sys.executable, "-c", CLEANER, path, done, json.dumps(options)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    writer = subprocess.Popen([sys.executable, "-c", WRITER, path, done, "8", json.dumps(options)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    written, werr = writer.communicate(timeout=600)
    if writer.returncode != 0:
        Path(done).touch()  # let the cleaner stop
    cleaned, cerr = cleaner.communicate(timeout=600)
    assert writer.returncode == 0, werr
    assert cleaner.returncode == 0, cerr
    instants, ran = json.loads(written), json.loads(cleaned)
    assert ran["cleans"] > 0, ran  # the two did overlap

    table = HoodieTable.open(path)
    assert set(instants) <= {i.timestamp for i in table.timeline.completed()}
    rows = hoodie.read(path)
    assert rows.num_rows == 600 and set(rows.column("fare").to_pylist()) == {7.0}
    report = validate_metadata_table(table)
    assert report.ok, (report.differences[:5], report.out_of_sync)
