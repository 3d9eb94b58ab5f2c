"""Rollback, clean, savepoint, restore and requested-replace instants decode once, in the
timeline, to typed records: each encodes to the record (and writer schema) hoodie wrote
before as a dict, Apache Hudi's own rollback files decode through them, and an instant
file that holds no Avro record stops every reader, service and writer with a
FormatError naming the file."""
from __future__ import annotations

import io
from collections.abc import Callable
from pathlib import Path
from typing import Any

import fastavro
import pytest

from hoodie.errors import FormatError
from hoodie.services.cleaning import CleanSettings, clean, run_clean
from hoodie.services.restore import restore_to, resume_restore
from hoodie.services.savepoint import create_savepoint, list_savepoints
from hoodie.table.table import HoodieTable
from hoodie.timeline import Action, Instant, State
from hoodie.timeline import avro_metadata as avro
from hoodie.timeline.action_metadata import CleanerPlan, CleanMetadata, CleanPartitionMetadata, RequestedReplaceMetadata, SavepointInfo
from hoodie.timeline.rollback_metadata import (
    RestoreMetadata,
    RestorePlan,
    RollbackMetadata,
    RollbackPartitionMetadata,
    RollbackPlan,
    RollbackRequest,
)

T1, T2, RB = "20240101000000000", "20240102000000000", "20240103000000000"
BASE = "/t"


def read(data: bytes) -> tuple[dict[str, Any], dict[str, Any]]:
    reader = fastavro.reader(io.BytesIO(data))
    (record,) = list(reader)
    return reader.writer_schema, record


def same_as_before(encoded: bytes, schema: dict[str, Any], record: dict[str, Any]) -> None:
    """``encoded`` holds what ``avro.encode(schema, record)`` (the dicts hoodie wrote
    before) holds, under the same writer schema."""
    assert read(encoded) == read(avro.encode(schema, record))


def test_rollback_records_encode_what_was_written_before_and_decode_back() -> None:
    failed = Instant(T1, Action.DELTA_COMMIT, State.INFLIGHT)
    requests = (
        RollbackRequest("p", files_to_delete=(f"{BASE}/p/f1_0-1-0_{T1}.parquet",)),
        RollbackRequest("q", "f2", T2, (), {f"{BASE}/q/.f2_{T2}.log.1_0-1-0": 10}),
    )
    plan = RollbackPlan(failed, requests)
    same_as_before(plan.encode(), avro.ROLLBACK_PLAN, {
        "instantToRollback": {"commitTime": T1, "action": "deltacommit"},
        "RollbackRequests": [
            {"partitionPath": "p", "fileId": None, "latestBaseInstant": None,
             "filesToBeDeleted": [f"{BASE}/p/f1_0-1-0_{T1}.parquet"], "logBlocksToBeDeleted": {}},
            {"partitionPath": "q", "fileId": "f2", "latestBaseInstant": T2,
             "filesToBeDeleted": [], "logBlocksToBeDeleted": {f"{BASE}/q/.f2_{T2}.log.1_0-1-0": 10}},
        ],
        "version": 1,
    })
    assert RollbackPlan.from_avro(avro.decode(plan.encode(), "plan"), BASE, RB) == plan

    partitions = {
        "p": RollbackPartitionMetadata("p", (f"{BASE}/p/f1_0-1-0_{T1}.parquet",)),
        "q": RollbackPartitionMetadata("q", (), (), {f"{BASE}/q/.f2_{T2}.log.2_1-0-1": 20}, {f"{BASE}/q/.f2_{T2}.log.1_0-1-0": 10}),
    }
    meta = RollbackMetadata.of(RB, failed, partitions, 5)
    old = {
        "startRollbackTime": RB, "timeTakenInMillis": 5, "totalFilesDeleted": 1, "commitsRollback": [T1],
        "partitionMetadata": {
            "p": {"partitionPath": "p", "successDeleteFiles": [f"{BASE}/p/f1_0-1-0_{T1}.parquet"], "failedDeleteFiles": [],
                  "rollbackLogFiles": {}, "logFilesFromFailedCommit": {}},
            "q": {"partitionPath": "q", "successDeleteFiles": [], "failedDeleteFiles": [],
                  "rollbackLogFiles": {f"{BASE}/q/.f2_{T2}.log.2_1-0-1": 20}, "logFilesFromFailedCommit": {f"{BASE}/q/.f2_{T2}.log.1_0-1-0": 10}},
        },
        "version": 1, "instantsRollback": [{"commitTime": T1, "action": "deltacommit"}],
    }
    same_as_before(meta.encode(), avro.ROLLBACK_METADATA, old)
    decoded = RollbackMetadata.from_avro(avro.decode(meta.encode(), "rollback"), "rollback")
    assert decoded.commits_rollback == (T1,) and decoded.partition_metadata == partitions and decoded.deleted_files() == [f"{BASE}/p/f1_0-1-0_{T1}.parquet"]

    undone = Instant(T2, Action.COMMIT, State.COMPLETED)
    restore_plan = RestorePlan(T1, (undone,))
    same_as_before(
        restore_plan.encode(), avro.RESTORE_PLAN,
        {"instantsToRollback": [{"commitTime": T2, "action": "commit"}], "version": 2, "savepointToRestoreTimestamp": T1},
    )
    assert RestorePlan.from_avro(avro.decode(restore_plan.encode(), "plan"), "plan") == restore_plan
    restore = RestoreMetadata(RB, (undone,), {T2: (RollbackMetadata.of(RB, undone, {}, 0),)}, 7)
    same_as_before(restore.encode(), avro.RESTORE_METADATA, {
        "startRestoreTime": RB, "timeTakenInMillis": 7, "instantsToRollback": [T2],
        "hoodieRestoreMetadata": {T2: [{"startRollbackTime": RB, "timeTakenInMillis": 0, "totalFilesDeleted": 0, "commitsRollback": [T2],
                                        "partitionMetadata": {}, "version": 1, "instantsRollback": [{"commitTime": T2, "action": "commit"}]}]},
        "version": 1, "restoreInstantInfo": [{"commitTime": T2, "action": "commit"}], "extraMetadata": None,
    })
    assert RestoreMetadata.from_avro(avro.decode(restore.encode(), "restore"), "restore") == restore


def test_clean_savepoint_and_replace_records_encode_what_was_written_before_and_decode_back() -> None:
    earliest = Instant(T1, Action.COMMIT, State.COMPLETED)
    plan = CleanerPlan("KEEP_LATEST_COMMITS", earliest, T2, {"p": (f"{BASE}/p/a.parquet",), "q": ()}, {"k": "v"})
    same_as_before(plan.encode(), avro.CLEANER_PLAN, {
        "earliestInstantToRetain": {"timestamp": T1, "action": "commit", "state": "COMPLETED"}, "lastCompletedCommitTimestamp": T2,
        "policy": "KEEP_LATEST_COMMITS", "filesToBeDeletedPerPartition": {}, "version": 2,
        "filePathsToBeDeletedPerPartition": {"p": [{"filePath": f"{BASE}/p/a.parquet", "isBootstrapBaseFile": False}]},
        "partitionsToBeDeleted": [], "extraMetadata": {"k": "v"},
    })
    decoded = CleanerPlan.from_avro(avro.decode(plan.encode(), "plan"), BASE, RB)
    assert decoded == CleanerPlan(plan.policy, earliest, T2, {"p": (f"{BASE}/p/a.parquet",)}, {"k": "v"})  # empty partitions are not saved

    clean_meta = CleanMetadata(RB, T1, T2, {"p": CleanPartitionMetadata("p", "KEEP_LATEST_COMMITS", ("a.parquet",), ("a.parquet",), ())}, 3, {"k": "v"})
    same_as_before(clean_meta.encode(), avro.CLEAN_METADATA, {
        "startCleanTime": RB, "timeTakenInMillis": 3, "totalFilesDeleted": 1, "earliestCommitToRetain": T1, "lastCompletedCommitTimestamp": T2,
        "partitionMetadata": {"p": {"partitionPath": "p", "policy": "KEEP_LATEST_COMMITS", "deletePathPatterns": ["a.parquet"],
                                    "successDeleteFiles": ["a.parquet"], "failedDeleteFiles": [], "isPartitionDeleted": False}},
        "version": 2, "bootstrapPartitionMetadata": {}, "extraMetadata": {"k": "v"},
    })
    assert CleanMetadata.from_avro(avro.decode(clean_meta.encode(), "clean"), "clean") == clean_meta

    savepoint = SavepointInfo(T1, "me", 42, "why", {"p": ("a.parquet", ".b.log.1_0-1-0")})
    same_as_before(savepoint.encode(), avro.SAVEPOINT_METADATA, {
        "savepointedBy": "me", "savepointedAt": 42, "comments": "why",
        "partitionMetadata": {"p": {"partitionPath": "p", "savepointDataFile": ["a.parquet", ".b.log.1_0-1-0"]}}, "version": 1,
    })
    assert SavepointInfo.from_avro(avro.decode(savepoint.encode(), "savepoint"), T1) == savepoint

    replace = RequestedReplaceMetadata("INSERT_OVERWRITE")
    same_as_before(replace.encode(), avro.REQUESTED_REPLACE_METADATA, {"operationType": "INSERT_OVERWRITE", "extraMetadata": {}, "version": 1})
    assert not RequestedReplaceMetadata.from_avro(avro.decode(replace.encode(), "r"), "r").is_clustering


def test_apache_hudis_rollbacks_decode_to_typed_records(conformance_table) -> None:
    """Rollbacks Apache Hudi 0.14 (table version 6) and 1.x (version 9) wrote."""
    for name in ("sample_table/mor/parquet/v6_nonpartitioned_rollback", "sample_table/mor/avro/v9_nonpartitioned_rollback"):
        table = HoodieTable.open(str(conformance_table(name)))
        (rb,) = table.timeline.completed([Action.ROLLBACK])
        meta = table.timeline.rollback_metadata(rb)
        assert meta.start_rollback_time == rb.timestamp and len(meta.commits_rollback) == 1
        assert [i.timestamp for i in meta.instants_rollback] == list(meta.commits_rollback)
        assert set(meta.partition_metadata) == {""} and meta.total_files_deleted == len(meta.deleted_files()) == 1
        assert table.timeline.rolled_back() == frozenset(meta.commits_rollback)
        java = avro.decode(table.timeline.read_content(rb), "java")
        assert read(meta.encode())[1] == java, "the typed record keeps every field Apache Hudi wrote"


def _damage(path: Path) -> None:
    """Write bytes that are no Avro container over the file (or as a pending clean's plan)."""
    path.write_bytes(b"Obj\x01 not an Avro container")


def _table_with_every_action(kit) -> tuple[HoodieTable, dict[str, Path]]:
    """A copy-on-write table with a savepoint, a clean, a rollback and a restore."""
    first = kit.write(["k1", "k2"], "p", 1)
    create_savepoint(kit.open(), first)
    kit.write(["k1"], "p", 2)
    kit.write(["k1"], "p", 3)
    kit.write(["k2"], "p", 4)
    clean(kit.open(), CleanSettings(commits_retained=1))
    table = kit.open()
    failed = table.timeline.new_instant_time()
    timeline = Path(kit.path) / ".hoodie"
    (timeline / f"{failed}.commit.requested").write_bytes(b"")
    (timeline / f"{failed}.inflight").write_bytes(b"")
    kit.write(["k3"], "p", 5)  # rolls the failed write back
    restore_to(kit.open(), first)
    table = kit.open()
    files = {}
    for action in ("savepoint", "clean", "rollback", "restore"):
        (inst,) = table.timeline.completed([action])
        files[action] = timeline / inst.file_name()
    files["clean.requested"] = timeline / f"{table.timeline.new_instant_time()}.clean.requested"  # a clean left pending
    return table, files


def _clean_after_writes(kit) -> None:
    for ts in (7, 8, 9):
        kit.write(["k1"], "p", ts, **{"hoodie.clean.automatic": "false"})
    clean(kit.open(), CleanSettings(commits_retained=1))  # incremental: after the last clean


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        (lambda doc: doc.update(policy="KEEP_NOTHING"), "names the policy 'KEEP_NOTHING', which is no cleaner policy"),
        (lambda doc: doc["earliestInstantToRetain"].update(timestamp="../x"), "names the instant '../x'"),
        (lambda doc: doc["earliestInstantToRetain"].update(state="DONE"), "has the state 'DONE', which is no instant state"),
    ],
)
def test_a_cleaner_plan_of_the_wrong_values_is_refused_naming_them(cow, change: Callable[[dict[str, Any]], None], expected: str) -> None:
    for ts in (1, 2, 3):
        cow.write(["k1"], "p", ts)
    table = cow.open()
    earliest = table.timeline.completed_writes()[-1]
    doc = CleanerPlan("KEEP_LATEST_COMMITS", earliest, earliest.timestamp, {}).to_avro()
    change(doc)
    instant = table.timeline.new_instant_time()
    (Path(cow.path) / ".hoodie" / f"{instant}.clean.requested").write_bytes(avro.encode(avro.CLEANER_PLAN, doc))
    before = cow.data_files()
    with pytest.raises(FormatError, match=f"the plan of clean {instant}"):
        try:
            run_clean(cow.open())
        except FormatError as e:
            assert expected in str(e)
            raise
    assert cow.data_files() == before


@pytest.mark.parametrize(
    ("action", "door"),
    [
        ("clean.requested", lambda kit: run_clean(kit.open())),
        ("savepoint", lambda kit: list_savepoints(kit.open())),
        ("clean", lambda kit: _clean_after_writes(kit)),
        ("rollback", lambda kit: kit.open().timeline.rolled_back()),
    ],
)
def test_an_instant_file_that_is_no_avro_is_named(cow, action: str, door: Callable[[Any], Any]) -> None:
    _, files = _table_with_every_action(cow)
    _damage(files[action])
    with pytest.raises(FormatError, match=rf"\.hoodie/{files[action].name} cannot be decoded as Avro"):
        door(cow)


def test_a_restore_plan_that_is_no_avro_is_named_and_nothing_is_undone(cow) -> None:
    first = cow.write(["k1"], "p", 1)
    create_savepoint(cow.open(), first)
    cow.write(["k1"], "p", 2)
    restore = cow.open().timeline.new_instant_time()
    requested = Path(cow.path) / ".hoodie" / f"{restore}.restore.requested"
    requested.write_bytes(b"")
    before = cow.data_files()
    with pytest.raises(FormatError, match=rf"\.hoodie/{requested.name} cannot be decoded as Avro"):
        resume_restore(cow.open())
    assert cow.data_files() == before
