"""Instant files that table services write, decoded straight from their bytes with fastavro
(no hoodie decoder): the compaction plan lists exactly the slices that have log files, as
found by listing the partitions, and the rollback metadata names the failed instant and
the files its rollback deleted or neutralised. Their writer schemas are checked against
the ones Apache Hudi itself wrote into the conformance tables: Java must be able to read
what hoodie writes."""
from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

import fastavro
import pyarrow as pa
import pytest
from table_options import MOR_TRIPS

import hoodie
from hoodie.services.compaction import UNBOUNDED_STRATEGY, CompactionSettings, schedule_compaction
from hoodie.table.table import HoodieTable
from hoodie.writer.transaction import WriteTransaction

OPTS = {**MOR_TRIPS, "hoodie.clean.automatic": "false", "hoodie.archive.automatic": "false"}
BASE_RE = re.compile(r"^([^._][^_]*)_([0-9]+-[0-9]+-[0-9]+)_([0-9]{17})\.parquet$")
LOG_RE = re.compile(r"^\.([^_]+)_([0-9]{17})\.log\.([0-9]+)_([0-9]+-[0-9]+-[0-9]+)$")


def decode(path: Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """(writer schema, records) of an Avro object container file."""
    with open(path, "rb") as f:
        reader = fastavro.reader(f)
        return reader.writer_schema, list(reader)


def trips(records: list[tuple[str, str, int, float]]) -> pa.Table:
    uuid, city, ts, fare = zip(*records)
    return pa.table({"uuid": list(uuid), "city": list(city), "ts": pa.array(ts, pa.int64()), "fare": list(fare)})


def data_files(path: str) -> dict[str, int]:
    """Every base and log file outside ``.hoodie`` (absolute path -> size)."""
    out = {}
    for d, dirs, files in os.walk(path):
        dirs[:] = [x for x in dirs if x != ".hoodie"]
        for f in files:
            if BASE_RE.match(f) or LOG_RE.match(f):
                out[os.path.join(d, f)] = os.path.getsize(os.path.join(d, f))
    return out


def slices_with_logs(path: str) -> set[tuple]:
    """(partition, file id, base instant, base file name, log file names) of each latest
    slice that has log files, from a listing of the partition folders."""
    groups: dict[tuple[str, str], dict[str, Any]] = {}
    for full in data_files(path):
        partition = os.path.relpath(os.path.dirname(full), path)
        partition = "" if partition == "." else partition
        name = os.path.basename(full)
        if m := BASE_RE.match(name):
            g = groups.setdefault((partition, m.group(1)), {"bases": {}, "logs": {}})
            g["bases"][m.group(3)] = name
        elif m := LOG_RE.match(name):
            g = groups.setdefault((partition, m.group(1)), {"bases": {}, "logs": {}})
            g["logs"].setdefault(m.group(2), []).append(name)
    out = set()
    for (partition, file_id), g in groups.items():
        latest = max(g["bases"])
        logs = g["logs"].get(latest, [])
        if logs:
            out.add((partition, file_id, latest, g["bases"][latest], tuple(sorted(logs))))
    return out


def strip_java(node: Any) -> Any:
    """A writer schema without what only Java's copy carries (string annotations, docs, a
    "default" inside an array type, which Avro ignores), with named types by short names."""
    if isinstance(node, dict):
        out = {k: strip_java(v) for k, v in node.items() if k not in ("avro.java.string", "doc")}
        if out.get("type") in ("array", "map") and "name" not in out:
            out.pop("default", None)
        if isinstance(out.get("name"), str) and out.get("type") in ("record", "enum", "fixed"):
            out["name"] = out["name"].rsplit(".", 1)[-1]
        out.pop("namespace", None)
        if set(out) == {"type"} and isinstance(out["type"], str):
            return out["type"]
        return out
    if isinstance(node, list):
        return [strip_java(v) for v in node]
    if isinstance(node, str):
        return node.rsplit(".", 1)[-1] if node.startswith("org.apache.hudi.avro.model.") else node
    return node


def record_fields(schema: dict) -> dict[str, Any]:
    return {f["name"]: f for f in schema["fields"]}


def find_record(node: Any, name: str) -> dict | None:
    if isinstance(node, dict):
        if node.get("type") == "record" and str(node.get("name", "")).rsplit(".", 1)[-1] == name:
            return node
        for v in node.values():
            if (found := find_record(v, name)) is not None:
                return found
    if isinstance(node, list):
        for v in node:
            if (found := find_record(v, name)) is not None:
                return found
    return None


# --- compaction plan ------------------------------------------------------------------------


def build_mor_with_logs(path: str) -> None:
    """sf and nyc get log files (sf two), la keeps a base file only."""
    hoodie.write(trips([(f"u{i}", ("sf", "nyc", "la")[i % 3], 1, float(i)) for i in range(9)]), path, OPTS)
    hoodie.write(trips([("u0", "sf", 2, 100.0), ("u1", "nyc", 2, 101.0)]), path, OPTS)
    hoodie.write(trips([("u3", "sf", 3, 103.0)]), path, OPTS)
    hoodie.write(trips([("u4", "nyc", 9, 0.0)]), path, {**OPTS, "hoodie.datasource.write.operation": "delete"})


def test_compaction_plan_decodes_to_the_slices_with_logs(tmp_path: Path) -> None:
    path = str(tmp_path / "mor")
    build_mor_with_logs(path)
    expected = slices_with_logs(path)
    assert sorted((p, len(logs)) for p, _, _, _, logs in expected) == [("nyc", 2), ("sf", 2)]
    assert "la" in os.listdir(path), "la has a slice, without logs, so no operation"

    instant, _ = schedule_compaction(HoodieTable.open(path), CompactionSettings(strategy=UNBOUNDED_STRATEGY), require_threshold=False)
    assert instant
    requested = Path(path) / ".hoodie" / f"{instant}.compaction.requested"
    schema, records = decode(requested)
    assert schema["name"] == "org.apache.hudi.avro.model.HoodieCompactionPlan"
    assert len(records) == 1
    plan = records[0]
    assert plan["version"] == 2  # file names, not paths, in the operations
    ops = plan["operations"]
    got = {(op["partitionPath"], op["fileId"], op["baseInstantTime"], op["dataFilePath"], tuple(sorted(op["deltaFilePaths"]))) for op in ops}
    assert got == expected
    assert len(ops) == len(expected)
    sizes = {os.path.basename(f): s for f, s in data_files(path).items()}
    for op in ops:
        assert op["bootstrapFilePath"] is None
        assert set(op["metrics"]) == {"TOTAL_LOG_FILES", "TOTAL_LOG_FILES_SIZE", "TOTAL_IO_READ_MB", "TOTAL_IO_WRITE_MB", "TOTAL_IO_MB"}
        assert op["metrics"]["TOTAL_LOG_FILES"] == float(len(op["deltaFilePaths"]))
        assert op["metrics"]["TOTAL_LOG_FILES_SIZE"] == float(sum(sizes[n] for n in op["deltaFilePaths"]))


def test_compaction_plan_schema_is_readable_as_apache_hudis(tmp_path: Path, conformance_table) -> None:
    """Java reads a plan with its own schema as reader schema: every operation field Java
    has must be written by hoodie with the same type, and every plan field hoodie leaves out
    must have a default in Java's schema (v9_txns_simple_meta holds a Java-written plan)."""
    java_path = conformance_table("sample_table/mor/avro/v9_txns_simple_meta")
    (java_file,) = (Path(java_path) / ".hoodie" / "timeline").glob("*.compaction.requested")
    java_schema, java_records = decode(java_file)
    assert java_records[0]["operations"], "the Java plan lists operations"
    path = str(tmp_path / "mor")
    build_mor_with_logs(path)
    instant, _ = schedule_compaction(HoodieTable.open(path), CompactionSettings(strategy=UNBOUNDED_STRATEGY), require_threshold=False)
    ours, _ = decode(Path(path) / ".hoodie" / f"{instant}.compaction.requested")

    java_op = record_fields(strip_java(find_record(java_schema, "HoodieCompactionOperation")))
    our_op = record_fields(strip_java(find_record(ours, "HoodieCompactionOperation")))
    assert our_op == java_op
    java_plan, our_plan = record_fields(strip_java(java_schema)), record_fields(strip_java(ours))
    assert set(our_plan) <= set(java_plan)
    assert all("default" in java_plan[f] for f in set(java_plan) - set(our_plan)), set(java_plan) - set(our_plan)
    for name in our_plan.keys() - {"operations"}:
        assert our_plan[name] == java_plan[name], name
    # the metrics Java records are the ones hoodie records
    assert set(java_records[0]["operations"][0]["metrics"]) == set(
        decode(Path(path) / ".hoodie" / f"{instant}.compaction.requested")[1][0]["operations"][0]["metrics"]
    )


# --- rollback metadata ----------------------------------------------------------------------


@pytest.fixture
def rolled_back(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """A MOR table whose second write failed before completing and was left inflight (its
    files written: a log file of an update, base files of inserts); the third write rolled
    it back. Returns what the test needs to know, found by listing files."""
    path = str(tmp_path / "mor")
    hoodie.write(trips([(f"u{i}", ("sf", "nyc")[i % 2], 1, float(i)) for i in range(6)]), path, OPTS)
    hoodie.write(trips([("u0", "sf", 2, 10.0)]), path, OPTS)  # sf's slice gets a log: no small-file merges there
    before = data_files(path)

    def crash(self, *args, **kwargs):
        raise RuntimeError("writer died before completing")

    monkeypatch.setattr(WriteTransaction, "commit", crash)
    monkeypatch.setattr(WriteTransaction, "abort", lambda self: None)  # nobody cleans up: a crash
    with pytest.raises(RuntimeError, match="writer died"):
        hoodie.write(trips([("u2", "sf", 5, -1.0), ("n1", "sea", 1, 7.0), ("n2", "sea", 1, 8.0)]), path, OPTS)
    monkeypatch.undo()
    (failed,) = HoodieTable.open(path).timeline.pending()
    assert failed.action == "deltacommit"
    written = {f: s for f, s in data_files(path).items() if f not in before}
    hoodie.write(trips([("z", "nyc", 1, 9.0)]), path, OPTS)
    table = HoodieTable.open(path)
    (rb,) = table.timeline.completed(["rollback"])
    assert not table.timeline.pending() and not table.timeline.contains(failed.timestamp)
    return {"path": path, "failed": failed, "rollback": rb.timestamp, "written": written, "before": before}


def test_rollback_metadata_names_the_failed_instant_and_its_files(rolled_back) -> None:
    path, failed, rb, written = rolled_back["path"], rolled_back["failed"], rolled_back["rollback"], rolled_back["written"]
    failed_bases = {f for f in written if BASE_RE.match(os.path.basename(f))}
    failed_logs = {f: s for f, s in written.items() if LOG_RE.match(os.path.basename(f))}
    assert {os.path.basename(os.path.dirname(f)) for f in failed_bases} == {"sea"}, "the inserts made base files in sea"
    assert {os.path.basename(os.path.dirname(f)) for f in failed_logs} == {"sf"}, "the update of u2 made a log file in sf"

    schema, records = decode(Path(path) / ".hoodie" / f"{rb}.rollback")
    assert schema["name"] == "org.apache.hudi.avro.model.HoodieRollbackMetadata"
    (meta,) = records
    assert meta["startRollbackTime"] == rb
    assert meta["commitsRollback"] == [failed.timestamp]
    assert meta["instantsRollback"] == [{"commitTime": failed.timestamp, "action": "deltacommit"}]
    assert meta["version"] == 1
    assert meta["totalFilesDeleted"] == len(failed_bases) >= 1
    pm = meta["partitionMetadata"]
    assert set(pm) == {"sea", "sf"}
    assert all(pm[p]["partitionPath"] == p for p in pm)
    assert pm["sea"]["successDeleteFiles"] and set(pm["sea"]["successDeleteFiles"]) == failed_bases
    assert pm["sf"]["successDeleteFiles"] == []
    assert all(v["failedDeleteFiles"] == [] for v in pm.values())
    assert not any(os.path.exists(f) for f in failed_bases), "the deleted files are gone"
    # the failed write's log file stays, neutralised by a rollback command block appended as
    # the next log version of the same slice
    assert pm["sf"]["logFilesFromFailedCommit"] == failed_logs
    ((failed_log, _),) = failed_logs.items()
    (command_log, command_size) = next(iter(pm["sf"]["rollbackLogFiles"].items()))
    assert len(pm["sf"]["rollbackLogFiles"]) == 1
    fm, cm = LOG_RE.match(os.path.basename(failed_log)), LOG_RE.match(os.path.basename(command_log))
    assert (cm.group(1), cm.group(2)) == (fm.group(1), fm.group(2))
    assert int(cm.group(3)) == int(fm.group(3)) + 1
    assert os.path.getsize(command_log) == command_size
    assert not pm["sea"]["rollbackLogFiles"] and not pm["sea"]["logFilesFromFailedCommit"]

    # the plan saved before the rollback ran names the same instant
    plan_schema, (plan,) = decode(Path(path) / ".hoodie" / f"{rb}.rollback.requested")
    assert plan_schema["name"] == "org.apache.hudi.avro.model.HoodieRollbackPlan"
    assert plan["instantToRollback"] == {"commitTime": failed.timestamp, "action": "deltacommit"}
    assert {f for r in plan["RollbackRequests"] for f in r["filesToBeDeleted"]} == failed_bases
    assert {f for r in plan["RollbackRequests"] for f in (r["logBlocksToBeDeleted"] or {})} == set(failed_logs)
    rows = sorted((r["uuid"], r["ts"]) for r in hoodie.read(path).to_pylist())
    assert ("u2", 1) in rows and ("z", 1) in rows
    assert not {("n1", 1), ("n2", 1), ("u2", 5)} & set(rows), "nothing of the failed write is visible"


def test_rollback_schemas_equal_apache_hudis(rolled_back, conformance_table) -> None:
    """v6_nonpartitioned_rollback holds a rollback Apache Hudi (0.14) wrote: hoodie's
    rollback plan and metadata have the same writer schemas, Java's annotations aside."""
    java = Path(conformance_table("sample_table/mor/parquet/v6_nonpartitioned_rollback")) / ".hoodie"
    (java_meta,) = java.glob("*.rollback")
    (java_plan,) = java.glob("*.rollback.requested")
    hoodie_dir = Path(rolled_back["path"]) / ".hoodie"
    rb = rolled_back["rollback"]
    assert strip_java(decode(hoodie_dir / f"{rb}.rollback")[0]) == strip_java(decode(java_meta)[0])
    assert strip_java(decode(hoodie_dir / f"{rb}.rollback.requested")[0]) == strip_java(decode(java_plan)[0])
