"""A hostile table cannot reach out either: commit metadata, clean, compaction, rollback and
restore plans, savepoints, timeline-server markers and ``hoodie.properties`` that name a
partition or file outside the table's base path make readers, services and the next writer
stop with an error naming the instant (or file) and the path. Nothing outside the table is
read, listed, written or deleted: the neighbouring table ``other`` and the folders around
the table stay byte for byte as they were."""
from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from hostile_paths import tree_state
from table_options import KEY_PART_OPTIONS, key_part_batch
from typer.testing import CliRunner

import hoodie
from hoodie.cli.main import app
from hoodie.errors import FormatError, UnsafePathError
from hoodie.services.cleaning import CleanSettings, clean, plan_clean
from hoodie.services.compaction import run_compaction
from hoodie.services.restore import resume_restore
from hoodie.table.table import HoodieTable
from hoodie.timeline import avro_metadata as avro
from hoodie.timeline.compaction_plan import CompactionOperation, CompactionPlan

OPTIONS = KEY_PART_OPTIONS
OUTSIDE = "../other/p"

batch = key_part_batch


def write(path: Path, keys: list[str], ts: int, table_type: str = "COPY_ON_WRITE") -> str:
    opts = {**OPTIONS, "hoodie.table.name": path.name, "hoodie.datasource.write.table.type": table_type}
    return hoodie.write(batch(keys, ts), str(path), opts)


class Neighbourhood:
    """``work/a`` (the table made hostile) beside ``work/other`` (partition ``p``)."""

    def __init__(self, root: Path, table_type: str) -> None:
        self.root = root
        self.a = root / "work" / "a"
        self.other = root / "work" / "other"
        self.table_type = table_type
        write(self.other, ["o1", "o2"], 1)
        self.commits = [write(self.a, ["k1", "k2"], 1, table_type), write(self.a, ["k1"], 2, table_type)]

    @property
    def other_file(self) -> Path:
        return next((self.other / "p").glob("*.parquet"))

    @property
    def timeline(self) -> Path:
        return self.a / ".hoodie"

    def new_instant(self) -> str:
        return HoodieTable.open(str(self.a)).timeline.new_instant_time()

    def outside(self) -> dict[str, tuple[int, str]]:
        """Everything under the test's root but the table's own metadata folder."""
        return {k: v for k, v in tree_state(self.root).items() if not k.startswith("work/a/.hoodie")}

    def latest_commit_file(self) -> Path:
        suffix = ".commit" if self.table_type == "COPY_ON_WRITE" else ".deltacommit"
        return self.timeline / f"{self.commits[-1]}{suffix}"


@pytest.fixture(params=["COPY_ON_WRITE", "MERGE_ON_READ"], ids=["cow", "mor"])
def hood(tmp_path: Path, request: pytest.FixtureRequest) -> Neighbourhood:
    return Neighbourhood(tmp_path, request.param)


def refused(call: Callable[[], object], *expected: str, error: type[Exception] = UnsafePathError) -> str:
    with pytest.raises(error) as info:
        call()
    message = str(info.value)
    for text in expected:
        assert text in message, message
    return message


def cli(*args: str) -> str:
    result = CliRunner().invoke(app, list(args))
    assert result.exit_code != 0, result.output
    return result.output


def tamper_commit(hood: Neighbourhood, change: Callable[[dict], None]) -> str:
    path = hood.latest_commit_file()
    doc = json.loads(path.read_bytes())
    change(doc)
    path.write_bytes(json.dumps(doc).encode())
    return hood.commits[-1]


def _partition_outside(doc: dict) -> None:
    doc["partitionToWriteStats"] = {OUTSIDE: [{**s, "partitionPath": OUTSIDE} for s in doc["partitionToWriteStats"]["p"]]}


def _file_outside(doc: dict) -> None:
    for s in doc["partitionToWriteStats"]["p"]:
        s["path"] = "p/../../other/p/" + s["path"].rsplit("/", 1)[-1]


def _replaced_outside(doc: dict) -> None:
    doc["partitionToReplaceFileIds"] = {OUTSIDE: ["f1"]}


def _log_file_outside(doc: dict) -> None:
    for s in doc["partitionToWriteStats"]["p"]:
        s["logFiles"] = ["../../other/p/x.log"]


@pytest.mark.parametrize("change", [_partition_outside, _file_outside, _replaced_outside, _log_file_outside], ids=lambda f: f.__name__.strip("_"))
def test_commit_metadata_naming_paths_outside_stops_readers_services_and_writers(hood: Neighbourhood, change: Callable[[dict], None]) -> None:
    instant = tamper_commit(hood, change)
    before = hood.outside()
    a = str(hood.a)
    source = f"commit metadata of instant {instant}"
    refused(lambda: hoodie.read(a), source)
    refused(lambda: write(hood.a, ["k3"], 3, hood.table_type), source)
    refused(lambda: clean(HoodieTable.open(a), CleanSettings(commits_retained=1)), source)
    assert source in cli("clean", a, "-o", "hoodie.cleaner.commits.retained=1")
    assert source in cli("validate", a)
    assert source in cli("read", a)
    assert hood.outside() == before


def test_clean_plan_deleting_a_file_of_another_table_is_refused(hood: Neighbourhood) -> None:
    instant = hood.new_instant()
    victim = str(hood.other_file)
    plan = {
        "earliestInstantToRetain": None, "lastCompletedCommitTimestamp": hood.commits[-1], "policy": "KEEP_LATEST_COMMITS",
        "filesToBeDeletedPerPartition": None, "version": 2, "partitionsToBeDeleted": [], "extraMetadata": {},
        "filePathsToBeDeletedPerPartition": {"p": [{"filePath": victim, "isBootstrapBaseFile": False}]},
    }
    (hood.timeline / f"{instant}.clean.requested").write_bytes(avro.encode(avro.CLEANER_PLAN, plan))
    before = hood.outside()
    expected = (f"the plan of clean {instant}", victim)
    refused(lambda: clean(HoodieTable.open(str(hood.a))), *expected)
    output = cli("clean", str(hood.a))
    assert all(text in output for text in expected), output
    # the same file named through a partition outside the table, and as a file name
    plan["filePathsToBeDeletedPerPartition"] = {OUTSIDE: [{"filePath": victim, "isBootstrapBaseFile": False}]}
    (hood.timeline / f"{instant}.clean.requested").write_bytes(avro.encode(avro.CLEANER_PLAN, plan))
    refused(lambda: clean(HoodieTable.open(str(hood.a))), f"the plan of clean {instant}", OUTSIDE)
    plan["filePathsToBeDeletedPerPartition"] = None
    plan["filesToBeDeletedPerPartition"] = {"p": [f"../../other/p/{hood.other_file.name}"]}
    (hood.timeline / f"{instant}.clean.requested").write_bytes(avro.encode(avro.CLEANER_PLAN, plan))
    refused(lambda: clean(HoodieTable.open(str(hood.a))), f"the plan of clean {instant}", "../../other/p")
    assert hood.outside() == before
    assert hood.other_file.exists()


def test_clean_plan_of_java_records_paths_with_a_scheme(tmp_path: Path) -> None:
    """Java writes ``file:/...`` paths: such a plan of this table's own files still runs."""
    hood = Neighbourhood(tmp_path, "COPY_ON_WRITE")
    write(hood.a, ["k1"], 3, hood.table_type)
    write(hood.a, ["k1"], 4, hood.table_type)
    table = HoodieTable.open(str(hood.a))
    rows = hoodie.read(str(hood.a)).sort_by("key").to_pylist()
    plan = plan_clean(table, CleanSettings(commits_retained=1))
    assert plan.should_run
    doc = plan.saved().to_avro()
    doc["filePathsToBeDeletedPerPartition"] = {
        p: [{"filePath": "file:" + i["filePath"], "isBootstrapBaseFile": False} for i in infos] for p, infos in doc["filePathsToBeDeletedPerPartition"].items()
    }
    instant = table.timeline.new_instant_time()
    (hood.timeline / f"{instant}.clean.requested").write_bytes(avro.encode(avro.CLEANER_PLAN, doc))
    result = clean(HoodieTable.open(str(hood.a)), CleanSettings(commits_retained=1))
    assert result.total_deleted == plan.file_count
    assert hoodie.read(str(hood.a)).sort_by("key").to_pylist() == rows


@pytest.mark.parametrize("where", ["partition", "base-file", "log-file", "file-id"])
def test_compaction_plan_naming_paths_outside_is_refused(tmp_path: Path, where: str) -> None:
    hood = Neighbourhood(tmp_path, "MERGE_ON_READ")
    op = {"partition_path": "p", "file_id": "f1", "base_instant": hood.commits[0], "base_file": None, "log_files": ()}
    op.update({
        "partition": {"partition_path": OUTSIDE},
        "base-file": {"base_file": f"../../other/p/{hood.other_file.name}"},
        "log-file": {"log_files": ("../../other/p/.f1_1.log.1_0-1-0",)},
        "file-id": {"file_id": "../other"},
    }[where])
    instant = hood.new_instant()
    (hood.timeline / f"{instant}.compaction.requested").write_bytes(CompactionPlan((CompactionOperation(**op),)).encode())
    before = hood.outside()
    source = f"the compaction plan of instant {instant}"
    refused(lambda: run_compaction(HoodieTable.open(str(hood.a))), source)
    assert source in cli("compaction", "run", str(hood.a))
    assert source in cli("compaction", "show", str(hood.a))
    assert hood.outside() == before


def test_rollback_plan_deleting_a_file_of_another_table_stops_the_next_writer(hood: Neighbourhood) -> None:
    victim = str(hood.other_file)
    failed = hood.new_instant()
    (hood.timeline / f"{failed}.commit.requested").write_bytes(b"")
    (hood.timeline / f"{failed}.inflight").write_bytes(b"")
    for listed in (victim, f"file:{hood.a}/p/../../other/p/{hood.other_file.name}"):
        rb = hood.new_instant()
        plan = {
            "instantToRollback": {"commitTime": failed, "action": "commit"},
            "RollbackRequests": [{"partitionPath": "p", "fileId": None, "latestBaseInstant": None, "filesToBeDeleted": [listed], "logBlocksToBeDeleted": {}}],
            "version": 1,
        }
        requested = hood.timeline / f"{rb}.rollback.requested"
        requested.write_bytes(avro.encode(avro.ROLLBACK_PLAN, plan))
        before = hood.outside()
        refused(lambda: write(hood.a, ["k3"], 3, hood.table_type), f"the plan of rollback {rb}", listed)
        assert hood.outside() == before
        requested.unlink()
    assert hood.other_file.exists()


def test_rollback_plan_naming_an_instant_that_is_a_path_is_refused(hood: Neighbourhood) -> None:
    rb = hood.new_instant()
    plan = {"instantToRollback": {"commitTime": "../../../other", "action": "commit"}, "RollbackRequests": [], "version": 1}
    (hood.timeline / f"{rb}.rollback.requested").write_bytes(avro.encode(avro.ROLLBACK_PLAN, plan))
    before = hood.outside()
    refused(lambda: write(hood.a, ["k3"], 3, hood.table_type), f"the plan of rollback {rb}", "'../../../other'", error=FormatError)
    assert hood.outside() == before


def test_timeline_server_markers_naming_files_outside_stop_the_rollback(hood: Neighbourhood) -> None:
    failed = hood.new_instant()
    (hood.timeline / f"{failed}.commit.requested").write_bytes(b"")
    (hood.timeline / f"{failed}.inflight").write_bytes(b"")
    markers = hood.timeline / ".temp" / failed
    markers.mkdir(parents=True)
    (markers / "MARKERS.type").write_text("TIMELINE_SERVER_BASED")
    (markers / "MARKERS0").write_text(f"{OUTSIDE}/{hood.other_file.name}.marker.CREATE\n")
    before = hood.outside()
    refused(lambda: write(hood.a, ["k3"], 3, hood.table_type), f"a marker of instant {failed}", OUTSIDE)
    assert hood.outside() == before
    assert hood.other_file.exists()


def test_restore_plan_naming_an_instant_that_is_a_path_stops_the_next_writer(hood: Neighbourhood) -> None:
    restore = hood.new_instant()
    plan = {"instantsToRollback": [{"commitTime": "../../other", "action": "commit"}], "version": 1, "savepointToRestoreTimestamp": hood.commits[0]}
    (hood.timeline / f"{restore}.restore.requested").write_bytes(avro.encode(avro.RESTORE_PLAN, plan))
    before = hood.outside()
    expected = (f"the plan of restore {restore}", "'../../other'")
    refused(lambda: resume_restore(HoodieTable.open(str(hood.a))), *expected, error=FormatError)
    refused(lambda: write(hood.a, ["k3"], 3, hood.table_type), *expected, error=FormatError)
    assert hood.outside() == before


def test_savepoint_naming_a_partition_outside_is_refused(hood: Neighbourhood) -> None:
    savepoint = hood.commits[0]
    meta = {"savepointedBy": "x", "savepointedAt": 0, "comments": "", "version": 1,
            "partitionMetadata": {OUTSIDE: {"partitionPath": OUTSIDE, "savepointDataFile": [hood.other_file.name]}}}
    (hood.timeline / f"{savepoint}.savepoint").write_bytes(avro.encode(avro.SAVEPOINT_METADATA, meta))
    before = hood.outside()
    refused(lambda: clean(HoodieTable.open(str(hood.a))), f"savepoint {savepoint}", OUTSIDE)
    assert f"savepoint {savepoint}" in cli("savepoint", "list", str(hood.a))
    assert hood.outside() == before


def test_archive_folder_outside_the_table_is_refused(hood: Neighbourhood) -> None:
    props = hood.timeline / "hoodie.properties"
    props.write_text(props.read_text() + "hoodie.archivelog.folder=../../other\n")
    for ts in (3, 4, 5):
        write(hood.a, ["k1"], ts, hood.table_type)
    before = hood.outside()
    expected = ("hoodie.properties", "'../../other'")
    output = cli("archive", str(hood.a), "-o", "hoodie.keep.min.commits=2", "-o", "hoodie.keep.max.commits=3", "-o", "hoodie.cleaner.commits.retained=1")
    assert all(text in output for text in expected), output
    incremental = {"hoodie.datasource.query.type": "incremental", "hoodie.datasource.read.begin.instanttime": "000"}
    refused(lambda: hoodie.read(str(hood.a), incremental), *expected)
    assert hood.outside() == before

