"""Tables that exercise every file-system view endpoint, written by hoodie (table version
6), and the requests Apache Hudi's ``RemoteHoodieTableFileSystemView`` can make of a
timeline server on them, with the parameters each takes.

- copy-on-write, partitions ``city=sf`` and ``city=la``: three writes, a clean that
  removes the first write's slices, an ``insert_overwrite`` of ``sf`` (its file groups
  replaced, still on storage), an upsert of ``la``;
- merge-on-read, the same partitions: an insert, two upserts (log files), a completed
  compaction, an upsert, a pending compaction, an upsert whose logs open the slice of the
  pending compaction, and a write killed before it completed (its files left in place).
"""
from __future__ import annotations

import hashlib
import itertools
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from hudi_oracle import HudiOracle

import hoodie
from hoodie.layout import parse_base_file_name, parse_log_file_name
from hoodie.services import CleanSettings, CompactionSettings, clean, run_compaction, schedule_compaction
from hoodie.table.table import HoodieTable
from hoodie.writer.transaction import WriteTransaction

VIEW = "/v1/hoodie/view/"
MARKER = "/v1/hoodie/marker/"
OPTIONS = {
    "hoodie.table.name": "views",
    "hoodie.datasource.write.recordkey.field": "uuid",
    "hoodie.datasource.write.partitionpath.field": "city",
    "hoodie.datasource.write.precombine.field": "ts",
    "hoodie.datasource.write.hive_style_partitioning": "true",
    "hoodie.index.bloom.num_entries": "1000",
    "hoodie.clean.automatic": "false",
    "hoodie.archive.automatic": "false",
    # the views of tables listed from storage: these tests compare the view endpoints of two
    # servers, and the library's clean and compaction below open the table plainly
    "hoodie.metadata.enable": "false",
}
MOR = {"hoodie.datasource.write.table.type": "MERGE_ON_READ", "hoodie.compact.inline": "false"}


def _batch(keys: range, ts: int, city: str) -> pa.Table:
    names = [f"k{n:03d}" for n in keys]
    return pa.table({"uuid": names, "city": [city] * len(names), "ts": [ts] * len(names), "fare": [float(ts)] * len(names)})


def _write(path: Path, options: dict[str, str], op: str, *parts: pa.Table) -> str:
    return hoodie.write(pa.concat_tables(parts), str(path), {**options, "hoodie.datasource.write.operation": op})


def copy_on_write(path: Path) -> None:
    options = dict(OPTIONS)
    _write(path, options, "insert", _batch(range(0, 6), 1, "sf"), _batch(range(10, 16), 1, "la"))
    _write(path, options, "upsert", _batch(range(0, 3), 2, "sf"), _batch(range(10, 13), 2, "la"))
    _write(path, options, "upsert", _batch(range(3, 6), 3, "sf"), _batch(range(13, 16), 3, "la"))
    cleaned = clean(HoodieTable.open(str(path)), CleanSettings(commits_retained=1))
    assert getattr(cleaned, "deleted", None), f"nothing cleaned: {cleaned}"
    _write(path, options, "insert_overwrite", _batch(range(20, 23), 4, "sf"))
    _write(path, options, "upsert", _batch(range(10, 12), 5, "la"))


def merge_on_read(path: Path) -> None:
    options = {**OPTIONS, **MOR}
    _write(path, options, "insert", _batch(range(0, 6), 1, "sf"), _batch(range(10, 16), 1, "la"))
    _write(path, options, "upsert", _batch(range(0, 3), 2, "sf"), _batch(range(10, 13), 2, "la"))
    _write(path, options, "upsert", _batch(range(3, 6), 3, "sf"))
    compaction, _ = schedule_compaction(HoodieTable.open(str(path)), CompactionSettings(max_delta_commits=1))
    assert compaction is not None
    run_compaction(HoodieTable.open(str(path)), compaction)
    _write(path, options, "upsert", _batch(range(0, 2), 4, "sf"), _batch(range(13, 15), 4, "la"))
    pending, _ = schedule_compaction(HoodieTable.open(str(path)), CompactionSettings(max_delta_commits=1))
    assert pending is not None
    _write(path, options, "upsert", _batch(range(2, 4), 5, "sf"), _batch(range(30, 32), 5, "la"))

    # a write killed after writing its files: pending, its files on storage
    def die(self: WriteTransaction, *args: Any, **kwargs: Any) -> None:
        raise RuntimeError("writer killed before completing")

    with pytest.MonkeyPatch.context() as patched:
        patched.setattr(WriteTransaction, "commit", die)
        patched.setattr(WriteTransaction, "abort", lambda self: None)
        with pytest.raises(RuntimeError, match="writer killed"):
            _write(path, options, "upsert", _batch(range(4, 6), 6, "sf"), _batch(range(40, 42), 6, "la"))


def client_params(path: Path) -> dict[str, str]:
    """What Apache Hudi's client adds to every view request: the base path, and the last
    instant and hash of its timeline (completed instants and compactions)."""
    timeline = HoodieTable.open(str(path)).timeline
    instants = [i for i in timeline.instants if i.is_completed or i.action in ("compaction", "logcompaction")]
    digest = hashlib.sha256()
    for i in instants:
        digest.update(f"{i.timestamp}_{i.action}_{i.state.value}".encode())
    return {"basepath": str(path), "lastinstantts": instants[-1].timestamp, "timelinehash": digest.hexdigest()}


def _table_files(path: Path) -> tuple[list[str], list[str]]:
    """(file ids, instants named by data files) of the table's partitions."""
    ids, instants = set(), set()
    for f in path.rglob("*"):
        if ".hoodie" in f.relative_to(path).parts or f.name.endswith(".crc"):
            continue
        base, log = parse_base_file_name(f.name), parse_log_file_name(f.name)
        if base is not None:
            ids.add(base.file_id)
            instants.add(base.instant)
        elif log is not None:
            ids.add(log.file_id)
            instants.add(log.instant)
    return sorted(ids), sorted(instants)


Request = tuple[str, str, dict[str, str]]


def requests(path: Path, hudi_1: bool) -> Iterator[Request]:
    """(method, endpoint, parameters) of every view request of Apache Hudi's client (1.x's
    too when ``hudi_1``), with every partition, file id and instant the table names (and
    one instant before and after them all)."""
    timeline = HoodieTable.open(str(path)).timeline
    file_ids, file_instants = _table_files(path)
    instants = sorted({i.timestamp for i in timeline.instants} | set(file_instants))
    instants = ["00000000000000000", *instants, "99991231235959999"]
    completed = [i.timestamp for i in timeline.instants if i.is_completed]
    for endpoint in ("timeline/instant/last", "timeline/instants/all", "timeline/instants/last", "compactions/pending/",
                     "logcompactions/pending/", "clustering/pending/", "datafiles/all/latest/"):
        yield "GET", endpoint, {}
    # (a partition with a trailing slash is not asked for: Apache Hudi 1.2 trims it for most
    # requests, but not for slices/partition/latest/inflight/, which then loads it a second time)
    for p in ["city=sf", "city=la", "city=none"]:
        yield from _partition_requests(p, file_ids, instants, hudi_1)
    for t in instants:
        yield "GET", "slices/all/beforeoron/latest/", {"maxinstant": t}
        yield "GET", "basefiles/all/beforeoron/", {"maxinstant": t}
    writes = [i.timestamp for i in timeline.instants if i.is_completed and i.action in ("commit", "deltacommit", "replacecommit")]
    for chosen in [*([t] for t in writes), *itertools.combinations(writes, 2), writes, completed]:
        for endpoint in ("datafiles/range/latest/", "slices/range/latest/"):
            yield "GET", endpoint, {"instants": ",".join(chosen)}
    yield "POST", "loadpartitions/", {"partitions": json.dumps(["city=sf", "city=la"])}
    yield "POST", "loadallpartitions/", {}
    yield "POST", "refresh/", {}


def _partition_requests(p: str, file_ids: list[str], instants: list[str], hudi_1: bool) -> Iterator[Request]:
    """The requests about partition ``p``."""
    for endpoint in ("datafiles/latest/partition", "datafiles/all", "slices/partition/latest/", "slices/partition/latest/stateless/",
                     "slices/uncompacted/partition/latest/", "slices/all", "filegroups/all/partition/",
                     "filegroups/all/partition/stateless/", "filegroups/replaced/partition/"):
        yield "GET", endpoint, {"partition": p}
    if hudi_1:
        yield "GET", "slices/partition/latest/inflight/", {"partition": p}
    for f in file_ids:
        yield "GET", "datafile/latest/partition", {"partition": p, "fileid": f}
        yield "GET", "slices/file/latest/", {"partition": p, "fileid": f}
    for t in instants:
        yield "GET", "datafiles/beforeoron/latest/", {"partition": p, "maxinstant": t}
        yield "GET", "slices/merged/beforeoron/latest/", {"partition": p, "maxinstant": t}
        for pending in ("true", "false"):
            yield "GET", "slices/beforeoron/latest/", {"partition": p, "maxinstant": t, "includependingcompaction": pending}
        for kind in ("before/", "beforeoron/"):
            yield "GET", "filegroups/replaced/" + kind, {"partition": p, "maxinstant": t}
        yield "GET", "filegroups/replaced/afteroron/", {"partition": p, "mininstant": t}
        for f in file_ids:
            yield "GET", "datafile/on/latest/", {"partition": p, "instant": t, "fileid": f}
            if hudi_1:
                yield "GET", "slice/merged/beforeoron/latest/", {"partition": p, "maxinstant": t, "fileid": f}
        if hudi_1:
            for current in instants[-4:]:
                yield "GET", "slices/merged/beforeoron/inflight/latest/", {"partition": p, "maxinstant": t, "currentinstant": current}


def merge_on_read_by_hudi(oracle: HudiOracle, path: Path) -> None:
    """The merge-on-read table's life written by Apache Hudi (1.x: table version 9, log
    files placed in slices by when their writes completed): an insert, two upserts and an
    inline compaction, an upsert, an upsert that schedules a compaction without running
    it, and an upsert after it."""
    options = {
        **{k: v for k, v in OPTIONS.items() if k != "hoodie.index.bloom.num_entries"},
        "hoodie.datasource.write.table.type": "MERGE_ON_READ",
        "hoodie.metadata.enable": "false",
        "hoodie.compact.inline": "true",
        "hoodie.compact.inline.max.delta.commits": "3",
    }
    schedule_only = {"hoodie.compact.inline": "false", "hoodie.compact.schedule.inline": "true", "hoodie.compact.inline.max.delta.commits": "1"}
    writes = [
        ("insert", [_batch(range(0, 6), 1, "sf"), _batch(range(10, 16), 1, "la")], {}),
        ("upsert", [_batch(range(0, 3), 2, "sf"), _batch(range(10, 13), 2, "la")], {}),
        ("upsert", [_batch(range(3, 6), 3, "sf")], {}),  # the third delta commit: compacted inline
        ("upsert", [_batch(range(0, 2), 4, "sf"), _batch(range(13, 15), 4, "la")], schedule_only),
        ("upsert", [_batch(range(2, 4), 5, "sf"), _batch(range(30, 32), 5, "la")], {"hoodie.compact.inline": "false"}),
    ]
    for op, parts, extra in writes:
        oracle.write(path, pa.concat_tables(parts), {**options, **extra, "hoodie.datasource.write.operation": op})
    timeline = HoodieTable.open(str(path)).timeline
    assert [i for i in timeline.instants if i.action == "commit" and i.is_completed], "Apache Hudi compacted nothing"
    assert [i for i in timeline.instants if i.action == "compaction" and not i.is_completed], "Apache Hudi scheduled no compaction"
